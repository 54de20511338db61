#include "rules/make_finding.h"

#include <cstdio>
#include <cstdlib>

#include "rules/catalogue.h"

namespace gpudoctor {

Action ActionAtSeverity(Action action, Severity severity, const CatalogueEntry& entry) {
  if (severity < entry.max_severity && NeedsNodeOutOfService(action)) return Action::kWatch;
  return action;
}

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
  // The catalogue's action is the one for the entry's worst severity. Below it, an action that
  // takes the node out becomes "watch": a warm GPU is watched, a hot one is inspected.
  f.action = ActionAtSeverity(entry->action, severity, *entry);
  f.summary = std::move(summary);
  for (const auto& step : entry->next_steps) f.next_steps.emplace_back(step);
  return f;
}

void KeepStepsFor(Finding& f, std::initializer_list<std::string_view> labels) {
  std::vector<std::string> kept;
  for (const auto& step : f.next_steps) {
    size_t close = step.starts_with("`") ? step.find('`', 1) : std::string::npos;
    bool labelled = close != std::string::npos && step.compare(close, 3, "`: ") == 0;
    if (!labelled) {
      kept.push_back(step);
      continue;
    }
    for (std::string_view label : labels) {
      std::string prefix = "`" + std::string(label) + "`: ";
      if (step.starts_with(prefix)) kept.push_back(step.substr(prefix.size()));
    }
  }
  f.next_steps = std::move(kept);
}

GpuRef RefOf(const GpuFacts& g) {
  GpuRef r;
  r.index = g.index;
  r.uuid = g.uuid;
  r.pci_bus_id = g.pci_bus_id;
  r.serial = g.serial;
  r.name = g.name;
  return r;
}

Finding GpuFinding(std::string_view id, Severity sev, const GpuFacts& g, std::string summary) {
  Finding f = MakeFinding(id, sev, "GPU " + std::to_string(g.index) + ": " + summary);
  f.gpu = RefOf(g);
  if (!g.serial.empty()) f.Add("serial", g.serial);
  if (!g.pci_bus_id.empty()) f.Add("pci_bus_id", g.pci_bus_id);
  return f;
}

}  // namespace gpudoctor
