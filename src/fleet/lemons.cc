#include "fleet/lemons.h"

#include <algorithm>
#include <map>
#include <set>

#include "fleet/ledger.h"
#include "fleet/onsets.h"

namespace gpudoctor::fleet {

std::vector<Lemon> FindLemons(const FleetData& data, const std::vector<size_t>& onsets,
                              int min_incidents, int64_t incident_gap_s) {
  struct Acc {
    std::vector<int64_t> times;
    int crit = 0;
    std::set<std::string> ids, nodes;
  };
  std::map<std::string, Acc> nodes, cards;
  // A lemon is a node or card that keeps breaking: hardware-class onsets only (a thermal blip
  // or a busy host is not a breakage).
  std::vector<size_t> hardware;
  for (size_t i : onsets) {
    if (IsHardwareClass(data.findings[i])) hardware.push_back(i);
  }
  if (hardware.empty()) return {};
  const CardIndex index(data);
  const std::set<std::string> conflicting = ConflictingSerials(data);
  for (size_t i : hardware) {
    const auto& e = data.findings[i];
    Acc& n = nodes[e.node];
    n.times.push_back(e.time_s);
    n.ids.insert(e.id);
    n.crit += e.severity == Severity::kCrit;
    std::string serial = SerialOf(index, e);
    if (serial.empty() || conflicting.count(serial) != 0) continue;
    Acc& c = cards[serial];
    c.times.push_back(e.time_s);
    c.ids.insert(e.id);
    c.nodes.insert(e.node);
    c.crit += e.severity == Severity::kCrit;
  }
  std::vector<Lemon> out;
  auto emit = [&](const char* kind, const std::map<std::string, Acc>& m) {
    for (const auto& [name, a] : m) {
      std::vector<int64_t> starts = IncidentStarts(a.times, incident_gap_s);
      if (static_cast<int>(starts.size()) < min_incidents) continue;
      Lemon l;
      l.kind = kind;
      l.name = name;
      l.incidents = static_cast<int>(starts.size());
      l.onsets = static_cast<int>(a.times.size());
      l.crit_onsets = a.crit;
      l.first_s = *std::min_element(a.times.begin(), a.times.end());
      l.last_s = *std::max_element(a.times.begin(), a.times.end());
      l.ids.assign(a.ids.begin(), a.ids.end());
      if (std::string(kind) == "card") l.nodes.assign(a.nodes.begin(), a.nodes.end());
      out.push_back(std::move(l));
    }
  };
  emit("node", nodes);
  emit("card", cards);
  std::stable_sort(out.begin(), out.end(),
                   [](const Lemon& a, const Lemon& b) { return a.incidents > b.incidents; });
  return out;
}

}  // namespace gpudoctor::fleet
