// The straggler and idle analysis as it was before the single-pass rewrite (commit ce4afaa,
// src/fleet/outliers.cc): per-window Entry groups, medians and MADs by nth_element on doubles.
// Kept only as the exact reference that fleet_outliers_exact_test.cc compares the fast path
// with; not built into the library. Header-only, included by that one test.
#pragma once

#include <algorithm>
#include <climits>
#include <cmath>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fleet/outliers.h"

namespace gpudoctor::fleet::reference {
namespace detail {

enum Metric { kClock = 0, kPower, kTemp, kErrors, kUtil, kMetricCount };
inline constexpr const char* kMetricNames[kMetricCount] = {"sm_clock_mhz", "power_w", "temp_c",
                                                           "errors", "util_pct"};
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
inline double Spread(double mad, double median, Metric m) {
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

inline int64_t FloorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

// Sample indices so that each card's samples come in time order: empty when storage order
// already is (reports read in order, Prometheus series), else sorted by time. Storage order
// reads memory sequentially, which is what makes 6 million samples cheap.
inline std::vector<uint32_t> TimeOrder(const std::vector<GpuSample>& samples, size_t n_cards) {
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

// The samples visited window by window (windows of `window_s`, in time order) and, within a
// window, each card's samples in time order: `index` (empty: storage order already is) and, per
// window, its [begin, end) range in that order. Samples in storage order per card (reports read
// in order, Prometheus series) are bucketed by window in one stable counting pass; otherwise
// they are sorted by time.
struct WindowOrder {
  std::vector<uint32_t> index;
  std::vector<std::pair<size_t, size_t>> windows;
};

inline WindowOrder OrderByWindow(const std::vector<GpuSample>& samples, size_t n_cards,
                                 int64_t window_s) {
  WindowOrder o;
  const size_t n = samples.size();
  if (n == 0) return o;
  std::vector<uint32_t> by_time = TimeOrder(samples, n_cards);
  auto at = [&](size_t k) -> const GpuSample& { return samples[by_time.empty() ? k : by_time[k]]; };
  // Already in window order (the common case for generated and time-sliced input)?
  bool sorted = true;
  int64_t lo = INT64_MAX, hi = INT64_MIN, prev = INT64_MIN;
  for (size_t k = 0; k < n; ++k) {
    int64_t w = FloorDiv(at(k).time_s, window_s);
    if (w < prev) sorted = false;
    prev = w;
    lo = std::min(lo, w);
    hi = std::max(hi, w);
  }
  if (!sorted && static_cast<uint64_t>(hi - lo) < 4 * n + 1024) {
    // Counting sort by window, stable: each card's samples stay in time order.
    std::vector<size_t> start(static_cast<size_t>(hi - lo) + 2, 0);
    for (size_t k = 0; k < n; ++k) ++start[FloorDiv(at(k).time_s, window_s) - lo + 1];
    for (size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
    o.index.resize(n);
    for (size_t k = 0; k < n; ++k) {
      size_t& slot = start[FloorDiv(at(k).time_s, window_s) - lo];
      o.index[slot++] = by_time.empty() ? static_cast<uint32_t>(k) : by_time[k];
    }
  } else if (!sorted) {
    // Windows spread too far for buckets: a full sort by time.
    o.index.resize(n);
    for (uint32_t i = 0; i < n; ++i) o.index[i] = i;
    std::stable_sort(o.index.begin(), o.index.end(),
                     [&](uint32_t a, uint32_t b) { return samples[a].time_s < samples[b].time_s; });
  } else {
    o.index = std::move(by_time);
  }
  size_t begin = 0;
  int64_t current = INT64_MIN;
  for (size_t k = 0; k < n; ++k) {
    int64_t w = FloorDiv(samples[o.index.empty() ? k : o.index[k]].time_s, window_s);
    if (w != current) {
      if (k > begin) o.windows.emplace_back(begin, k);
      begin = k;
      current = w;
    }
  }
  o.windows.emplace_back(begin, n);
  return o;
}

inline const char* const kAdvice[] = {
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
    "Waiting on a slower GPU of the same node or job at collectives: fix the GPU it waits on "
    "(see waits_on); this one is not the cause.",
    // workload
    "Workload imbalance: low utilisation with healthy clocks while peers are busy. This is the "
    "job's doing (data loading, pipeline stage, rank placement); draining the node will not fix "
    "it.",
};

// A slot's name: the job labels are per slot (node, bus), whatever card sits in it.
inline std::string CardKeyOfSlot(const Card& c) { return c.node + '\x1f' + c.pci_bus_id; }

inline int KindRank(const std::string& k) {
  return k == "hardware" ? 0 : k == "capped" ? 1 : k == "victim" ? 2 : 3;
}

}  // namespace detail
using namespace detail;

inline double RefMedianInPlace(std::vector<double>& v) {
  if (v.empty()) return 0;
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  double hi = v[mid];
  if (v.size() % 2 == 1) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + mid);
  return (lo + hi) / 2;
}

inline std::vector<Straggler> ReferenceFindStragglers(const FleetData& data,
                                                      const OutlierOptions& opt) {
  const auto& samples = data.samples;
  const size_t n_cards = data.cards.size();
  const int64_t window_s = std::max<int64_t>(1, opt.window_s);
  std::unordered_map<std::string, uint32_t> model_ids;
  std::vector<uint32_t> model_of(n_cards), model_cards;
  std::vector<float> limit_of(n_cards, NAN);
  for (size_t c = 0; c < n_cards; ++c) {
    if (auto l = data.cards[c].power_limit_w; l && *l > 0) limit_of[c] = *l;
    model_of[c] = model_ids.emplace(data.cards[c].model, model_ids.size()).first->second;
    if (model_of[c] >= model_cards.size()) model_cards.resize(model_of[c] + 1, 0);
    ++model_cards[model_of[c]];
  }
  // Windows are judged one at a time, in time order: the samples are visited window by window
  // (WindowOrder), each card's latest sample of the window becomes its entry, and the window's
  // entries are grouped per model into buffers reused from window to window. Memory is
  // O(cards), not O(cards x windows), and every pass reads contiguous memory.
  const WindowOrder order = OrderByWindow(samples, n_cards, window_s);
  std::vector<std::vector<Entry>> groups(model_cards.size());
  for (size_t m = 0; m < groups.size(); ++m) groups[m].reserve(model_cards[m]);
  struct CardState {
    uint32_t seen_in = UINT32_MAX;  // the window (index into order.windows) of `pending`
    Entry pending;
    bool has_pending_err = false, has_prev_err = false;
    double pending_err = 0, prev_err = 0;
  };
  std::vector<CardState> state(n_cards);
  std::vector<uint32_t> touched;
  touched.reserve(n_cards);
  std::vector<CardTally> tally(n_cards);
  std::vector<double> vals;
  vals.reserve(n_cards);
  auto judge = [&](std::span<const Entry> entries) {
    if (static_cast<int>(entries.size()) < opt.min_peers) return;
    double median[kMetricCount], spread[kMetricCount];
    bool usable[kMetricCount];
    for (int m = 0; m < kMetricCount; ++m) {
      vals.clear();
      for (const auto& e : entries) {
        if (!std::isnan(e.v[m])) vals.push_back(e.v[m]);
      }
      usable[m] = static_cast<int>(vals.size()) >= opt.min_peers;
      if (!usable[m]) continue;
      median[m] = RefMedianInPlace(vals);
      for (auto& v : vals) v = std::fabs(v - median[m]);
      spread[m] = Spread(RefMedianInPlace(vals), median[m], Metric(m));
    }
    // Utilisation is only a straggler signal when the peers are busy.
    if (usable[kUtil] && median[kUtil] < opt.busy_util_pct) usable[kUtil] = false;
    // The peers' configured power limit, to tell a lower limit (configuration) from a fault.
    vals.clear();
    for (const auto& e : entries) {
      if (!std::isnan(e.limit)) vals.push_back(e.limit);
    }
    const double peer_limit = vals.empty() ? 0 : RefMedianInPlace(vals);
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
  };
  for (uint32_t wi = 0; wi < order.windows.size(); ++wi) {
    touched.clear();
    for (size_t k = order.windows[wi].first; k < order.windows[wi].second; ++k) {
      const GpuSample& s = samples[order.index.empty() ? k : order.index[k]];
      const uint32_t c = s.card;
      CardState& st = state[c];
      if (st.seen_in != wi) {
        st.seen_in = wi;
        touched.push_back(c);
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
      st.has_pending_err = s.ecc_sbe || s.ecc_dbe || s.pcie_replays;
      if (st.has_pending_err) {
        st.pending_err = double(s.ecc_sbe.value_or(0)) + double(s.ecc_dbe.value_or(0)) +
                         double(s.pcie_replays.value_or(0));
      }
    }
    for (auto& g : groups) g.clear();
    for (uint32_t c : touched) {
      CardState& st = state[c];
      float delta = NAN;
      if (st.has_pending_err && st.has_prev_err && st.pending_err >= st.prev_err) {
        delta = static_cast<float>(st.pending_err - st.prev_err);
      }
      st.has_prev_err = st.has_pending_err;
      st.prev_err = st.pending_err;
      st.pending.v[kErrors] = delta;
      groups[model_of[c]].push_back(st.pending);
    }
    for (const auto& g : groups) judge(g);
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
          {kMetricNames[m], t.metric_windows[m], RefMedianInPlace(a), RefMedianInPlace(b)});
    }
    s.advice = kAdvice[KindRank(s.kind)];
    if (s.kind == "hardware" && t.throttle) {
      s.advice = "The GPU reports hardware throttle reasons. " + s.advice;
    }
    out.push_back(std::move(s));
  }
  // Victims: the GPUs of a node that holds a hardware straggler wait for it at collectives, and
  // so do the GPUs of the same job on other nodes (a job label in the reports).
  std::unordered_map<std::string, const std::string*> job_of;  // node\x1fbus -> latest job
  {
    std::vector<std::pair<int64_t, const std::string*>> latest(n_cards, {INT64_MIN, nullptr});
    for (const auto& j : data.card_jobs) {
      if (j.card < n_cards && j.time_s >= latest[j.card].first) latest[j.card] = {j.time_s, &j.job};
    }
    for (uint32_t c = 0; c < n_cards; ++c) {
      if (latest[c].second != nullptr) job_of[CardKeyOfSlot(data.cards[c])] = latest[c].second;
    }
  }
  auto job_at = [&](uint32_t card) -> const std::string* {
    auto it = job_of.find(CardKeyOfSlot(data.cards[card]));
    return it == job_of.end() ? nullptr : it->second;
  };
  std::unordered_map<std::string, size_t> holder, job_holder;  // node / job -> index into out
  auto hold = [&](std::unordered_map<std::string, size_t>& m, const std::string& key, size_t i) {
    auto [it, inserted] = m.emplace(key, i);
    if (!inserted && out[i].windows_outlier > out[it->second].windows_outlier) it->second = i;
  };
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].kind != "hardware") continue;
    hold(holder, data.cards[out[i].card].node, i);
    if (const std::string* job = job_at(out[i].card)) hold(job_holder, *job, i);
  }
  for (auto& s : out) {
    if (s.kind == "hardware") continue;
    auto it = holder.find(data.cards[s.card].node);
    if (it == holder.end()) {
      const std::string* job = job_at(s.card);
      if (job == nullptr) continue;
      it = job_holder.find(*job);
      if (it == job_holder.end()) continue;
    }
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

inline std::vector<IdleGpu> ReferenceFindIdle(const FleetData& data, const OutlierOptions& opt) {
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

}  // namespace gpudoctor::fleet::reference
