// GET /api/v1/why?job=NAME&since=24h&until=T&at=T: `gpudoctor why` as JSON (why/why.h), read
// from the history on a worker thread. Parameters in the CLI's time grammar (core/time_spec.h);
// since defaults to 24 h ago, until to now; all optional; unknown or repeated ones are errors.
#pragma once

#include <map>
#include <string>

#include "core/status.h"
#include "serve/http_loop.h"
#include "store/history_store.h"
#include "why/why_load.h"

namespace gpudoctor {

Result<WhyRequest> ParseWhyQuery(const std::multimap<std::string, std::string>& params,
                                 int64_t now_unix_s);

// 200 with WhyToJson; 404 naming an unknown job (and the stored ones); 400 for bad parameters.
HttpResponse ServeWhy(HistoryReader& reader, const WhyRequest& req);

}  // namespace gpudoctor
