#include "fleet/outliers.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace gpudoctor::fleet {
namespace {

enum Metric { kClock = 0, kPower, kTemp, kErrors, kUtil, kMetricCount };
constexpr const char* kMetricNames[kMetricCount] = {"sm_clock_mhz", "power_w", "temp_c", "errors",
                                                    "util_pct"};
// Clock event reason bits that mean the hardware slowed itself: HW slowdown 0x8, SW thermal
// 0x20, HW thermal 0x40, HW power brake 0x80.
constexpr uint32_t kHwThrottleMask = 0x8 | 0x20 | 0x40 | 0x80;

struct Entry {
  uint32_t sample;
  uint32_t card;
  float err_delta;  // NaN when unknown
};

struct CardTally {
  int compared = 0;
  int outlier = 0;
  int hw_windows = 0;
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
  // Samples per card, in time order (CSR).
  std::vector<uint32_t> start(n_cards + 1, 0);
  for (const auto& s : samples) ++start[s.card + 1];
  for (size_t i = 0; i < n_cards; ++i) start[i + 1] += start[i];
  std::vector<uint32_t> order(samples.size());
  {
    std::vector<uint32_t> fill(start.begin(), start.end() - 1);
    for (uint32_t i = 0; i < samples.size(); ++i) order[fill[samples[i].card]++] = i;
  }
  std::unordered_map<std::string, uint32_t> model_ids;
  std::vector<uint32_t> model_of(n_cards);
  for (size_t c = 0; c < n_cards; ++c) {
    model_of[c] = model_ids.emplace(data.cards[c].model, model_ids.size()).first->second;
  }
  // Groups: (model, window) -> entries, one per card (its latest sample in the window).
  std::unordered_map<int64_t, std::vector<Entry>> groups;
  auto floor_div = [](int64_t a, int64_t b) {
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
  };
  for (uint32_t c = 0; c < n_cards; ++c) {
    auto first = order.begin() + start[c], last = order.begin() + start[c + 1];
    std::sort(first, last,
              [&](uint32_t a, uint32_t b) { return samples[a].time_s < samples[b].time_s; });
    std::optional<double> prev_err;
    for (auto it = first; it != last; ++it) {
      const GpuSample& s = samples[*it];
      int64_t w = floor_div(s.time_s, window_s);
      if (it + 1 != last && floor_div(samples[*(it + 1)].time_s, window_s) == w) continue;
      std::optional<double> err;
      if (s.ecc_sbe || s.ecc_dbe || s.pcie_replays) {
        err = double(s.ecc_sbe.value_or(0)) + double(s.ecc_dbe.value_or(0)) +
              double(s.pcie_replays.value_or(0));
      }
      float delta = NAN;
      if (err && prev_err && *err >= *prev_err) delta = static_cast<float>(*err - *prev_err);
      prev_err = err;
      int64_t key = (static_cast<int64_t>(model_of[c]) << 40) ^ (w & ((int64_t{1} << 40) - 1));
      groups[key].push_back({*it, c, delta});
    }
  }
  std::vector<CardTally> tally(n_cards);
  std::vector<double> vals;
  for (auto& [key, entries] : groups) {
    if (static_cast<int>(entries.size()) < opt.min_peers) continue;
    auto busy = [&](const Entry& e) {
      const auto& u = samples[e.sample].util_pct;
      return u && *u >= opt.busy_util_pct;
    };
    auto value = [&](const Entry& e, Metric m) -> std::optional<double> {
      const GpuSample& s = samples[e.sample];
      switch (m) {
        case kClock:
          return busy(e) && s.sm_clock_mhz ? std::optional<double>(*s.sm_clock_mhz) : std::nullopt;
        case kPower:
          return busy(e) && s.power_w ? std::optional<double>(*s.power_w) : std::nullopt;
        case kTemp:
          return busy(e) && s.temp_c ? std::optional<double>(*s.temp_c) : std::nullopt;
        case kErrors:
          return std::isnan(e.err_delta) ? std::nullopt : std::optional<double>(e.err_delta);
        case kUtil:
          return s.util_pct ? std::optional<double>(*s.util_pct) : std::nullopt;
        default:
          return std::nullopt;
      }
    };
    double median[kMetricCount], spread[kMetricCount];
    bool usable[kMetricCount];
    for (int m = 0; m < kMetricCount; ++m) {
      vals.clear();
      for (const auto& e : entries) {
        if (auto v = value(e, Metric(m))) vals.push_back(*v);
      }
      usable[m] = static_cast<int>(vals.size()) >= opt.min_peers;
      if (!usable[m]) continue;
      median[m] = MedianInPlace(vals);
      for (auto& v : vals) v = std::fabs(v - median[m]);
      spread[m] = Spread(MedianInPlace(vals), median[m], Metric(m));
    }
    // Utilisation is only a straggler signal when the peers are busy.
    if (usable[kUtil] && median[kUtil] < opt.busy_util_pct) usable[kUtil] = false;
    for (const auto& e : entries) {
      CardTally& t = tally[e.card];
      bool compared = false, outlier = false, hw = false;
      for (int m = 0; m < kMetricCount; ++m) {
        if (!usable[m]) continue;
        auto v = value(e, Metric(m));
        if (!v) continue;
        compared = true;
        double z = (*v - median[m]) / spread[m];
        bool low_bad = m == kClock || m == kPower || m == kUtil;
        bool flagged = low_bad ? z < -opt.z_threshold : z > opt.z_threshold;
        if (!flagged) continue;
        outlier = true;
        if (m != kUtil) hw = true;
        ++t.metric_windows[m];
        t.values[m].push_back(static_cast<float>(*v));
        t.peers[m].push_back(static_cast<float>(median[m]));
      }
      if (!compared) continue;
      ++t.compared;
      if (outlier) {
        ++t.outlier;
        if (hw) ++t.hw_windows;
        const auto& r = samples[e.sample].clock_event_reasons;
        if (r && (*r & kHwThrottleMask) != 0) t.throttle = true;
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
    s.kind = 2 * t.hw_windows >= t.outlier ? "hardware" : "workload";
    for (int m = 0; m < kMetricCount; ++m) {
      if (t.metric_windows[m] == 0) continue;
      std::vector<double> a(t.values[m].begin(), t.values[m].end());
      std::vector<double> b(t.peers[m].begin(), t.peers[m].end());
      s.metrics.push_back(
          {kMetricNames[m], t.metric_windows[m], MedianInPlace(a), MedianInPlace(b)});
    }
    if (s.kind == "hardware") {
      s.advice = std::string("Hardware slowness: ") +
                 (t.throttle ? "the GPU reports hardware throttle reasons; " : "") +
                 "check cooling, power and error counters (gpudoctor check on the node), drain "
                 "it from synchronous jobs and run `dcgmi diag -r 3`; if it recurs in another "
                 "slot the card is bad (gpudoctor fleet card).";
    } else {
      s.advice =
          "Workload imbalance: low utilisation with healthy clocks while peers are busy. This is "
          "the job's doing (data loading, pipeline stage, rank placement); draining the node "
          "will not fix it.";
    }
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const Straggler& a, const Straggler& b) {
    if (a.kind != b.kind) return a.kind == "hardware";
    if (a.windows_outlier != b.windows_outlier) return a.windows_outlier > b.windows_outlier;
    return a.card < b.card;
  });
  return out;
}

}  // namespace gpudoctor::fleet
