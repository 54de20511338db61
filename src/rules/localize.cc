#include "rules/localize.h"

#include <string>

#include "core/i18n.h"
#include "rules/catalogue.h"

namespace gpudoctor {

std::vector<Finding> LocalizeFindings(std::vector<Finding> findings) {
  if (!Chinese()) return findings;
  for (Finding& f : findings) {
    const CatalogueEntry* e = FindCatalogueEntry(f.id);
    if (e == nullptr) continue;
    std::optional<std::string_view> title = ChineseOf(e->title);
    if (title) f.summary = "【" + std::string(*title) + "】" + f.summary;
  }
  return findings;
}

}  // namespace gpudoctor
