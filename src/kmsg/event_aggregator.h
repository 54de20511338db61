// EventAggregator: folds kernel events into a bounded table keyed by (kind, subject, Xid code,
// AER severity, cgroup flag). A flood of identical lines (hundreds of thousands of Xid 95) is one
// entry with its count, first/last time and first line; per-entry lists are bounded too, so
// memory does not depend on the input size. When the table is full, an event of a more serious
// kind (Xid, lost GPU, MCE, driver failures > hung tasks, uncorrectable AER > OOM, NIC link,
// thermal, corrected AER) replaces an entry of the least serious kind present. Not thread-safe.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "facts/kernel_facts.h"

namespace gpudoctor {

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
  static std::string Key(const KernelEvent& e);
  // How serious an event's kind is when the table is full: 1 (least) .. 3.
  static int Rank(const KernelEvent& e);
  std::array<size_t, 4> rank_counts_{};
  std::vector<KernelEvent> events_;
  std::unordered_map<std::string, size_t> index_;
  uint64_t dropped_ = 0;
};

}  // namespace gpudoctor
