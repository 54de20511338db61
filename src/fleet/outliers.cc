#include "fleet/outliers.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <memory>
#include <span>
#include <unordered_map>
#include <utility>

namespace gpudoctor::fleet {
namespace {

enum Metric { kClock = 0, kPower, kTemp, kErrors, kUtil, kMetricCount };
constexpr const char* kMetricNames[kMetricCount] = {"sm_clock_mhz", "power_w", "temp_c", "errors",
                                                    "util_pct"};
// One card in one window, with the values judged (NaN = absent; clock, power and temperature
// only under load). Copied out of the samples so the per-group passes read memory in order.
struct Entry {
  uint32_t card;
  uint32_t reasons;
  float limit;  // the card's configured power limit, W (NaN = unknown)
  float v[kMetricCount];
};

struct CardTally {
  int compared = 0;
  int outlier = 0;
  int hw_windows = 0;
  int capped_windows = 0;
  int workload_windows = 0;
  bool throttle = false;
  int metric_windows[kMetricCount] = {};
  std::vector<float> values[kMetricCount];
  std::vector<float> peers[kMetricCount];
};

// Robust spread with a floor: identical peers must not make a tiny difference an outlier.
double Spread(double mad, double median, Metric m) {
  double floor = 0;
  switch (m) {
    case kClock:
      floor = 0.02 * std::fabs(median) + 15;
      break;  // 2% + 15 MHz
    case kPower:
      floor = 0.05 * std::fabs(median) + 10;
      break;  // 5% + 10 W
    case kTemp:
      floor = 2.0;
      break;  // 2 °C
    case kErrors:
      floor = 1.0;
      break;  // 1 error per window
    case kUtil:
      floor = 5.0;
      break;  // 5 points
    default:
      break;
  }
  return std::max(1.4826 * mad, floor);
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Sample indices so that each card's samples come in time order: empty when storage order
// already is (reports read in order, Prometheus series), else sorted by time. Storage order
// reads memory sequentially, which is what makes 6 million samples cheap.
std::vector<uint32_t> TimeOrder(const std::vector<GpuSample>& samples, size_t n_cards) {
  std::vector<uint32_t> order;
  std::vector<int64_t> last_t(n_cards, INT64_MIN);
  for (const auto& s : samples) {
    if (s.time_s < last_t[s.card]) {
      order.resize(samples.size());
      for (uint32_t i = 0; i < samples.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return samples[a].time_s < samples[b].time_s;
      });
      return order;
    }
    last_t[s.card] = s.time_s;
  }
  return order;
}

const char* kAdvice[] = {
    // hardware
    "Hardware slowness: check cooling, power and error counters (gpudoctor check on the node), "
    "drain it from synchronous jobs and run `dcgmi diag -r 3`; if it recurs in another slot the "
    "card is bad (gpudoctor fleet card).",
    // capped
    "Clocks limited by configuration or the job, not by a fault: a power-heavy job at its power "
    "cap, a lower configured power limit or application clocks. Check `nvidia-smi -q -d "
    "PERFORMANCE,POWER`; raise the limit or reset application clocks if unintended. Draining the "
    "node will not fix it.",
    // victim
    "Waiting on a slower GPU of the same node at collectives: fix the GPU it waits on (see "
    "waits_on); this one is not the cause.",
    // workload
    "Workload imbalance: low utilisation with healthy clocks while peers are busy. This is the "
    "job's doing (data loading, pipeline stage, rank placement); draining the node will not fix "
    "it.",
};

int KindRank(const std::string& k) {
  return k == "hardware" ? 0 : k == "capped" ? 1 : k == "victim" ? 2 : 3;
}

}  // namespace

double MedianInPlace(std::vector<double>& v) {
  if (v.empty()) return 0;
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  double hi = v[mid];
  if (v.size() % 2 == 1) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + mid);
  return (lo + hi) / 2;
}

std::vector<Straggler> FindStragglers(const FleetData& data, const OutlierOptions& opt) {
  const auto& samples = data.samples;
  const size_t n_cards = data.cards.size();
  const int64_t window_s = std::max<int64_t>(1, opt.window_s);
  std::vector<uint32_t> order = TimeOrder(samples, n_cards);
  std::unordered_map<std::string, uint32_t> model_ids;
  std::vector<uint32_t> model_of(n_cards), model_cards;
  std::vector<float> limit_of(n_cards, NAN);
  for (size_t c = 0; c < n_cards; ++c) {
    if (auto l = data.cards[c].power_limit_w; l && *l > 0) limit_of[c] = *l;
    model_of[c] = model_ids.emplace(data.cards[c].model, model_ids.size()).first->second;
    if (model_of[c] >= model_cards.size()) model_cards.resize(model_of[c] + 1, 0);
    ++model_cards[model_of[c]];
  }
  // Groups: (model, window) -> entries, one per card (its latest sample in the window), laid
  // out contiguously in one arena: a first pass over the samples counts each group's entries,
  // a second writes them in place (no per-group vectors, no hash lookup per entry).
  std::unordered_map<int64_t, uint32_t> group_ids;
  std::vector<size_t> group_start;  // group id -> first entry; then, while filling, next free
  // The group of the last flush per model: flushes come in runs of one window.
  std::vector<std::pair<int64_t, uint32_t>> last_group(model_cards.size(), {INT64_MIN, 0});
  auto group_of = [&](uint32_t c, int64_t window) {
    auto& last = last_group[model_of[c]];
    if (last.first == window) return last.second;
    int64_t key = (static_cast<int64_t>(model_of[c]) << 40) ^ (window & ((int64_t{1} << 40) - 1));
    auto [it, inserted] = group_ids.emplace(key, static_cast<uint32_t>(group_start.size()));
    if (inserted) group_start.push_back(0);
    last = {window, it->second};
    return it->second;
  };
  const size_t n = samples.size();
  {
    std::vector<int64_t> window_of(n_cards, INT64_MIN);
    for (size_t k = 0; k < n; ++k) {
      const GpuSample& s = samples[order.empty() ? k : order[k]];
      int64_t w = FloorDiv(s.time_s, window_s);
      if (w == window_of[s.card]) continue;
      if (window_of[s.card] != INT64_MIN) ++group_start[group_of(s.card, window_of[s.card])];
      window_of[s.card] = w;
    }
    for (uint32_t c = 0; c < n_cards; ++c) {
      if (window_of[c] != INT64_MIN) ++group_start[group_of(c, window_of[c])];
    }
  }
  const size_t n_groups = group_start.size();
  std::vector<size_t> group_size(group_start);
  size_t total = 0;
  for (size_t& g : group_start) total += std::exchange(g, total);
  std::vector<size_t> group_fill(group_start);
  std::unique_ptr<Entry[]> arena(new Entry[std::max<size_t>(total, 1)]);
  struct CardState {
    int64_t window = INT64_MIN;
    Entry pending;
    std::optional<double> pending_err, prev_err;
  };
  std::vector<CardState> state(n_cards);
  auto flush = [&](uint32_t c) {
    CardState& st = state[c];
    if (st.window == INT64_MIN) return;
    float delta = NAN;
    if (st.pending_err && st.prev_err && *st.pending_err >= *st.prev_err) {
      delta = static_cast<float>(*st.pending_err - *st.prev_err);
    }
    st.prev_err = st.pending_err;
    st.pending.v[kErrors] = delta;
    arena[group_fill[group_of(c, st.window)]++] = st.pending;
  };
  for (size_t k = 0; k < n; ++k) {
    const GpuSample& s = samples[order.empty() ? k : order[k]];
    const uint32_t c = s.card;
    CardState& st = state[c];
    int64_t w = FloorDiv(s.time_s, window_s);
    if (w != st.window) {
      flush(c);
      st.window = w;
    }
    // The latest sample of the window replaces an earlier one.
    bool busy = s.util_pct && *s.util_pct >= opt.busy_util_pct;
    Entry& e = st.pending;
    e = Entry{c, s.clock_event_reasons.value_or(0), limit_of[c], {NAN, NAN, NAN, NAN, NAN}};
    if (busy && s.sm_clock_mhz) e.v[kClock] = *s.sm_clock_mhz;
    if (busy && s.power_w) e.v[kPower] = *s.power_w;
    if (busy && s.temp_c) e.v[kTemp] = *s.temp_c;
    // An idle GPU has no work to be slow at: not compared on utilisation (FindIdle).
    if (s.util_pct && *s.util_pct > opt.idle_util_pct) e.v[kUtil] = *s.util_pct;
    st.pending_err.reset();
    if (s.ecc_sbe || s.ecc_dbe || s.pcie_replays) {
      st.pending_err = double(s.ecc_sbe.value_or(0)) + double(s.ecc_dbe.value_or(0)) +
                       double(s.pcie_replays.value_or(0));
    }
  }
  for (uint32_t c = 0; c < n_cards; ++c) flush(c);
  std::vector<CardTally> tally(n_cards);
  std::vector<double> vals;
  for (size_t g = 0; g < n_groups; ++g) {
    const std::span<const Entry> entries(arena.get() + group_start[g], group_size[g]);
    if (static_cast<int>(entries.size()) < opt.min_peers) continue;
    double median[kMetricCount], spread[kMetricCount];
    bool usable[kMetricCount];
    for (int m = 0; m < kMetricCount; ++m) {
      vals.clear();
      for (const auto& e : entries) {
        if (!std::isnan(e.v[m])) vals.push_back(e.v[m]);
      }
      usable[m] = static_cast<int>(vals.size()) >= opt.min_peers;
      if (!usable[m]) continue;
      median[m] = MedianInPlace(vals);
      for (auto& v : vals) v = std::fabs(v - median[m]);
      spread[m] = Spread(MedianInPlace(vals), median[m], Metric(m));
    }
    // Utilisation is only a straggler signal when the peers are busy.
    if (usable[kUtil] && median[kUtil] < opt.busy_util_pct) usable[kUtil] = false;
    // The peers' configured power limit, to tell a lower limit (configuration) from a fault.
    vals.clear();
    for (const auto& e : entries) {
      if (!std::isnan(e.limit)) vals.push_back(e.limit);
    }
    const double peer_limit = vals.empty() ? 0 : MedianInPlace(vals);
    for (const auto& e : entries) {
      CardTally& t = tally[e.card];
      bool compared = false;
      bool flagged[kMetricCount] = {};
      double z[kMetricCount] = {};
      for (int m = 0; m < kMetricCount; ++m) {
        if (!usable[m] || std::isnan(e.v[m])) continue;
        compared = true;
        z[m] = (e.v[m] - median[m]) / spread[m];
        bool low_bad = m == kClock || m == kPower || m == kUtil;
        flagged[m] = low_bad ? z[m] < -opt.z_threshold : z[m] > opt.z_threshold;
      }
      if (!compared) continue;
      ++t.compared;
      // Drawing more power than the peers: a heavier job (at its power cap when the SW power
      // cap reason is set), which explains lower clocks and a higher temperature.
      const bool power_above = usable[kPower] && !std::isnan(e.v[kPower]) && z[kPower] >= 1.0;
      const bool limit_low = !std::isnan(e.limit) && e.limit < 0.9 * peer_limit;
      const bool hw_reason = (e.reasons & kHardwareReasons) != 0;
      bool hw = flagged[kErrors] || (flagged[kTemp] && !power_above);
      bool capped = false;
      if (flagged[kClock]) {
        if (hw_reason) {
          hw = true;
        } else if ((e.reasons & kConfigReasons) != 0 || limit_low || power_above) {
          capped = true;
        } else {
          hw = true;  // a clock deficit at the same power and temperature as the peers
        }
      }
      const bool workload = !hw && !capped && (flagged[kUtil] || flagged[kPower]);
      if (!hw && !capped && !workload) continue;
      ++t.outlier;
      if (hw) {
        ++t.hw_windows;
        if (hw_reason) t.throttle = true;
      } else if (capped) {
        ++t.capped_windows;
      } else {
        ++t.workload_windows;
      }
      for (int m = 0; m < kMetricCount; ++m) {
        if (!flagged[m]) continue;
        ++t.metric_windows[m];
        t.values[m].push_back(e.v[m]);
        t.peers[m].push_back(static_cast<float>(median[m]));
      }
    }
  }
  std::vector<Straggler> out;
  for (uint32_t c = 0; c < n_cards; ++c) {
    const CardTally& t = tally[c];
    if (t.outlier < opt.persist_windows || 2 * t.outlier < t.compared) continue;
    Straggler s;
    s.card = c;
    s.windows_compared = t.compared;
    s.windows_outlier = t.outlier;
    s.throttle_seen = t.throttle;
    s.kind = 2 * t.hw_windows >= t.outlier            ? "hardware"
             : t.capped_windows >= t.workload_windows ? "capped"
                                                      : "workload";
    for (int m = 0; m < kMetricCount; ++m) {
      if (t.metric_windows[m] == 0) continue;
      std::vector<double> a(t.values[m].begin(), t.values[m].end());
      std::vector<double> b(t.peers[m].begin(), t.peers[m].end());
      s.metrics.push_back(
          {kMetricNames[m], t.metric_windows[m], MedianInPlace(a), MedianInPlace(b)});
    }
    s.advice = kAdvice[KindRank(s.kind)];
    if (s.kind == "hardware" && t.throttle) {
      s.advice = "The GPU reports hardware throttle reasons. " + s.advice;
    }
    out.push_back(std::move(s));
  }
  // Victims: the GPUs of a node that holds a hardware straggler wait for it at collectives.
  std::unordered_map<std::string, size_t> holder;  // node -> index into out
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].kind != "hardware") continue;
    const std::string& node = data.cards[out[i].card].node;
    auto [it, inserted] = holder.emplace(node, i);
    if (!inserted && out[i].windows_outlier > out[it->second].windows_outlier) it->second = i;
  }
  for (auto& s : out) {
    if (s.kind == "hardware") continue;
    auto it = holder.find(data.cards[s.card].node);
    if (it == holder.end()) continue;
    s.kind = "victim";
    s.waits_on = out[it->second].card;
    s.advice = kAdvice[KindRank("victim")];
    ++out[it->second].holds_back;
  }
  std::sort(out.begin(), out.end(), [](const Straggler& a, const Straggler& b) {
    if (a.kind != b.kind) return KindRank(a.kind) < KindRank(b.kind);
    if (a.windows_outlier != b.windows_outlier) return a.windows_outlier > b.windows_outlier;
    return a.card < b.card;
  });
  return out;
}

}  // namespace gpudoctor::fleet

namespace gpudoctor::fleet {

std::vector<IdleGpu> FindIdle(const FleetData& data, const OutlierOptions& opt) {
  const auto& samples = data.samples;
  const size_t n_cards = data.cards.size();
  const int64_t window_s = std::max<int64_t>(1, opt.window_s);
  std::vector<uint32_t> order = TimeOrder(samples, n_cards);
  struct State {
    int64_t window = INT64_MIN;
    bool idle = false;
    int seen = 0, idle_windows = 0;
  };
  std::vector<State> st(n_cards);
  auto flush = [&](State& c) {
    if (c.window == INT64_MIN) return;
    ++c.seen;
    c.idle_windows += c.idle;
  };
  for (size_t k = 0; k < samples.size(); ++k) {
    const GpuSample& s = samples[order.empty() ? k : order[k]];
    if (!s.util_pct) continue;
    State& c = st[s.card];
    int64_t w = FloorDiv(s.time_s, window_s);
    if (w != c.window) {
      flush(c);
      c.window = w;
    }
    c.idle = *s.util_pct <= opt.idle_util_pct;  // the window's latest sample decides
  }
  std::vector<IdleGpu> out;
  for (uint32_t c = 0; c < n_cards; ++c) {
    flush(st[c]);
    if (st[c].idle_windows < opt.persist_windows || 2 * st[c].idle_windows < st[c].seen) continue;
    out.push_back({c, st[c].idle_windows, st[c].seen});
  }
  return out;
}

}  // namespace gpudoctor::fleet
