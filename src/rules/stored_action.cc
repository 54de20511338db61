#include "rules/stored_action.h"

#include "rules/catalogue.h"
#include "rules/xid_action.h"

namespace gpudoctor {

std::optional<int> XidCodeInText(std::string_view text) {
  size_t p = text.find("Xid ");
  if (p == std::string_view::npos) return std::nullopt;
  p += 4;
  int code = 0, digits = 0;
  while (p < text.size() && text[p] >= '0' && text[p] <= '9' && digits < 4) {
    code = code * 10 + (text[p++] - '0');
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  return code;
}

Action ReadFindingAction(std::string_view action_name, std::string_view id,
                         std::optional<int> xid_code, std::string_view summary) {
  if (auto a = ParseAction(action_name)) return *a;
  if (id == "gpu.xid") {
    if (!xid_code) xid_code = XidCodeInText(summary);
    if (xid_code) return XidDefaultAction(*xid_code);
  }
  return ActionOrDefault("", id);
}

}  // namespace gpudoctor
