// [[notify.webhook]], [[notify.exec]], [[notify.alertmanager]]: arrays of tables that
// the flat config schema does not describe. Parsed into Settings::notify and validated here, at
// load time, never first at delivery (core/notify_target.h): at most kMaxNotifiers entries; URLs
// (scheme, host, port, no whitespace; Alertmanager's without its /api/ path); exec argv (an
// absolute, existing, executable program; device-supplied placeholders only after "--");
// min_severity info|warn|crit; timeout_s 0.001-600.
// Unknown keys inside an entry are warnings; a wrong type or value is an error "FILE:LINE: ...".
// Not thread-safe (config loading, main thread).
#pragma once

#include <string>
#include <vector>

#include "core/settings.h"
#include "core/status.h"
#include "core/toml.h"

namespace gpudoctor {

Status ApplyNotifyConfig(const toml::table& root, const std::string& source, Settings& settings,
                         std::vector<std::string>& warnings);

}  // namespace gpudoctor
