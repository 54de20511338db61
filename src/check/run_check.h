// RunCheck: one diagnosis of this host, as `check` prints it: every enabled probe under the
// settings' deadline (counted from `start`, so time spent before, e.g. loading the config,
// counts too), the rules on the snapshot, findings in troubleshooting order, and the duration.
// `check`, `compare` (against now), `bundle` and standalone `top` all run it. Never hangs: the
// probes run under the deadline. Thread-safe (no shared state beyond the settings, read-only).
#pragma once

#include <memory>

#include "core/deadline.h"
#include "core/settings.h"
#include "report/report.h"

namespace gpudoctor {

Report RunCheck(const std::shared_ptr<const Settings>& settings,
                TimePoint start = SteadyClock::now());

}  // namespace gpudoctor
