#include "rules/make_finding.h"

#include <cstdio>
#include <cstdlib>

#include "rules/catalogue.h"

namespace gpudoctor {

Finding MakeFinding(std::string_view id, Severity severity, std::string summary) {
  const CatalogueEntry* entry = FindCatalogueEntry(id);
  if (entry == nullptr) {
    std::fprintf(stderr, "gpudoctor: internal error: finding id '%.*s' not in catalogue\n",
                 static_cast<int>(id.size()), id.data());
    std::abort();
  }
  Finding f;
  f.id = std::string(id);
  f.layer = entry->layer;
  f.severity = severity;
  f.summary = std::move(summary);
  for (const auto& step : entry->next_steps) f.next_steps.emplace_back(step);
  return f;
}

void KeepStepsFor(Finding& f, std::string_view verdict) {
  std::string label = "`" + std::string(verdict) + "`: ";
  std::vector<std::string> kept;
  for (const auto& step : f.next_steps) {
    if (step.starts_with(label)) kept.push_back(step.substr(label.size()));
  }
  f.next_steps = std::move(kept);
}

}  // namespace gpudoctor
