#include "rules/lost_gpu_match.h"

#include <algorithm>
#include <tuple>

namespace gpudoctor {

std::vector<LostGpuPair> PairBuslessLostGpus(const Snapshot& snap) {
  std::vector<int> busless;
  std::vector<PciAddress> named;
  for (const auto& g : snap.gpu.gpus) {
    auto a = ParsePciBusId(g.pci_bus_id);
    if (a) {
      named.push_back(*a);
    } else if (g.lost) {
      busless.push_back(g.index);
    }
  }
  if (busless.empty()) return {};
  std::vector<PciAddress> slots;
  for (const auto& e : snap.kernel.events) {
    bool lost =
        e.kind == KernelEventKind::kGpuLost || (e.kind == KernelEventKind::kXid && e.xid == 79);
    if (!lost || !e.pci) continue;
    auto same = [&](const PciAddress& a) { return a.SameDevice(*e.pci); };
    if (std::any_of(named.begin(), named.end(), same)) continue;
    if (std::any_of(slots.begin(), slots.end(), same)) continue;
    slots.push_back(*e.pci);
  }
  if (slots.size() != busless.size()) return {};
  std::sort(slots.begin(), slots.end(), [](const PciAddress& a, const PciAddress& b) {
    return std::tie(a.domain, a.bus, a.device) < std::tie(b.domain, b.bus, b.device);
  });
  std::sort(busless.begin(), busless.end());
  std::vector<LostGpuPair> out;
  for (size_t i = 0; i < slots.size(); ++i) out.push_back({slots[i], busless[i]});
  return out;
}

}  // namespace gpudoctor
