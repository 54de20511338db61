// `gpudoctor compare good.json [now.json]`: what changed since the node was fast. Two `check
// --json` reports are compared per GPU by serial (else uuid, else bus id) and per host: PCIe link,
// NVLinks up, clocks and their limits, temperatures, power limits, persistence/ECC state, VBIOS,
// driver versions, and findings that are new or gone. After a card swap it says, for each fault,
// whether it followed the card (serial) or stayed with the slot (bus id) or the server (host).
// Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/status.h"

namespace gpudoctor {

struct Comparison {
  nlohmann::ordered_json json;  // {"before","after","host","gpus":[...],"new_findings",...}
  int differences = 0;          // changes that matter (not just load-dependent readings)
};

// Errors: invalid_argument when either document is not a `check --json` report (names which).
Result<Comparison> CompareReports(const nlohmann::json& before, const nlohmann::json& after);

std::string RenderComparisonText(const Comparison& c);

}  // namespace gpudoctor
