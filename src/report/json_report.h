// JSON building blocks shared by every JSON output (check, logs, fleet): findings and probes.
#pragma once

#include <nlohmann/json.hpp>

#include "facts/snapshot.h"
#include "findings/finding.h"

namespace gpudoctor {

nlohmann::ordered_json FindingToJson(const Finding& f);
nlohmann::ordered_json ProbeRecordToJson(const ProbeRecord& p);

}  // namespace gpudoctor
