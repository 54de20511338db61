// `check --npd --connect URL` (in cli/: it joins the status check of tui/ and the catalogue of
// rules/ for sched/npd.h): node-problem-detector's rules answered from a running `gpudoctor
// watch` (the one per node) instead of one full check per rule per interval.
//
// FetchWatchFindings asks the watch at base_url, all within `deadline` (connect, both requests
// and their bodies together; never longer): GET /healthz (no token needed) must say the daemon
// is up and fresh (its last tick younger than 3 x its interval), then GET /api/v1/status (with
// the bearer token when there is one; at most kMaxStatusBytes; the document must pass
// CheckStatusDocument). Errors, each naming the URL: io_error (connection refused, HTTP status
// other than 200, a 401 with what to do about the token), timeout (the deadline), unavailable-
// like io_error for a daemon that is starting or stale (with its own reason and the tick's
// age), parse_error (a body that is not the status document). Thread-safe (one HTTP handle per
// request).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "findings/finding.h"

namespace gpudoctor {

// The findings NPD judges from a watch's status document (GET /api/v1/status): every finding of
// the last tick ("findings", what a `check` now would say) and every open episode
// ("open_findings" with state "open": an Xid that needs a reset stays open after the log went
// quiet), one per id + GPU + subject (the tick's copy first). A finding's action is its
// "action" when it parses, else the catalogue's (rules/stored_action.h). Errors: parse_error
// naming the first bad field (`open_findings[2].finding.layer: "gpu" is not a layer`). Pure;
// thread-safe. `doc` should have passed CheckStatusDocument.
Result<std::vector<Finding>> FindingsFromStatus(const nlohmann::json& doc);

Result<std::vector<Finding>> FetchWatchFindings(const std::string& base_url,
                                                const std::string& token, TimePoint deadline);

}  // namespace gpudoctor
