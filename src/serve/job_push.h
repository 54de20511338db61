// POST /api/v1/job/NAME/step?seconds=S&step=N: a training loop's step mark (job/step_inbox.h),
// answered on the HTTP loop thread (a mutex and a push: no store, no tick). The values travel in
// the query string; the server reads no request bodies. Authentication is the server's (the same
// bearer token as every data path). Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "serve/http_loop.h"

namespace gpudoctor {

// NAME when `path` is /api/v1/job/NAME/step (any NAME characters; validated by the handler).
std::optional<std::string> JobStepPathName(std::string_view path);

// 202 {"job","received_unix_ms"} when queued; 400 for a bad name or query, 404 for a job not in
// the daemon's [[job]] tables.
HttpResponse HandleJobStep(const std::string& job, std::string_view query, int64_t now_unix_ms);

}  // namespace gpudoctor
