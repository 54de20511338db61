// gpu.util.underused and gpu.memory.thrashing: judged on each GPU's readings over a window of
// watch ticks (minutes), not on one tick.
//  - gpu.util.underused: a GPU held by a job (a process on it in at least 90% of the window's
//    samples) but busy less than max_mean_util_pct on average, and more than gpu.util.low's
//    max_util_pct (an idle GPU is gpu.util.low's fact, a saw-tooth gpu.util.sawtooth's: one
//    finding per fact). The likely limiter comes from the same window: the input pipeline (host
//    CPU saturated, iowait), host-to-GPU transfers (PCIe RX high against the link), collectives
//    (the busiest NIC / InfiniBand port loaded) or scheduling (inference requests waiting), each
//    with its figures in the evidence; none: "unknown".
//  - gpu.memory.thrashing: VRAM at least min_used_pct full while PCIe carries at least
//    min_each_way_mb_per_s in both directions, in at least min_share_pct of the window's samples.
// The window only judges once it covers 90% of window_s (a short spike never fills it).
// The per-GPU sample history is the caller's (the watch daemon keeps one GpuWindows); the judge
// functions are pure. Thread-compatible.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "facts/snapshot.h"
#include "findings/finding.h"
#include "rules/thresholds.h"

namespace gpudoctor {

// One tick's readings of one GPU and of the host it is in. Bytes per second; percentages 0-100.
// Readings are float (7 significant digits, far finer than any threshold): the daemon keeps
// 600 s of them per GPU, and doubles made each sample 64 bytes larger (0.3 MiB for 8 GPUs).
struct GpuWindowSample {
  double at_s = 0;  // monotonic seconds
  std::optional<float> util_pct;
  bool held = false;  // a process on the GPU
  std::optional<float> memory_used_pct;
  std::optional<float> pcie_rx_bytes_per_s;    // received by the GPU: host -> GPU (H2D)
  std::optional<float> pcie_tx_bytes_per_s;    // sent by the GPU: GPU -> host (D2H)
  std::optional<float> pcie_link_bytes_per_s;  // the current link's bandwidth, one direction
  std::optional<float> cpu_busy_pct, iowait_pct;
  std::optional<float> net_link_pct;      // the busiest physical NIC / IB port, max(rx, tx) / speed
  std::string net_name;                   // that NIC or port ("eth1", "mlx5_0/1")
  std::optional<float> waiting_requests;  // an inference queue (InferenceWaitingRequests)
};

struct UnderuseParams {
  double window_s = 600;
  double max_mean_util_pct = 40;
  double idle_util_pct = 10;  // gpu.util.low's max_util_pct: at or below, the GPU is idle
  double cpu_busy_pct = 85, iowait_pct = 20, pcie_h2d_link_pct = 30, net_link_pct = 40;
  bool operator==(const UnderuseParams&) const = default;
};

struct UnderuseVerdict {
  bool detected = false;
  int samples = 0;
  double covered_s = 0;
  double mean_util_pct = 0;
  double held_share_pct = 0;
  // "input", "transfers", "collectives", "scheduling" or "unknown".
  std::string limiter;
  std::string limiter_text;  // "host CPU 96% busy on average"
  // Window means of the signals that were read (absent: not read in the window).
  std::optional<double> cpu_busy_pct, iowait_pct, pcie_rx_bytes_per_s, pcie_tx_bytes_per_s,
      pcie_link_bytes_per_s, net_link_pct, waiting_requests;
  std::string net_name;
};

struct ThrashingParams {
  double window_s = 300;
  double min_used_pct = 95;
  double min_each_way_mb_per_s = 2000;  // MB = 10^6 bytes
  double min_share_pct = 80;
  bool operator==(const ThrashingParams&) const = default;
};

struct ThrashingVerdict {
  bool detected = false;
  int samples = 0;
  double covered_s = 0;
  double share_pct = 0;  // samples with memory full and PCIe busy both ways
  // Means over those samples (over all samples of the window when none shows it).
  double mean_used_pct = 0, mean_rx_bytes_per_s = 0, mean_tx_bytes_per_s = 0;
};

// `samples` oldest first; `now_s` the newest tick's time. Only samples within window_s count.
UnderuseVerdict JudgeUnderuse(const std::deque<GpuWindowSample>& samples, double now_s,
                              const UnderuseParams& p);
ThrashingVerdict JudgeThrashing(const std::deque<GpuWindowSample>& samples, double now_s,
                                const ThrashingParams& p);

UnderuseParams UnderuseParamsFrom(const Thresholds& t);
ThrashingParams ThrashingParamsFrom(const Thresholds& t);

// The host-side part of a sample (CPU, iowait, busiest NIC / IB port) from a snapshot.
void FillHostSignals(const Snapshot& snap, GpuWindowSample& s);
// The bandwidth of one direction of a PCIe link (gen 1-6, lanes), bytes per second, after line
// encoding; nullopt for an unknown generation.
std::optional<double> PcieLinkBytesPerSecond(uint32_t gen, uint32_t width);

// Sums over a set of samples, added to as samples enter a window and taken from as they leave it.
// `sign` is +1 (enters) or -1 (leaves). Counts are exact; a count back at 0 resets its sum to 0.
struct UnderuseSums {
  struct Mean {
    double sum = 0;
    int n = 0;
    void Add(const std::optional<float>& v, int sign);
    std::optional<double> Get() const;  // nullopt when no sample has the reading
  };
  int n = 0, held = 0;  // samples with a utilisation reading; those held by a process
  double util = 0;
  Mean cpu_busy, iowait, rx, tx, link, net, waiting;
  void Add(const GpuWindowSample& s, int sign);  // a sample without a utilisation reading: none
};

struct ThrashingSums {
  int n = 0, both = 0;  // samples with memory and both PCIe readings; those that show it
  // [0]: over all n samples; [1]: over the `both` samples that show it.
  double used[2] = {0, 0}, rx[2] = {0, 0}, tx[2] = {0, 0};
  void Add(const GpuWindowSample& s, int sign, const ThrashingParams& p);
};

// One GPU's samples and the running sums of both windows over them, so a tick costs the same
// whatever the windows' length (each sample enters and leaves each window once; before, every tick
// rescanned both windows: 600 samples per GPU, and the tick's cost grew for the first 10 minutes of
// every watch). The verdicts equal JudgeUnderuse / JudgeThrashing on the same samples to rounding
// (the sums are recomputed from the samples every kExactEvery updates, and whenever the
// parameters change, so rounding never accumulates). Thread-compatible.
class GpuSampleWindow {
 public:
  static constexpr unsigned kExactEvery = 4096;
  // Appends `s` (s.at_s: the tick's monotonic time; one before the newest sample's starts the
  // window afresh), drops samples older than the longer window (or past 20000), and moves both
  // windows' starts.
  void Add(GpuWindowSample s, const UnderuseParams& up, const ThrashingParams& tp);
  // The verdicts at the newest sample's time, with the parameters of the last Add.
  UnderuseVerdict Underuse() const;
  ThrashingVerdict Thrashing() const;
  bool empty() const { return samples_.empty(); }
  double newest_at_s() const { return samples_.empty() ? 0 : samples_.back().at_s; }
  size_t size() const { return samples_.size(); }

 private:
  void Rebuild();  // both windows' starts and sums from the samples
  std::deque<GpuWindowSample> samples_;
  size_t underuse_begin_ = 0, thrashing_begin_ = 0;  // indexes of each window's oldest sample
  UnderuseSums underuse_;
  ThrashingSums thrashing_;
  UnderuseParams up_;
  ThrashingParams tp_;
  unsigned updates_since_exact_ = 0;
  uint64_t pushed_ = 0;  // samples ever added: the newest has sequence number pushed_ - 1
  // The newest sample with a utilisation reading and a NIC name: its sequence number and name
  // (the underuse verdict names the busiest NIC without a scan of the window).
  std::optional<uint64_t> named_seq_;
  std::string named_;
};

// Per GPU identity (GpuIdentityKey): the samples of the longest window in use.
class GpuWindows {
 public:
  // Adds this tick's sample of every GPU in `snap`, then appends gpu.util.underused and
  // gpu.memory.thrashing for the GPUs whose window shows them. `findings` already holds this
  // tick's other findings (gpu.util.sawtooth of a GPU suppresses its gpu.util.underused).
  void Add(const Snapshot& snap, double now_s, const Thresholds& t, std::vector<Finding>& findings);
  // GPUs with samples kept (a GPU not seen for the longest window is forgotten).
  size_t gpus_tracked() const { return samples_.size(); }

 private:
  std::map<std::string, GpuSampleWindow> samples_;
};

}  // namespace gpudoctor
