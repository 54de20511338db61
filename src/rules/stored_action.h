// The action of a finding read back from another node's report, history or scrape. New inputs
// carry it ("action"); older ones do not, and then it comes from the catalogue by id, except for
// gpu.xid, whose action depends on the Xid code: the code is taken from the evidence ("xid") or
// the summary ("Xid 79"), so an old report's application Xid (13, 31, 43, 45) is never counted
// against a card while its Xid 48 or 79 is. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "findings/finding.h"

namespace gpudoctor {

// First "Xid N" in `text` (case-sensitive "Xid "), or nullopt.
std::optional<int> XidCodeInText(std::string_view text);

// `action_name` when it parses; else for gpu.xid the action of `xid_code` (or of the code in
// `summary`); else the catalogue default for `id` (kWatch for unknown ids).
Action ReadFindingAction(std::string_view action_name, std::string_view id,
                         std::optional<int> xid_code, std::string_view summary);

}  // namespace gpudoctor
