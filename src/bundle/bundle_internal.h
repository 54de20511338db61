// Helpers shared by the bundle's .cc files (not part of the contract).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bundle/bundle.h"
#include "core/json_text.h"

namespace gpudoctor {

inline std::string DumpJson(const nlohmann::ordered_json& j) { return JsonText(j, 2) + "\n"; }

// history/*.json, or a note saying why there is no history.
void AddHistoryMembers(const BundleInputs& in, std::vector<BundleMember>& out,
                       std::vector<std::string>& notes);

}  // namespace gpudoctor
