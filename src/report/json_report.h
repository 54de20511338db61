// JSON building blocks shared by every JSON output (check, logs, fleet): findings and probes.
#pragma once

#include <nlohmann/json.hpp>

#include "facts/snapshot.h"
#include "findings/finding.h"
#include "report/report.h"

namespace gpudoctor {

nlohmann::ordered_json FindingToJson(const Finding& f);
nlohmann::ordered_json ProbeRecordToJson(const ProbeRecord& p);
// The `check --json` document as a JSON value (RenderJson dumps it); `watch` adds to it.
nlohmann::ordered_json ReportToJson(const Report& report);
// Dumps a document the way RenderJson does (2-space indent, invalid UTF-8 replaced, newline).
std::string DumpReportJson(const nlohmann::ordered_json& j);

}  // namespace gpudoctor
