#include "watch/xid_ledger.h"

#include <algorithm>
#include <cstdlib>

namespace gpudoctor {
namespace {

constexpr uint64_t kMaxLinesPerTick = 10000;  // lines timed one by one; the rest count directly

}  // namespace

XidLedger::XidLedger(std::chrono::milliseconds window) : window_ms_(window.count()) {}

void XidLedger::Arrive(Entry& e, int64_t t, bool from_kernel) {
  std::deque<int64_t>& partners = from_kernel ? e.nvml_unpaired : e.kernel_unpaired;
  auto it = std::find_if(partners.begin(), partners.end(),
                         [&](int64_t p) { return std::llabs(p - t) <= window_ms_; });
  e.last_unix_ms = std::max(e.last_unix_ms, t);
  if (it != partners.end()) {
    partners.erase(it);  // the same occurrence, already counted
    return;
  }
  ++e.count;
  (from_kernel ? e.kernel_unpaired : e.nvml_unpaired).push_back(t);
}

void XidLedger::Apply(Snapshot& snap, int64_t now_unix_ms) {
  // Kernel lines first: an NVML event of the same tick then pairs with its line.
  for (const KernelEvent& k : snap.kernel.events) {
    if (k.kind != KernelEventKind::kXid) continue;
    std::string bus = k.pci ? k.pci->ToString() : k.subject;
    Entry& e = entries_[{bus, static_cast<uint64_t>(k.xid)}];
    // A smaller count than before: the reader started over (a new boot, a rotated source).
    uint64_t fresh = k.count >= e.kernel_lines ? k.count - e.kernel_lines : k.count;
    e.kernel_lines = k.count;
    int64_t t = k.last.wall_us ? *k.last.wall_us / 1000 : now_unix_ms;
    for (uint64_t i = 0; i < fresh; ++i) {
      if (i >= kMaxLinesPerTick) {
        e.count += fresh - i;
        break;
      }
      Arrive(e, t, true);
    }
  }
  for (const NvmlXidEvent& ev : snap.gpu.nvml_xid_events) {
    std::string bus = "nvml:unlisted";
    for (const GpuFacts& g : snap.gpu.gpus) {
      if (ev.gpu_index && g.index == *ev.gpu_index && !g.pci_bus_id.empty()) bus = g.pci_bus_id;
    }
    Arrive(entries_[{bus, ev.xid}], ev.unix_ms > 0 ? ev.unix_ms : now_unix_ms, false);
  }
  std::vector<XidTally> tallies;
  for (auto& [key, e] : entries_) {
    auto old = [&](int64_t t) { return t < now_unix_ms - window_ms_; };
    for (std::deque<int64_t>* q : {&e.kernel_unpaired, &e.nvml_unpaired}) {
      q->erase(std::remove_if(q->begin(), q->end(), old), q->end());
    }
    if (e.count == 0) continue;
    XidTally t;
    t.bus = key.first;
    t.xid = key.second;
    t.count = e.count;
    t.last_unix_ms = e.last_unix_ms;
    for (const GpuFacts& g : snap.gpu.gpus) {
      if (g.pci_bus_id == t.bus) t.gpu_index = g.index;
    }
    tallies.push_back(std::move(t));
  }
  snap.gpu.xid_tallies = std::move(tallies);
}

}  // namespace gpudoctor
