// Findings for a human reader in the current language (core/i18n.h): in Chinese each summary is
// prefixed with the catalogue title's translation ("【显存将满】GPU 0: ..."); the summary itself is
// built by a rule with numbers and names and stays English, next steps are translated when the
// text report renders them. In English the findings are returned unchanged. JSON, metrics and the
// history always carry the English findings. Thread-safe.
#pragma once

#include <vector>

#include "findings/finding.h"

namespace gpudoctor {

std::vector<Finding> LocalizeFindings(std::vector<Finding> findings);

}  // namespace gpudoctor
