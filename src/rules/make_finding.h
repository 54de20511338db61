// MakeFinding: the one way rules build a Finding, so every id comes from the catalogue.
#pragma once

#include <string>
#include <string_view>

#include "findings/finding.h"

namespace gpudoctor {

// Builds a finding with layer and default next steps taken from the catalogue entry `id`.
// Aborts on an id that is not in the catalogue (a bug, caught by tests).
Finding MakeFinding(std::string_view id, Severity severity, std::string summary);

}  // namespace gpudoctor
