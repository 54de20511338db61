#include "watch/counter_window.h"

#include "watch/tick_events.h"

namespace gpudoctor {

void CounterWindow::Apply(Snapshot& snap, double now_s) {
  for (GpuFacts& g : snap.gpu.gpus) {
    if (g.hung || g.unfinished || !g.window_s) continue;  // no read this tick
    std::deque<Read>& reads = reads_[GpuIdentityKey(g)];
    // Drop reads older than the window, but keep the newest one that is at least window old.
    while (reads.size() >= 2 && now_s - reads[1].at_s >= window_s_) reads.pop_front();
    if (!reads.empty()) {
      const Read& oldest = reads.front();
      std::optional<uint64_t> reasons = g.first.clock_event_reasons;
      g.first = oldest.counters;
      g.first.clock_event_reasons = reasons;
      g.window_s = now_s - oldest.at_s;
    }
    // Reads are kept window_s / kReadsPerWindow apart, not every tick: a 300 s window at 1 s
    // held 300 reads of ≈ 200 bytes per GPU (0.45 MiB for 8 GPUs, the largest block of
    // `watch`'s heap after SQLite's page cache); 60 are enough to find a read about window_s old,
    // and the window rates are judged over is at most window_s / 60 (plus a tick) longer.
    if (reads.empty() || now_s - reads.back().at_s >= window_s_ / kReadsPerWindow ||
        now_s < reads.back().at_s) {
      reads.push_back({now_s, g.second});
    }
    if (reads.size() > 100000) reads.pop_front();  // bounded whatever the tick rate
  }
}

}  // namespace gpudoctor
