// GET /api/v1/status: the last tick's report, exactly `check --json` (what the rules saw this
// tick), plus "open_findings": the lifecycle's open episodes (opened, acknowledged, how long),
// which is what the dashboard and `top` show as open: an Xid that needs a reset stays listed after
// the log went quiet. Pure function of the tick; thread-safe.
#pragma once

#include <string>

#include "watch/watch_types.h"

namespace gpudoctor {

// open_findings[]: {"key","state","finding",...} as TrackedFindingToJson, open ones only,
// worst severity first, each with "open_s" (seconds since it opened at the tick's time).
std::string RenderStatusJson(const TickResult& tick);

}  // namespace gpudoctor
