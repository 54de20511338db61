// CounterWindow: under `watch`, rate rules (ECC SBE growth, PCIe replays, NVLink errors) judge
// counters over a longer window than one tick: the GPU's counter read from about window_s ago
// (kept in memory, per GPU identity) replaces GpuFacts::first, and window_s becomes the time
// between the two reads (window_s to window_s * 61 / 60 plus a tick: reads are kept
// window_s / 60 apart). Clock event reasons stay those of the previous tick (a throttle must
// persist across two consecutive reads, not across minutes). Not thread-safe: the daemon's
// tick thread owns it.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <string>

#include "facts/snapshot.h"

namespace gpudoctor {

class CounterWindow {
 public:
  explicit CounterWindow(double window_s) : window_s_(window_s) {}
  // `now_s`: seconds on a monotonic clock (the daemon's; tests pass a fake one).
  void Apply(Snapshot& snap, double now_s);
  // A new window (config reload) for the ticks that follow; reads already taken are kept.
  void set_window_s(double window_s) { window_s_ = window_s; }
  // Reads held over all GPUs (memory: ≈ 200 bytes each).
  size_t reads_held() const {
    size_t n = 0;
    for (const auto& [key, reads] : reads_) n += reads.size();
    return n;
  }

 private:
  // Reads kept per window (one every window_s / kReadsPerWindow seconds, see Apply).
  static constexpr double kReadsPerWindow = 60;
  struct Read {
    double at_s;
    GpuCounterRead counters;
  };
  double window_s_;
  std::map<std::string, std::deque<Read>> reads_;  // per GPU identity, oldest first
};

}  // namespace gpudoctor
