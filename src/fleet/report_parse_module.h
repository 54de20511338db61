// Where the binary finds gpudoctor_fleet_json.so (fleet_json_module.h) and whether it loaded.
// report_parse.h's functions are defined in report_parse_module.cc as forwarders into the module,
// which is loaded on the first call and kept for the life of the process.
// Thread-safe: the first call loads once (concurrent callers wait for it).
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace gpudoctor::fleet {

// The paths tried, in order: $GPUDOCTOR_MODULE_DIR/gpudoctor_fleet_json.so when that variable is
// set, then the directory of the executable ("$ORIGIN", the build tree), then
// "$ORIGIN/../lib/gpudoctor" (the installed layout: <prefix>/bin and <prefix>/lib/gpudoctor).
// "$ORIGIN" is left to dlopen, which expands it to the directory of the executable's real file
// (symbolic links resolved), so a binary reached through a link finds the module beside it.
std::vector<std::string> FleetJsonModuleCandidates();

// What "$ORIGIN" stands for, for error messages only (the started path, resolved); "" unknown.
std::string ExecutableDirForMessages();

// OK once the module is loaded and matches this binary; otherwise an error naming every path
// tried and why each failed (absent, a missing dependency such as libsimdjson.so.14, another
// build's module), so `fleet` can say what to install. The result of the first call is kept.
Status LoadFleetJsonModule();

}  // namespace gpudoctor::fleet
