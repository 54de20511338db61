// The watch tick's GPU window rules (gpu.util.underused, gpu.memory.thrashing) for 8 GPUs, per
// tick, once the windows hold `range(0)` seconds of 1 s samples (the default windows: 600 s and
// 300 s, full after 10 minutes of watch):
//  - BM_WindowTickRunningSums: GpuSampleWindow (what the watch runs now): add the tick's sample,
//    move both windows' starts, give both verdicts.
//  - BM_WindowTickRescan: what the watch ran before this round: append to the deque, then the
//    pure judges rescan both windows (JudgeUnderuse, JudgeThrashing).
// The rescan grows with the window's fill (the tick's cost grew for the first 10 minutes of every
// watch); the running sums stay flat. Both windows are set to range(0) so the fill stays put.
#include <benchmark/benchmark.h>

#include <deque>

#include "rules/gpu_window_rules.h"

namespace {
using namespace gpudoctor;

constexpr int kGpus = 8;

// `nic`: the host has a physical NIC with a known speed (its name goes into the verdict).
GpuWindowSample Sample(double t, int gpu, bool nic = true) {
  GpuWindowSample s;
  s.at_s = t;
  s.util_pct = static_cast<float>(20 + (static_cast<int>(t) * 7 + gpu * 13) % 30);
  s.held = true;
  s.memory_used_pct = 60;
  s.pcie_rx_bytes_per_s = 1e9;
  s.pcie_tx_bytes_per_s = 5e8;
  s.pcie_link_bytes_per_s = 3938.5e6 * 16;
  s.cpu_busy_pct = 40;
  s.iowait_pct = 2;
  if (nic) {
    s.net_link_pct = 10;
    s.net_name = "eth0";
  }
  return s;
}

void BM_WindowTickRunningSums(benchmark::State& state) {
  const bool nic = state.range(1) != 0;
  UnderuseParams up;
  ThrashingParams tp;
  up.window_s = tp.window_s = static_cast<double>(state.range(0));
  std::vector<GpuSampleWindow> windows(kGpus);
  double t = 0;
  for (; t < static_cast<double>(state.range(0)); t += 1) {
    for (int g = 0; g < kGpus; ++g) windows[g].Add(Sample(t, g, nic), up, tp);
  }
  for (auto _ : state) {
    for (int g = 0; g < kGpus; ++g) {
      // Keep the fill: the window's oldest sample leaves as the new one enters.
      windows[g].Add(Sample(t, g, nic), up, tp);
      benchmark::DoNotOptimize(windows[g].Underuse());
      benchmark::DoNotOptimize(windows[g].Thrashing());
    }
    t += 1;
  }
}

void BM_WindowTickRescan(benchmark::State& state) {
  UnderuseParams up;
  ThrashingParams tp;
  const double keep_s = static_cast<double>(state.range(0));
  up.window_s = tp.window_s = keep_s;
  std::vector<std::deque<GpuWindowSample>> series(kGpus);
  double t = 0;
  for (; t < keep_s; t += 1) {
    for (int g = 0; g < kGpus; ++g) series[g].push_back(Sample(t, g));
  }
  for (auto _ : state) {
    for (int g = 0; g < kGpus; ++g) {
      series[g].push_back(Sample(t, g));
      while (t - series[g].front().at_s > keep_s) series[g].pop_front();
      benchmark::DoNotOptimize(JudgeUnderuse(series[g], t, up));
      benchmark::DoNotOptimize(JudgeThrashing(series[g], t, tp));
    }
    t += 1;
  }
}

}  // namespace

// Window fill in seconds (1 s ticks): a young watch, and the default windows' full lengths.
// Second argument: 1 with a named NIC, 0 without (a VM: the first version of the running window
// still scanned the window for the newest NIC name when there was none).
BENCHMARK(BM_WindowTickRunningSums)->ArgsProduct({{60, 300, 600}, {1, 0}});
BENCHMARK(BM_WindowTickRescan)->Arg(60)->Arg(300)->Arg(600);
BENCHMARK_MAIN();
