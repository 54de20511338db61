#include "rules/thresholds.h"

#include <cstdio>
#include <cstdlib>

#include "rules/catalogue.h"

namespace gpudoctor {

double Thresholds::Get(std::string_view id, std::string_view key) const {
  if (std::optional<double> v = Find(id, key)) return *v;
  if (const CatalogueEntry* e = FindCatalogueEntry(id)) {
    for (const auto& t : e->thresholds) {
      if (t.key == key) return t.default_value;
    }
    if (key == kForSKey) return WatchDefaultsFor(*e).for_s;
    if (key == kResolveAfterSKey) return WatchDefaultsFor(*e).resolve_after_s;
  }
  std::fprintf(stderr, "gpudoctor: internal error: threshold %.*s.%.*s not in catalogue\n",
               static_cast<int>(id.size()), id.data(), static_cast<int>(key.size()), key.data());
  std::abort();
}

}  // namespace gpudoctor
