// EventAggregator: folds kernel events into a bounded table keyed by (kind, subject, Xid code,
// AER severity, cgroup flag). A flood of identical lines (hundreds of thousands of Xid 95) is one
// entry with its count, first/last time and first line; per-entry lists are bounded too, so
// memory does not depend on the input size. When the table is full, an event of a more serious
// kind (Xid, lost GPU, MCE, driver failures > hung tasks, uncorrectable AER > OOM, NIC link,
// thermal, corrected AER) replaces an entry of the least serious kind present. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "facts/kernel_facts.h"
#include "kmsg/xid_parser.h"

namespace gpudoctor {

// Where Observe/ObserveXid found the entry of an event: kept by a caller that observes the same
// event again and again (the Xid-storm shortcut, SignalMemo), so the entry is reached without a
// lookup. Valid while `epoch` equals the aggregator's (entries never change slots in between).
struct EventSlotHint {
  uint64_t epoch = 0;  // 0: none
  size_t slot = 0;
};

class EventAggregator {
 public:
  static constexpr size_t kMaxEvents = 2048;
  static constexpr size_t kMaxProcesses = 8;
  static constexpr size_t kMaxIds = 64;
  static constexpr size_t kMaxErrorNames = 16;
  static constexpr size_t kMaxSampleBytes = 512;

  // Counts one occurrence of `delta` (count taken as 1) at time t with the raw line `line`.
  // Returns the entry, or nullptr when the table is full of entries at least as serious
  // (counted in dropped(); an entry evicted for a more serious one is counted there too).
  KernelEvent* Observe(const KernelEvent& delta, const LogTime& t, std::string_view line);
  // The same, reaching the entry through `hint` when it is valid (then nothing is allocated or
  // looked up), and setting it to the entry observed.
  KernelEvent* Observe(const KernelEvent& delta, const LogTime& t, std::string_view line,
                       EventSlotHint* hint);
  // The same as Observe(XidEvent(x), t, line), without allocating or formatting when the
  // entry for (GPU, Xid code) exists: the hot path of an Xid storm. The entry is found by an
  // integer key (PCI address and code), its subject formatted only when it is created.
  KernelEvent* ObserveXid(const XidLine& x, const LogTime& t, std::string_view line);
  // The same for x with its pid replaced by `pid` (the Xid-storm shortcut: a cached parse).
  // `hint` (may be null) is used when valid and set to the entry observed.
  KernelEvent* ObserveXid(const XidLine& x, const LogTime& t, std::string_view line, int64_t pid,
                          EventSlotHint* hint = nullptr) {
    if (hint != nullptr && hint->epoch == epoch_) {  // inline: a storm's every line comes here
      return UpdateXid(events_[hint->slot], x, pid, t);
    }
    return ObserveXidAs(x, pid, t, line, hint);
  }
  // The storm's cheapest count, inline: when `hint` is valid and its entry's process list is
  // settled (full and truncated, so UpdateXid neither searches nor extends it) and its PCI
  // address set, counts one more line at (boot_us, wall_us) of an Xid line without MIG instance,
  // NVLink tail or recovery action (its "RST"/"D-RST" flags given as value_or(false)), as
  // UpdateXid would, and returns true; else returns false
  // having done nothing (the caller then uses ObserveXid).
  // The time comes as plain numbers (wall_us only when has_wall): an optional built on the
  // caller's stack and copied whole is a store-forwarding stall on every line.
  bool CountSettledXid(const EventSlotHint& hint, bool reset, bool drain_reset, int64_t boot_us,
                       bool has_wall, int64_t wall_us) {
    if (hint.epoch != epoch_) return false;
    KernelEvent& e = events_[hint.slot];
    if (!e.processes_truncated || e.processes.size() < kMaxProcesses || !e.pci) return false;
    if (e.count < UINT64_MAX) ++e.count;
    if (e.first.empty()) {
      e.first.boot_us = boot_us;
      if (has_wall) e.first.wall_us = wall_us;
    }
    e.last.boot_us = boot_us;
    if (has_wall) {
      e.last.wall_us = wall_us;
    } else {
      e.last.wall_us.reset();
    }
    e.reset_required |= reset;
    e.drain_reset_required |= drain_reset;
    return true;
  }
  // The event an Xid line stands for (subject: the PCI address, "name[pid]", MIG instance and
  // NVLink link ids, reset flags, NVLink tail, recovery action).
  static KernelEvent XidEvent(const XidLine& x);
  // Merges detail fields of `delta` into the latest entry with the same key, without counting.
  // Returns false when there is no such entry.
  bool Attach(const KernelEvent& delta);
  // Merge fields (not counts) of delta into e, bounded.
  static void MergeFields(KernelEvent& e, const KernelEvent& delta);

  void Clear();
  uint64_t dropped() const { return dropped_; }
  const std::vector<KernelEvent>& events() const { return events_; }
  std::vector<KernelEvent> TakeEvents();

 private:
  KernelEvent* ObserveXidAs(const XidLine& x, std::optional<int64_t> pid, const LogTime& t,
                            std::string_view line, EventSlotHint* hint);
  // The integer key of x's (GPU, code), 0 when a field is out of its range (then only the
  // string-keyed path knows the entry).
  static uint64_t XidKeyOf(const XidLine& x);
  bool FindXidSlot(const XidLine& x, size_t* slot);
  // What Observe and MergeFields do with XidEvent(x) (pid replaced) for its existing entry e.
  KernelEvent* UpdateXid(KernelEvent& e, const XidLine& x, const std::optional<int64_t>& pid,
                         const LogTime& t);
  static std::string Key(const KernelEvent& e);
  // How serious an event's kind is when the table is full: 1 (least) .. 3.
  static int Rank(const KernelEvent& e);
  std::array<size_t, 4> rank_counts_{};
  std::vector<KernelEvent> events_;
  std::unordered_map<std::string, size_t> index_;
  // (PCI address, Xid code) → slot in events_, for ObserveXid; cleared whenever a slot is
  // reused or the table emptied (then rebuilt from the string-keyed path).
  std::unordered_map<uint64_t, size_t> xid_index_;
  struct XidFront {
    uint64_t key = 0;  // 0: empty (a keyed Xid code is >= 1)
    size_t slot = 0;
  };
  std::array<XidFront, 64> xid_front_{};  // direct-mapped cache of xid_index_
  void ClearXidIndex();  // also ends every EventSlotHint given out (epoch_ moves on)
  uint64_t epoch_ = 1;
  uint64_t dropped_ = 0;
};

}  // namespace gpudoctor
