#include "fleet/onsets.h"

#include <algorithm>
#include <map>
#include <set>

#include "rules/catalogue.h"

namespace gpudoctor::fleet {

const char* const kCategories[6] = {"gpu",     "gpu_memory", "nvlink_pcie",
                                    "network", "host",       "software"};

namespace {

bool StartsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

const Card* CardFor(const FleetData& data, const FindingEvent& e) {
  if (e.gpu.pci_bus_id.empty() && e.gpu.uuid.empty() && !e.gpu.index) return nullptr;
  for (const auto& c : data.cards) {
    if (c.node != e.node) continue;
    if (!e.gpu.pci_bus_id.empty() && c.pci_bus_id == e.gpu.pci_bus_id) return &c;
    if (!e.gpu.uuid.empty() && c.uuid == e.gpu.uuid) return &c;
    if (e.gpu.pci_bus_id.empty() && e.gpu.uuid.empty() && e.gpu.index && c.index == e.gpu.index) {
      return &c;
    }
  }
  return nullptr;
}

}  // namespace

const char* CategoryOf(const FindingEvent& e) {
  const CatalogueEntry* entry = FindCatalogueEntry(e.id);
  return FleetClassName(entry != nullptr ? FleetClassOf(*entry) : LayerFleetClass(e.layer));
}

std::string SerialOf(const FleetData& data, const FindingEvent& e) {
  if (!e.gpu.serial.empty()) return e.gpu.serial;
  const Card* c = CardFor(data, e);
  return c ? c->serial : "";
}

std::string BusOf(const FleetData& data, const FindingEvent& e) {
  if (!e.gpu.pci_bus_id.empty()) return e.gpu.pci_bus_id;
  const Card* c = CardFor(data, e);
  return c ? c->pci_bus_id : "";
}

std::vector<size_t> FindOnsets(const FleetData& data) {
  // Per node: its report times in order, and the finding keys of each report.
  std::map<std::string, std::vector<int64_t>> times;
  for (const auto& r : data.reports) times[r.node].push_back(r.time_s);
  for (auto& [node, t] : times) std::sort(t.begin(), t.end());
  std::map<std::pair<std::string, int64_t>, std::set<std::string>> keys;
  auto key_of = [](const FindingEvent& e) {
    return e.id + "|" + e.gpu.pci_bus_id + "|" + e.gpu.uuid + "|" + e.subject;
  };
  for (const auto& e : data.findings) keys[{e.node, e.time_s}].insert(key_of(e));
  std::vector<size_t> onsets;
  for (size_t i = 0; i < data.findings.size(); ++i) {
    const FindingEvent& e = data.findings[i];
    if (e.severity == Severity::kInfo || StartsWith(e.id, "gpudoctor.")) continue;
    const auto& t = times[e.node];
    auto it = std::lower_bound(t.begin(), t.end(), e.time_s);
    if (it != t.begin()) {
      auto prev = keys.find({e.node, *(it - 1)});
      if (prev != keys.end() && prev->second.count(key_of(e)) != 0) continue;
    }
    onsets.push_back(i);
  }
  std::sort(onsets.begin(), onsets.end(), [&](size_t a, size_t b) {
    const auto &x = data.findings[a], &y = data.findings[b];
    if (x.node != y.node) return x.node < y.node;
    return x.time_s < y.time_s;
  });
  return onsets;
}

}  // namespace gpudoctor::fleet
