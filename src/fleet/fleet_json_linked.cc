// report_parse_module.h for builds that link the report parser in (fuzz builds, CMakeLists.txt):
// there is no module to find, and the parser is always there.
#include "fleet/report_parse_module.h"

namespace gpudoctor::fleet {

std::vector<std::string> FleetJsonModuleCandidates() { return {}; }

std::string ExecutableDirForMessages() { return ""; }

Status LoadFleetJsonModule() { return Status::Ok(); }

}  // namespace gpudoctor::fleet
