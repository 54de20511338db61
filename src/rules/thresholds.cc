#include "rules/thresholds.h"

#include <cstdio>
#include <cstdlib>

#include "rules/catalogue.h"

namespace gpudoctor {

double Thresholds::Get(std::string_view id, std::string_view key) const {
  auto it = overrides_.find(std::make_pair(std::string(id), std::string(key)));
  if (it != overrides_.end()) return it->second;
  if (const CatalogueEntry* e = FindCatalogueEntry(id)) {
    for (const auto& t : e->thresholds) {
      if (t.key == key) return t.default_value;
    }
  }
  std::fprintf(stderr, "gpudoctor: internal error: threshold %.*s.%.*s not in catalogue\n",
               static_cast<int>(id.size()), id.data(), static_cast<int>(key.size()), key.data());
  std::abort();
}

bool Thresholds::Enabled(std::string_view id) const {
  auto it = enabled_.find(id);
  return it == enabled_.end() || it->second;
}

void Thresholds::Set(std::string_view id, std::string_view key, double value) {
  overrides_[{std::string(id), std::string(key)}] = value;
}

void Thresholds::SetEnabled(std::string_view id, bool enabled) {
  enabled_[std::string(id)] = enabled;
}

}  // namespace gpudoctor
