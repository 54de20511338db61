#include "rules/gpu_window_rules.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"
#include "rules/inference_queue_hook.h"
#include "rules/make_finding.h"

namespace gpudoctor {
namespace {

constexpr double kCoverage = 0.9;      // share of window_s the samples must span
constexpr int kMinSamples = 3;         // fewer: never judged
constexpr double kHeldShare = 0.9;     // share of samples with a process on the GPU
constexpr size_t kMaxSamples = 20000;  // per GPU, whatever the tick rate and window
constexpr double kMaxWindowS = 6 * 3600;

// Whether `s` is within window_s of now_s (the rule of the pure judges and of the running window).
bool InWindow(const GpuWindowSample& s, double now_s, double window_s) {
  return now_s - s.at_s <= window_s && s.at_s <= now_s;
}

std::string Pct(double v) { return FormatDouble(v, 0) + "%"; }

std::string Rate(double bytes_per_s) {
  return FormatBytes(static_cast<uint64_t>(bytes_per_s)) + "/s";
}

std::string Minutes(double s) {
  if (s < 120) return FormatDouble(s, 0) + " s";
  return FormatDouble(s / 60, 0) + " min";
}

}  // namespace

std::optional<double> PcieLinkBytesPerSecond(uint32_t gen, uint32_t width) {
  // Per lane and direction after line encoding: 8b/10b (gen 1-2), 128b/130b (gen 3-5), FLIT
  // 242/256 (gen 6).
  static constexpr double kPerLane[] = {0, 250e6, 500e6, 984.6e6, 1969.2e6, 3938.5e6, 7562.5e6};
  if (gen < 1 || gen > 6 || width == 0) return std::nullopt;
  return kPerLane[gen] * width;
}

void UnderuseSums::Mean::Add(const std::optional<float>& v, int sign) {
  if (!v) return;
  n += sign;
  sum = n == 0 ? 0 : sum + sign * static_cast<double>(*v);
}

std::optional<double> UnderuseSums::Mean::Get() const {
  if (n <= 0) return std::nullopt;
  return sum / n;
}

void UnderuseSums::Add(const GpuWindowSample& s, int sign) {
  if (!s.util_pct) return;
  n += sign;
  held += s.held ? sign : 0;
  util = n == 0 ? 0 : util + sign * static_cast<double>(*s.util_pct);
  cpu_busy.Add(s.cpu_busy_pct, sign);
  iowait.Add(s.iowait_pct, sign);
  rx.Add(s.pcie_rx_bytes_per_s, sign);
  tx.Add(s.pcie_tx_bytes_per_s, sign);
  link.Add(s.pcie_link_bytes_per_s, sign);
  net.Add(s.net_link_pct, sign);
  waiting.Add(s.waiting_requests, sign);
}

void ThrashingSums::Add(const GpuWindowSample& s, int sign, const ThrashingParams& p) {
  if (!s.memory_used_pct || !s.pcie_rx_bytes_per_s || !s.pcie_tx_bytes_per_s) return;
  const double min_bps = p.min_each_way_mb_per_s * 1e6;
  const bool shows = *s.memory_used_pct >= p.min_used_pct && *s.pcie_rx_bytes_per_s >= min_bps &&
                     *s.pcie_tx_bytes_per_s >= min_bps;
  n += sign;
  both += shows ? sign : 0;
  for (int i = 0; i <= (shows ? 1 : 0); ++i) {
    const int count = i == 0 ? n : both;
    used[i] = count == 0 ? 0 : used[i] + sign * static_cast<double>(*s.memory_used_pct);
    rx[i] = count == 0 ? 0 : rx[i] + sign * static_cast<double>(*s.pcie_rx_bytes_per_s);
    tx[i] = count == 0 ? 0 : tx[i] + sign * static_cast<double>(*s.pcie_tx_bytes_per_s);
  }
}

namespace {

// The verdict from the window's sums; net_name: that of the newest sample with one.
UnderuseVerdict UnderuseFrom(const UnderuseSums& sums, double covered_s, std::string net_name,
                             const UnderuseParams& p) {
  UnderuseVerdict v;
  v.covered_s = covered_s;
  v.samples = sums.n;
  if (sums.n <= 0) return v;
  const int held = sums.held;
  v.mean_util_pct = sums.util / v.samples;
  v.held_share_pct = 100.0 * held / v.samples;
  v.cpu_busy_pct = sums.cpu_busy.Get();
  v.iowait_pct = sums.iowait.Get();
  v.pcie_rx_bytes_per_s = sums.rx.Get();
  v.pcie_tx_bytes_per_s = sums.tx.Get();
  v.pcie_link_bytes_per_s = sums.link.Get();
  v.net_link_pct = sums.net.Get();
  v.waiting_requests = sums.waiting.Get();
  v.net_name = std::move(net_name);
  bool full = v.samples >= kMinSamples && v.covered_s >= kCoverage * p.window_s;
  v.detected = full && held >= kHeldShare * v.samples && v.mean_util_pct < p.max_mean_util_pct &&
               v.mean_util_pct > p.idle_util_pct;

  // The limiter: the signal furthest past its threshold (ratio >= 1), from the same window. Only
  // the winner's text is built (this runs every tick for every GPU).
  enum class Limiter { kUnknown, kCpu, kIowait, kTransfers, kCollectives, kScheduling };
  double best = 1.0;
  Limiter winner = Limiter::kUnknown;
  auto consider = [&](double ratio, Limiter which) {
    if (ratio >= best) {
      best = ratio;
      winner = which;
    }
  };
  if (v.cpu_busy_pct && p.cpu_busy_pct > 0) {
    consider(*v.cpu_busy_pct / p.cpu_busy_pct, Limiter::kCpu);
  }
  if (v.iowait_pct && p.iowait_pct > 0) consider(*v.iowait_pct / p.iowait_pct, Limiter::kIowait);
  double h2d_pct = 0;
  if (v.pcie_rx_bytes_per_s && v.pcie_link_bytes_per_s && *v.pcie_link_bytes_per_s > 0 &&
      p.pcie_h2d_link_pct > 0) {
    h2d_pct = 100.0 * *v.pcie_rx_bytes_per_s / *v.pcie_link_bytes_per_s;
    consider(h2d_pct / p.pcie_h2d_link_pct, Limiter::kTransfers);
  }
  if (v.net_link_pct && p.net_link_pct > 0) {
    consider(*v.net_link_pct / p.net_link_pct, Limiter::kCollectives);
  }
  if (v.waiting_requests && *v.waiting_requests >= 1) {
    // Requests waiting while the GPU is under-used: the batching, not the hardware, limits.
    consider(1.0 + *v.waiting_requests, Limiter::kScheduling);
  }
  switch (winner) {
    case Limiter::kUnknown:
      v.limiter = "unknown";
      v.limiter_text = "no host, PCIe or network signal of the window stands out";
      break;
    case Limiter::kCpu:
      v.limiter = "input";
      v.limiter_text = "input pipeline: host CPU " + Pct(*v.cpu_busy_pct) + " busy on average";
      break;
    case Limiter::kIowait:
      v.limiter = "input";
      v.limiter_text = "input pipeline: host iowait " + Pct(*v.iowait_pct) + " on average";
      break;
    case Limiter::kTransfers:
      v.limiter = "transfers";
      v.limiter_text = "host-to-GPU transfers: PCIe RX " + Rate(*v.pcie_rx_bytes_per_s) + " (" +
                       Pct(h2d_pct) + " of the link)";
      break;
    case Limiter::kCollectives:
      v.limiter = "collectives";
      v.limiter_text =
          "collectives: " + (v.net_name.empty() ? std::string("the network") : v.net_name) +
          " at " + Pct(*v.net_link_pct) + " of its speed";
      break;
    case Limiter::kScheduling:
      v.limiter = "scheduling";
      v.limiter_text = "scheduling: " + FormatDouble(*v.waiting_requests, 1) +
                       " inference requests waiting on average";
      break;
  }
  return v;
}

// Means over the samples that show it (all samples when none does): the figures of the fact, not
// diluted by the part of the window before it began.
ThrashingVerdict ThrashingFrom(const ThrashingSums& sums, double covered_s,
                               const ThrashingParams& p) {
  ThrashingVerdict v;
  v.covered_s = covered_s;
  v.samples = sums.n;
  if (sums.n <= 0) return v;
  v.share_pct = 100.0 * sums.both / v.samples;
  const int k = sums.both > 0 ? 1 : 0;
  const double n = sums.both > 0 ? sums.both : v.samples;
  v.mean_used_pct = sums.used[k] / n;
  v.mean_rx_bytes_per_s = sums.rx[k] / n;
  v.mean_tx_bytes_per_s = sums.tx[k] / n;
  v.detected = v.samples >= kMinSamples && v.covered_s >= kCoverage * p.window_s &&
               v.share_pct >= p.min_share_pct;
  return v;
}

}  // namespace

UnderuseVerdict JudgeUnderuse(const std::deque<GpuWindowSample>& samples, double now_s,
                              const UnderuseParams& p) {
  UnderuseSums sums;
  double covered_s = 0;
  std::string net_name;
  bool first = true;
  for (const GpuWindowSample& s : samples) {
    if (!InWindow(s, now_s, p.window_s)) continue;
    if (first) covered_s = now_s - s.at_s;
    first = false;
    sums.Add(s, +1);
    if (s.util_pct && !s.net_name.empty()) net_name = s.net_name;
  }
  return UnderuseFrom(sums, covered_s, std::move(net_name), p);
}

ThrashingVerdict JudgeThrashing(const std::deque<GpuWindowSample>& samples, double now_s,
                                const ThrashingParams& p) {
  ThrashingSums sums;
  double covered_s = 0;
  bool first = true;
  for (const GpuWindowSample& s : samples) {
    if (!InWindow(s, now_s, p.window_s)) continue;
    if (first) covered_s = now_s - s.at_s;
    first = false;
    sums.Add(s, +1, p);
  }
  return ThrashingFrom(sums, covered_s, p);
}

void GpuSampleWindow::Add(GpuWindowSample s, const UnderuseParams& up, const ThrashingParams& tp) {
  // Time went back (a monotonic clock never does): the window starts afresh.
  const bool restart = !samples_.empty() && s.at_s < samples_.back().at_s;
  if (restart) samples_.clear();
  const double now_s = s.at_s;
  const bool same_params = !restart && up == up_ && tp == tp_;
  up_ = up;
  tp_ = tp;
  if (restart) named_seq_.reset();
  if (s.util_pct && !s.net_name.empty()) {
    named_seq_ = pushed_;
    named_ = s.net_name;
  }
  ++pushed_;
  samples_.push_back(std::move(s));
  const double keep_s = std::max(up.window_s, tp.window_s);
  bool rebuild = !same_params || ++updates_since_exact_ >= kExactEvery;
  if (!rebuild) {
    underuse_.Add(samples_.back(), +1);
    thrashing_.Add(samples_.back(), +1, tp_);
  }
  while (!samples_.empty() &&
         (now_s - samples_.front().at_s > keep_s || samples_.size() > kMaxSamples)) {
    // A sample leaving the history leaves a window it is still in only past kMaxSamples.
    if (!rebuild) {
      if (underuse_begin_ == 0) underuse_.Add(samples_.front(), -1);
      if (thrashing_begin_ == 0) thrashing_.Add(samples_.front(), -1, tp_);
    }
    underuse_begin_ -= underuse_begin_ > 0 ? 1 : 0;
    thrashing_begin_ -= thrashing_begin_ > 0 ? 1 : 0;
    samples_.pop_front();
  }
  if (rebuild) {
    Rebuild();
    return;
  }
  while (underuse_begin_ < samples_.size() &&
         !InWindow(samples_[underuse_begin_], now_s, up_.window_s)) {
    underuse_.Add(samples_[underuse_begin_++], -1);
  }
  while (thrashing_begin_ < samples_.size() &&
         !InWindow(samples_[thrashing_begin_], now_s, tp_.window_s)) {
    thrashing_.Add(samples_[thrashing_begin_++], -1, tp_);
  }
}

void GpuSampleWindow::Rebuild() {
  updates_since_exact_ = 0;
  underuse_ = {};
  thrashing_ = {};
  underuse_begin_ = thrashing_begin_ = samples_.size();
  if (samples_.empty()) return;
  const double now_s = samples_.back().at_s;
  for (size_t i = 0; i < samples_.size(); ++i) {
    const GpuWindowSample& s = samples_[i];
    if (InWindow(s, now_s, up_.window_s)) {
      underuse_begin_ = std::min(underuse_begin_, i);
      underuse_.Add(s, +1);
    }
    if (InWindow(s, now_s, tp_.window_s)) {
      thrashing_begin_ = std::min(thrashing_begin_, i);
      thrashing_.Add(s, +1, tp_);
    }
  }
}

UnderuseVerdict GpuSampleWindow::Underuse() const {
  if (underuse_begin_ >= samples_.size()) return UnderuseFrom({}, 0, {}, up_);
  // The newest named sample is in the window while its sequence number is not before the
  // window's oldest sample's (a window is a suffix of the samples).
  const uint64_t oldest_seq = pushed_ - samples_.size() + underuse_begin_;
  const bool named = named_seq_ && *named_seq_ >= oldest_seq;
  return UnderuseFrom(underuse_, samples_.back().at_s - samples_[underuse_begin_].at_s,
                      named ? named_ : std::string(), up_);
}

ThrashingVerdict GpuSampleWindow::Thrashing() const {
  if (thrashing_begin_ >= samples_.size()) return ThrashingFrom({}, 0, tp_);
  return ThrashingFrom(thrashing_, samples_.back().at_s - samples_[thrashing_begin_].at_s, tp_);
}

UnderuseParams UnderuseParamsFrom(const Thresholds& t) {
  const char* id = "gpu.util.underused";
  UnderuseParams p;
  p.window_s = std::clamp(t.Get(id, "window_s"), 1.0, kMaxWindowS);
  p.max_mean_util_pct = t.Get(id, "max_mean_util_pct");
  p.idle_util_pct = t.Get("gpu.util.low", "max_util_pct");
  p.cpu_busy_pct = t.Get(id, "cpu_busy_pct");
  p.iowait_pct = t.Get(id, "iowait_pct");
  p.pcie_h2d_link_pct = t.Get(id, "pcie_h2d_link_pct");
  p.net_link_pct = t.Get(id, "net_link_pct");
  return p;
}

ThrashingParams ThrashingParamsFrom(const Thresholds& t) {
  const char* id = "gpu.memory.thrashing";
  ThrashingParams p;
  p.window_s = std::clamp(t.Get(id, "window_s"), 1.0, kMaxWindowS);
  p.min_used_pct = t.Get(id, "min_used_pct");
  p.min_each_way_mb_per_s = t.Get(id, "min_each_way_mb_per_s");
  p.min_share_pct = t.Get(id, "min_share_pct");
  return p;
}

void FillHostSignals(const Snapshot& snap, GpuWindowSample& s) {
  if (snap.host.cpu) {
    s.cpu_busy_pct = snap.host.cpu->busy_pct;
    s.iowait_pct = snap.host.cpu->iowait_pct;
  }
  auto take = [&](double pct, const std::string& name) {
    if (!std::isfinite(pct) || pct < 0) return;
    if (!s.net_link_pct || pct > *s.net_link_pct) {
      s.net_link_pct = std::min(pct, 100.0);
      s.net_name = name;
    }
  };
  if (snap.network.nics) {
    for (const NicFacts& n : *snap.network.nics) {
      if (!n.physical || !n.speed_mbps || *n.speed_mbps <= 0) continue;
      if (!n.rx_bytes_per_s && !n.tx_bytes_per_s) continue;
      double bps = std::max(n.rx_bytes_per_s.value_or(0), n.tx_bytes_per_s.value_or(0)) * 8;
      take(100.0 * bps / (static_cast<double>(*n.speed_mbps) * 1e6), n.name);
    }
  }
  if (snap.network.ib_ports) {
    for (const IbPortFacts& p : *snap.network.ib_ports) {
      if (!p.rate_gbps || *p.rate_gbps <= 0 || !p.window_s || *p.window_s <= 0) continue;
      // port_xmit_data / port_rcv_data count 4-byte words (Linux sysfs-class-infiniband).
      auto rate = [&](const char* counter) -> std::optional<double> {
        auto it = p.counters_delta.find(counter);
        if (it == p.counters_delta.end()) return std::nullopt;
        return static_cast<double>(it->second) * 4 * 8 / *p.window_s;
      };
      std::optional<double> tx = rate("port_xmit_data"), rx = rate("port_rcv_data");
      if (!tx && !rx) continue;
      take(100.0 * std::max(tx.value_or(0), rx.value_or(0)) / (*p.rate_gbps * 1e9),
           p.device + "/" + std::to_string(p.port));
    }
  }
}

void GpuWindows::Add(const Snapshot& snap, double now_s, const Thresholds& t,
                     std::vector<Finding>& findings) {
  UnderuseParams up = UnderuseParamsFrom(t);
  ThrashingParams tp = ThrashingParamsFrom(t);
  double keep_s = std::max(up.window_s, tp.window_s);
  GpuWindowSample host;
  FillHostSignals(snap, host);
  for (const GpuFacts& g : snap.gpu.gpus) {
    if (g.hung || g.unfinished || g.lost) continue;
    GpuWindowSample s = host;
    s.at_s = now_s;
    if (g.util_gpu_pct) s.util_pct = *g.util_gpu_pct;
    s.held = g.processes && !g.processes->empty();
    if (g.memory_used_bytes && g.memory_total_bytes && *g.memory_total_bytes > 0) {
      s.memory_used_pct = 100.0 * *g.memory_used_bytes / *g.memory_total_bytes;
    }
    if (g.pcie_rx_bytes_per_s) s.pcie_rx_bytes_per_s = static_cast<double>(*g.pcie_rx_bytes_per_s);
    if (g.pcie_tx_bytes_per_s) s.pcie_tx_bytes_per_s = static_cast<double>(*g.pcie_tx_bytes_per_s);
    std::optional<uint32_t> gen = g.pcie_gen ? g.pcie_gen : g.pcie_max_gen;
    std::optional<uint32_t> width = g.pcie_width ? g.pcie_width : g.pcie_max_width;
    if (gen && width) s.pcie_link_bytes_per_s = PcieLinkBytesPerSecond(*gen, *width);
    s.waiting_requests = InferenceWaitingRequests(snap, g);

    GpuSampleWindow& series = samples_[GpuIdentityKey(g)];
    series.Add(std::move(s), up, tp);

    UnderuseVerdict u = series.Underuse();
    bool sawtooth = std::any_of(findings.begin(), findings.end(), [&](const Finding& f) {
      return f.id == "gpu.util.sawtooth" && f.gpu && f.gpu->index == g.index;
    });
    if (u.detected && !sawtooth) {
      Finding f = GpuFinding("gpu.util.underused", Severity::kInfo, g,
                             "held by a job but only " + Pct(u.mean_util_pct) +
                                 " busy on average over the last " + Minutes(u.covered_s) +
                                 "; likely limiter: " + u.limiter_text);
      f.Add("mean_util_pct", u.mean_util_pct)
          .Add("window_s", u.covered_s)
          .Add("samples", u.samples)
          .Add("held_share_pct", u.held_share_pct)
          .Add("limiter", u.limiter);
      if (u.cpu_busy_pct) f.Add("cpu_busy_mean_pct", *u.cpu_busy_pct);
      if (u.iowait_pct) f.Add("iowait_mean_pct", *u.iowait_pct);
      if (u.pcie_rx_bytes_per_s) f.Add("pcie_h2d_mean_bytes_per_s", *u.pcie_rx_bytes_per_s);
      if (u.pcie_tx_bytes_per_s) f.Add("pcie_d2h_mean_bytes_per_s", *u.pcie_tx_bytes_per_s);
      if (u.pcie_link_bytes_per_s) f.Add("pcie_link_bytes_per_s", *u.pcie_link_bytes_per_s);
      if (u.net_link_pct)
        f.Add("net_busiest_link_pct", *u.net_link_pct).Add("net_busiest", u.net_name);
      if (u.waiting_requests) f.Add("inference_waiting_requests", *u.waiting_requests);
      KeepStepsFor(f, u.limiter);
      findings.push_back(std::move(f));
    }

    ThrashingVerdict th = series.Thrashing();
    if (th.detected) {
      Finding f =
          GpuFinding("gpu.memory.thrashing", Severity::kWarn, g,
                     "memory " + Pct(th.mean_used_pct) + " full with PCIe busy both ways (" +
                         Rate(th.mean_rx_bytes_per_s) + " in, " + Rate(th.mean_tx_bytes_per_s) +
                         " out on average) over the last " + Minutes(th.covered_s) +
                         ": data paged between host and GPU");
      f.Add("mean_used_pct", th.mean_used_pct)
          .Add("pcie_h2d_mean_bytes_per_s", th.mean_rx_bytes_per_s)
          .Add("pcie_d2h_mean_bytes_per_s", th.mean_tx_bytes_per_s)
          .Add("share_pct", th.share_pct)
          .Add("window_s", th.covered_s)
          .Add("samples", th.samples);
      if (g.processes) f.Add("processes", static_cast<int64_t>(g.processes->size()));
      findings.push_back(std::move(f));
    }
  }
  // GPUs no longer seen (removed, renumbered identities) are forgotten once their window is over.
  for (auto it = samples_.begin(); it != samples_.end();) {
    it = it->second.empty() || now_s - it->second.newest_at_s() > keep_s ? samples_.erase(it)
                                                                         : std::next(it);
  }
}

}  // namespace gpudoctor
