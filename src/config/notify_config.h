// [[notify.webhook]], [[notify.exec]], [[notify.alertmanager]] (issue 10): arrays of tables that
// the flat config schema does not describe. Parsed into Settings::notify (validated: kind, url
// scheme, argv with an absolute program, min_severity info|warn|crit, timeout_s 0-600).
// Unknown keys inside an entry are warnings; a wrong type or value is an error "FILE:LINE: ...".
// Not thread-safe (config loading, main thread).
#pragma once

#include <toml++/toml.h>

#include <string>
#include <vector>

#include "core/settings.h"
#include "core/status.h"

namespace gpudoctor {

Status ApplyNotifyConfig(const toml::table& root, const std::string& source, Settings& settings,
                         std::vector<std::string>& warnings);

}  // namespace gpudoctor
