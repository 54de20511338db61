#include "fleet/lemons.h"

#include <algorithm>
#include <map>
#include <set>

#include "fleet/onsets.h"

namespace gpudoctor::fleet {

std::vector<Lemon> FindLemons(const FleetData& data, const std::vector<size_t>& onsets,
                              int min_onsets) {
  struct Acc {
    std::set<int64_t> times;
    int crit = 0;
    std::set<std::string> ids, nodes;
  };
  std::map<std::string, Acc> nodes, cards;
  for (size_t i : onsets) {
    const auto& e = data.findings[i];
    // A lemon is a node or card that keeps breaking: hardware-class onsets only (a thermal blip
    // or a busy host is not a breakage).
    if (!IsHardwareAction(e.action)) continue;
    Acc& n = nodes[e.node];
    n.times.insert(e.time_s);
    n.ids.insert(e.id);
    n.crit += e.severity == Severity::kCrit;
    std::string serial = SerialOf(data, e);
    if (serial.empty()) continue;
    Acc& c = cards[serial];
    c.times.insert(e.time_s);
    c.ids.insert(e.id);
    c.nodes.insert(e.node);
    c.crit += e.severity == Severity::kCrit;
  }
  std::vector<Lemon> out;
  auto emit = [&](const char* kind, const std::map<std::string, Acc>& m) {
    for (const auto& [name, a] : m) {
      if (static_cast<int>(a.times.size()) < min_onsets) continue;
      Lemon l;
      l.kind = kind;
      l.name = name;
      l.onsets = static_cast<int>(a.times.size());
      l.crit_onsets = a.crit;
      l.first_s = *a.times.begin();
      l.last_s = *a.times.rbegin();
      l.ids.assign(a.ids.begin(), a.ids.end());
      if (std::string(kind) == "card") l.nodes.assign(a.nodes.begin(), a.nodes.end());
      out.push_back(std::move(l));
    }
  };
  emit("node", nodes);
  emit("card", cards);
  std::stable_sort(out.begin(), out.end(),
                   [](const Lemon& a, const Lemon& b) { return a.onsets > b.onsets; });
  return out;
}

}  // namespace gpudoctor::fleet
