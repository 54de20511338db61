#include "watch/tick_events.h"

#include <algorithm>
#include <map>

namespace gpudoctor {
namespace {

// Under watch the ledger's tallies (kernel log and NVML events, one occurrence counted once);
// otherwise the kernel log's lines.
std::map<std::string, uint64_t> XidCounts(const Snapshot& snap) {
  std::map<std::string, uint64_t> out;
  if (snap.gpu.xid_tallies) {
    for (const XidTally& t : *snap.gpu.xid_tallies) {
      out[t.bus + "|" + std::to_string(t.xid)] += t.count;
    }
    return out;
  }
  for (const KernelEvent& e : snap.kernel.events) {
    if (e.kind != KernelEventKind::kXid) continue;
    std::string bus = e.pci ? e.pci->ToString() : e.subject;
    out[bus + "|" + std::to_string(e.xid)] += e.count;
  }
  return out;
}

const GpuFacts* GpuByBus(const Snapshot& snap, const std::string& bus) {
  for (const GpuFacts& g : snap.gpu.gpus) {
    if (g.pci_bus_id == bus) return &g;
  }
  return nullptr;
}

}  // namespace

EventBaseline BaselineOf(const Snapshot& snap, const std::string& boot_id) {
  EventBaseline b;
  b.valid = true;
  b.boot_id = boot_id;
  b.driver_version = snap.gpu.driver.driver_version;
  for (const GpuFacts& g : snap.gpu.gpus) {
    if (!g.hung && !g.unfinished) b.gpu_keys.push_back(GpuIdentityKey(g));
  }
  for (const auto& [k, v] : XidCounts(snap)) b.xid_counts.emplace_back(k, v);
  return b;
}

std::vector<HistoryEvent> DeriveEvents(const EventBaseline& before, const Snapshot& now,
                                       const std::string& boot_id,
                                       const std::string& stored_boot_id, int64_t unix_ms) {
  std::vector<HistoryEvent> out;
  auto event = [&](std::string kind, std::string detail) -> HistoryEvent& {
    HistoryEvent e;
    e.unix_ms = unix_ms;
    e.kind = std::move(kind);
    e.detail = std::move(detail);
    out.push_back(std::move(e));
    return out.back();
  };
  std::string previous_boot = before.valid ? before.boot_id : stored_boot_id;
  if (!boot_id.empty() && !previous_boot.empty() && boot_id != previous_boot) {
    event("reboot", "boot id " + previous_boot + " -> " + boot_id);
  }
  if (!before.valid) return out;

  const std::string& driver = now.gpu.driver.driver_version;
  if (!driver.empty() && !before.driver_version.empty() && driver != before.driver_version) {
    event("driver_changed", "driver " + before.driver_version + " -> " + driver);
  }
  // GPUs by identity; a GPU whose NVML phase hung this tick is neither here nor gone.
  bool nvml_ok = now.gpu.nvml.state == NvmlState::kOk;
  std::vector<std::string> now_keys;
  for (const GpuFacts& g : now.gpu.gpus) {
    std::string key = GpuIdentityKey(g);
    now_keys.push_back(key);
    if (g.hung || g.unfinished || g.lost) continue;
    if (std::find(before.gpu_keys.begin(), before.gpu_keys.end(), key) == before.gpu_keys.end()) {
      HistoryEvent& e = event("gpu_appeared", "GPU " + std::to_string(g.index) + " " + g.name +
                                                  " serial " + g.serial + " at " + g.pci_bus_id);
      e.gpu_index = g.index;
      e.serial = g.serial;
      e.pci_bus_id = g.pci_bus_id;
    }
  }
  if (nvml_ok) {
    for (const std::string& key : before.gpu_keys) {
      if (std::find(now_keys.begin(), now_keys.end(), key) != now_keys.end()) continue;
      HistoryEvent& e = event("gpu_disappeared", "GPU " + key + " no longer seen by NVML");
      e.serial = key;
    }
  }
  // New Xid lines since the last tick.
  std::map<std::string, uint64_t> old_counts(before.xid_counts.begin(), before.xid_counts.end());
  for (const auto& [key, count] : XidCounts(now)) {
    uint64_t old = old_counts.count(key) ? old_counts[key] : 0;
    if (count <= old) continue;
    size_t bar = key.rfind('|');
    std::string bus = key.substr(0, bar);
    std::string xid = key.substr(bar + 1);
    HistoryEvent& e =
        event("xid", "Xid " + xid + " (" + std::to_string(count - old) + " new) at " + bus);
    e.pci_bus_id = bus;
    if (const GpuFacts* g = GpuByBus(now, bus)) {
      e.gpu_index = g->index;
      e.serial = g->serial;
    }
  }
  return out;
}

}  // namespace gpudoctor
