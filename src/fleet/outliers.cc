#include "fleet/outliers.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <memory>
#include <span>
#include <unordered_map>
#include <utility>

#include "core/median.h"
#include "fleet/robust_stats.h"
#include "fleet/window_order.h"

namespace gpudoctor::fleet {
namespace {

enum Metric { kClock = 0, kPower, kTemp, kErrors, kUtil, kMetricCount };
constexpr const char* kMetricNames[kMetricCount] = {"sm_clock_mhz", "power_w", "temp_c", "errors",
                                                    "util_pct"};

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
    "Waiting on a slower GPU of the same node or job at collectives: fix the GPU it waits on "
    "(see waits_on); this one is not the cause.",
    // workload
    "Workload imbalance: low utilisation with healthy clocks while peers are busy. This is the "
    "job's doing (data loading, pipeline stage, rank placement); draining the node will not fix "
    "it.",
};

// A slot's name: the job labels are per slot (node, bus), whatever card sits in it.
std::string CardKeyOfSlot(const Card& c) { return c.node + '\x1f' + c.pci_bus_id; }

int KindRank(const std::string& k) {
  return k == "hardware" ? 0 : k == "capped" ? 1 : k == "victim" ? 2 : 3;
}

}  // namespace

double MedianInPlace(std::vector<double>& v) {
  return gpudoctor::MedianInPlace(std::span<double>(v)).value_or(0);
}

namespace {

// The floor under the robust spread: identical peers must not make a tiny difference an outlier.
double Floor(int m, double median) {
  switch (m) {
    case kClock:
      return 0.02 * std::fabs(median) + 15;  // 2% + 15 MHz
    case kPower:
      return 0.05 * std::fabs(median) + 10;  // 5% + 10 W
    case kTemp:
      return 2.0;  // 2 °C
    case kErrors:
      return 1.0;  // 1 error per window
    case kUtil:
      return 5.0;  // 5 points
    default:
      return 0;
  }
}

// Low values are bad for clock, power and utilisation; high ones for temperature and errors.
constexpr bool kLowBad[kMetricCount] = {true, true, false, false, true};

// One model's entries of the current window as a structure of arrays, one slot per card seen in
// the window (in first-seen order; a later sample of the window overwrites the card's slot).
// Sized once for all the model's cards and reused every window: no allocation per window.
struct Group {
  size_t size = 0;
  std::vector<uint32_t> card, reasons;
  std::vector<float> limit;            // configured power limit, W (NaN = unknown)
  std::vector<float> v[kMetricCount];  // NaN = absent (clock, power, temp only under load)
  std::vector<double> err;             // the error counters' sum at the latest sample
  std::vector<uint8_t> has_err;

  void Resize(size_t n) {
    card.resize(n);
    reasons.resize(n);
    limit.resize(n);
    for (auto& x : v) x.resize(n);
    err.resize(n);
    has_err.resize(n);
  }
};

struct Tally {
  int32_t outlier = 0, hw_windows = 0, capped_windows = 0, workload_windows = 0;
  int32_t metric_windows[kMetricCount] = {};
  bool throttle = false;
};

// A flagged metric of a card in one window: its value and the peers' median.
struct FlaggedValue {
  uint32_t card;
  uint32_t metric;
  float value, peer;
};

// The peers' statistics of one (window, model) group.
struct PeerStats {
  double median[kMetricCount] = {}, spread[kMetricCount] = {};
  bool usable[kMetricCount] = {};  // enough peers with the metric present
  double power_limit = 0;          // the peers' median configured power limit, W (0: unknown)
};

// What a flagged entry is judged to be.
enum class OutlierClass { kNone, kHardware, kCapped, kWorkload };

// The window the scan is in: its FloorDiv key and time range [lo, hi).
struct WindowCursor {
  bool open = false;
  int64_t key = 0, lo = 0, hi = 0;
  bool Holds(int64_t time_s) const { return open && time_s >= lo && time_s < hi; }
  void Open(int64_t w, int64_t window_s) {
    open = true;
    key = w;
    lo = w * window_s;
    hi = lo > INT64_MAX - window_s ? INT64_MAX : lo + window_s;
  }
};

// One pass over the samples, window by window, judging each (window, model) group as the window
// closes; also counts idle windows per card (FindIdle). Memory is O(cards), not O(samples).
class Scan {
 public:
  Scan(const FleetData& data, const OutlierOptions& opt);
  // Visits the samples in `index` order (storage order when empty). With `check` (storage
  // order), returns false at the first sample out of window order, or out of time order for its
  // card: the caller then orders them (OrderByWindow) and runs again.
  bool Run(const std::vector<uint32_t>& index, bool check);
  std::vector<Straggler> Stragglers() const;
  std::vector<IdleGpu> Idle() const;

 private:
  void Reset();
  // Moves `cur` to the window of time_s, closing the one it leaves. False (with `check`) when
  // that window is earlier than the current one.
  bool Advance(WindowCursor& cur, int64_t time_s, bool check);
  // The sample into its card's slot of its model's group for the current window.
  void Record(const GpuSample& s);
  // The idle tally: the window's latest sample with a utilisation decides.
  void CountIdle(const GpuSample& s);
  void EndWindow();
  // Judges a closed window's group: every compared entry counts, every outlier is classed.
  void Judge(Group& g);
  PeerStats PeersOf(const Group& g);
  // Into compared_now_ / flags_now_: which entries have a usable metric, which are beyond the
  // threshold in which metrics (bit m for metric m).
  void MarkOutliers(const Group& g, const PeerStats& peers);
  void CountOutlier(const Group& g, size_t i, const PeerStats& peers);
  // The cards flagged in enough windows, with their kind and advice (no victims yet).
  std::vector<Straggler> PersistentOutliers() const;
  // Each straggler's flagged values and the peers' medians, metric by metric.
  void AddMetricMedians(std::vector<Straggler>& out) const;

  const FleetData& data_;
  const OutlierOptions& opt_;
  const int64_t window_s_;
  const size_t n_cards_;
  std::vector<uint32_t> model_of_;
  std::vector<float> limit_of_;
  std::vector<Group> groups_;
  // Per card.
  uint32_t window_ = 0;  // windows opened so far; the current one's number
  std::vector<uint32_t> slot_window_, slot_;
  std::vector<int64_t> last_t_;
  std::vector<double> prev_err_;
  std::vector<uint8_t> has_prev_err_;
  std::vector<int32_t> compared_;
  std::vector<Tally> tally_;
  std::vector<uint32_t> idle_window_;
  std::vector<uint8_t> idle_now_;
  std::vector<int32_t> idle_seen_, idle_count_;
  std::vector<FlaggedValue> flagged_;
  // Scratch for one group, sized for the largest.
  std::vector<float> vals_, select_f_;
  std::vector<double> deviations_, select_d_;
  std::vector<uint8_t> compared_now_, flags_now_;
};

Scan::Scan(const FleetData& data, const OutlierOptions& opt)
    : data_(data),
      opt_(opt),
      window_s_(std::max<int64_t>(1, opt.window_s)),
      n_cards_(data.cards.size()),
      model_of_(n_cards_),
      limit_of_(n_cards_, NAN) {
  std::unordered_map<std::string, uint32_t> model_ids;
  std::vector<size_t> model_cards;
  for (size_t c = 0; c < n_cards_; ++c) {
    if (auto l = data.cards[c].power_limit_w; l && *l > 0) limit_of_[c] = *l;
    model_of_[c] = model_ids.emplace(data.cards[c].model, model_ids.size()).first->second;
    if (model_of_[c] >= model_cards.size()) model_cards.resize(model_of_[c] + 1, 0);
    ++model_cards[model_of_[c]];
  }
  groups_.resize(model_cards.size());
  size_t largest = 0;
  for (size_t m = 0; m < groups_.size(); ++m) {
    groups_[m].Resize(model_cards[m]);
    largest = std::max(largest, model_cards[m]);
  }
  vals_.resize(largest);
  compared_now_.resize(largest);
  flags_now_.resize(largest);
}

void Scan::Reset() {
  window_ = 0;
  for (auto& g : groups_) g.size = 0;
  slot_window_.assign(n_cards_, UINT32_MAX);
  slot_.assign(n_cards_, 0);
  last_t_.assign(n_cards_, INT64_MIN);
  prev_err_.assign(n_cards_, 0);
  has_prev_err_.assign(n_cards_, 0);
  compared_.assign(n_cards_, 0);
  tally_.assign(n_cards_, Tally{});
  idle_window_.assign(n_cards_, UINT32_MAX);
  idle_now_.assign(n_cards_, 0);
  idle_seen_.assign(n_cards_, 0);
  idle_count_.assign(n_cards_, 0);
  flagged_.clear();
}

bool Scan::Run(const std::vector<uint32_t>& index, bool check) {
  Reset();
  const auto& samples = data_.samples;
  const size_t n = samples.size();
  WindowCursor cur;
  for (size_t k = 0; k < n; ++k) {
    const GpuSample& s = samples[index.empty() ? k : index[k]];
    if (!cur.Holds(s.time_s) && !Advance(cur, s.time_s, check)) return false;
    if (check) {
      if (s.time_s < last_t_[s.card]) return false;
      last_t_[s.card] = s.time_s;
    }
    Record(s);
    if (s.util_pct) CountIdle(s);
  }
  if (cur.open) EndWindow();
  return true;
}

bool Scan::Advance(WindowCursor& cur, int64_t time_s, bool check) {
  const int64_t w = FloorDiv(time_s, window_s_);
  if (cur.open && w == cur.key) return true;
  if (cur.open) {
    if (check && w < cur.key) return false;
    EndWindow();
    ++window_;
  }
  cur.Open(w, window_s_);
  return true;
}

void Scan::Record(const GpuSample& s) {
  const uint32_t c = s.card;
  Group& g = groups_[model_of_[c]];
  uint32_t i;
  if (slot_window_[c] != window_) {  // the card's first sample of the window
    slot_window_[c] = window_;
    i = slot_[c] = static_cast<uint32_t>(g.size++);
    g.card[i] = c;
  } else {  // a later sample of the window replaces the earlier one
    i = slot_[c];
  }
  const bool busy = s.util_pct && *s.util_pct >= opt_.busy_util_pct;
  g.reasons[i] = s.clock_event_reasons.value_or(0);
  g.limit[i] = limit_of_[c];
  g.v[kClock][i] = busy && s.sm_clock_mhz ? *s.sm_clock_mhz : NAN;
  g.v[kPower][i] = busy && s.power_w ? *s.power_w : NAN;
  g.v[kTemp][i] = busy && s.temp_c ? *s.temp_c : NAN;
  // An idle GPU has no work to be slow at: not compared on utilisation (FindIdle).
  g.v[kUtil][i] = s.util_pct && *s.util_pct > opt_.idle_util_pct ? *s.util_pct : NAN;
  const bool has_err = s.ecc_sbe || s.ecc_dbe || s.pcie_replays;
  g.has_err[i] = has_err;
  g.err[i] = has_err ? double(s.ecc_sbe.value_or(0)) + double(s.ecc_dbe.value_or(0)) +
                           double(s.pcie_replays.value_or(0))
                     : 0;
}

void Scan::CountIdle(const GpuSample& s) {
  const uint32_t c = s.card;
  if (idle_window_[c] != window_) {
    if (idle_window_[c] != UINT32_MAX) {
      ++idle_seen_[c];
      idle_count_[c] += idle_now_[c];
    }
    idle_window_[c] = window_;
  }
  idle_now_[c] = *s.util_pct <= opt_.idle_util_pct;
}

void Scan::EndWindow() {
  for (Group& g : groups_) {
    for (size_t i = 0; i < g.size; ++i) {
      const uint32_t c = g.card[i];
      float delta = NAN;  // counters' rise since the card's previous window
      if (g.has_err[i] && has_prev_err_[c] && g.err[i] >= prev_err_[c]) {
        delta = static_cast<float>(g.err[i] - prev_err_[c]);
      }
      has_prev_err_[c] = g.has_err[i];
      prev_err_[c] = g.err[i];
      g.v[kErrors][i] = delta;
    }
    Judge(g);
    g.size = 0;
  }
}

void Scan::Judge(Group& g) {
  const size_t n = g.size;
  if (static_cast<int>(n) < opt_.min_peers) return;
  const PeerStats peers = PeersOf(g);
  MarkOutliers(g, peers);
  for (size_t i = 0; i < n; ++i) {
    if (!compared_now_[i]) continue;
    ++compared_[g.card[i]];
    // An outlier in some metric: class it (rare, so the per-entry work is there).
    if (flags_now_[i] != 0) CountOutlier(g, i, peers);
  }
}

PeerStats Scan::PeersOf(const Group& g) {
  const size_t n = g.size;
  PeerStats p;
  float* vals = vals_.data();
  for (int m = 0; m < kMetricCount; ++m) {
    const float* src = g.v[m].data();
    size_t count = 0;
    for (size_t i = 0; i < n; ++i) {  // the present values, branch-free
      vals[count] = src[i];
      count += !std::isnan(src[i]);
    }
    p.usable[m] = static_cast<int>(count) >= opt_.min_peers;
    if (!p.usable[m]) continue;
    std::span<float> present(vals, count);
    p.median[m] = MedianOf(present, select_f_);
    p.spread[m] = RobustSpread(present, p.median[m], Floor(m, p.median[m]), deviations_, select_d_);
  }
  // Utilisation is only a straggler signal when the peers are busy.
  if (p.usable[kUtil] && p.median[kUtil] < opt_.busy_util_pct) p.usable[kUtil] = false;
  // The peers' configured power limit, to tell a lower limit (configuration) from a fault.
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    vals[count] = g.limit[i];
    count += !std::isnan(g.limit[i]);
  }
  p.power_limit = count == 0 ? 0 : MedianOf(std::span<float>(vals, count), select_f_);
  return p;
}

void Scan::MarkOutliers(const Group& g, const PeerStats& peers) {
  // Metric by metric over contiguous arrays; NaN compares false, so absent is never flagged.
  const size_t n = g.size;
  uint8_t* compared = compared_now_.data();
  uint8_t* flags = flags_now_.data();
  std::fill_n(compared, n, 0);
  std::fill_n(flags, n, 0);
  const double threshold = opt_.z_threshold;
  for (int m = 0; m < kMetricCount; ++m) {
    if (!peers.usable[m]) continue;
    const float* x = g.v[m].data();
    const double med = peers.median[m], sp = peers.spread[m];
    const uint8_t bit = static_cast<uint8_t>(1u << m);
    if (kLowBad[m]) {
      for (size_t i = 0; i < n; ++i) {
        const double z = (x[i] - med) / sp;
        compared[i] |= !std::isnan(x[i]);
        flags[i] |= z < -threshold ? bit : 0;
      }
    } else {
      for (size_t i = 0; i < n; ++i) {
        const double z = (x[i] - med) / sp;
        compared[i] |= !std::isnan(x[i]);
        flags[i] |= z > threshold ? bit : 0;
      }
    }
  }
}

// Entry i of g, flagged in the metrics of `flags`: a fault of the card (errors, heat, clocks
// low at the peers' power), a limit (configuration, or a heavier job at its power cap), or the
// workload (utilisation or power low with healthy clocks); kNone when no rule explains it.
OutlierClass ClassifyOutlier(const Group& g, size_t i, uint8_t flags, const PeerStats& peers) {
  auto flagged = [flags](int m) { return ((flags >> m) & 1) != 0; };
  const uint32_t reasons = g.reasons[i];
  const float limit = g.limit[i];
  const float power = g.v[kPower][i];
  // Drawing more power than the peers: a heavier job (at its power cap when the SW power
  // cap reason is set), which explains lower clocks and a higher temperature.
  const bool power_above = peers.usable[kPower] && !std::isnan(power) &&
                           (power - peers.median[kPower]) / peers.spread[kPower] >= 1.0;
  const bool limit_low = !std::isnan(limit) && limit < 0.9 * peers.power_limit;
  const bool hw_reason = (reasons & kHardwareReasons) != 0;
  bool hw = flagged(kErrors) || (flagged(kTemp) && !power_above);
  bool capped = false;
  if (flagged(kClock)) {
    if (hw_reason) {
      hw = true;
    } else if ((reasons & kConfigReasons) != 0 || limit_low || power_above) {
      capped = true;
    } else {
      hw = true;  // a clock deficit at the same power and temperature as the peers
    }
  }
  if (hw) return OutlierClass::kHardware;
  if (capped) return OutlierClass::kCapped;
  if (flagged(kUtil) || flagged(kPower)) return OutlierClass::kWorkload;
  return OutlierClass::kNone;
}

void Scan::CountOutlier(const Group& g, size_t i, const PeerStats& peers) {
  const uint8_t flags = flags_now_[i];
  const OutlierClass kind = ClassifyOutlier(g, i, flags, peers);
  if (kind == OutlierClass::kNone) return;
  const uint32_t c = g.card[i];
  Tally& t = tally_[c];
  ++t.outlier;
  if (kind == OutlierClass::kHardware) {
    ++t.hw_windows;
    if ((g.reasons[i] & kHardwareReasons) != 0) t.throttle = true;
  } else if (kind == OutlierClass::kCapped) {
    ++t.capped_windows;
  } else {
    ++t.workload_windows;
  }
  for (int m = 0; m < kMetricCount; ++m) {
    if (((flags >> m) & 1) == 0) continue;
    ++t.metric_windows[m];
    flagged_.push_back(
        {c, static_cast<uint32_t>(m), g.v[m][i], static_cast<float>(peers.median[m])});
  }
}

std::vector<IdleGpu> Scan::Idle() const {
  std::vector<IdleGpu> out;
  for (uint32_t c = 0; c < n_cards_; ++c) {
    int seen = idle_seen_[c], idle = idle_count_[c];
    if (idle_window_[c] != UINT32_MAX) {  // the card's last window
      ++seen;
      idle += idle_now_[c];
    }
    if (idle < opt_.persist_windows || 2 * idle < seen) continue;
    out.push_back({c, idle, seen});
  }
  return out;
}

std::vector<Straggler> Scan::PersistentOutliers() const {
  std::vector<Straggler> out;
  for (uint32_t c = 0; c < n_cards_; ++c) {
    const Tally& t = tally_[c];
    if (t.outlier < opt_.persist_windows || 2 * t.outlier < compared_[c]) continue;
    Straggler s;
    s.card = c;
    s.windows_compared = compared_[c];
    s.windows_outlier = t.outlier;
    s.throttle_seen = t.throttle;
    s.kind = 2 * t.hw_windows >= t.outlier            ? "hardware"
             : t.capped_windows >= t.workload_windows ? "capped"
                                                      : "workload";
    s.advice = kAdvice[KindRank(s.kind)];
    if (s.kind == "hardware" && t.throttle) {
      s.advice = "The GPU reports hardware throttle reasons. " + s.advice;
    }
    out.push_back(std::move(s));
  }
  return out;
}

void Scan::AddMetricMedians(std::vector<Straggler>& out) const {
  std::vector<int32_t> out_of(n_cards_, -1);
  for (size_t k = 0; k < out.size(); ++k) out_of[out[k].card] = static_cast<int32_t>(k);
  struct Values {
    std::vector<double> gpu[kMetricCount], peers[kMetricCount];
  };
  std::vector<Values> values(out.size());
  for (const FlaggedValue& f : flagged_) {
    if (out_of[f.card] < 0) continue;
    Values& v = values[out_of[f.card]];
    v.gpu[f.metric].push_back(f.value);
    v.peers[f.metric].push_back(f.peer);
  }
  for (size_t k = 0; k < out.size(); ++k) {
    const Tally& t = tally_[out[k].card];
    for (int m = 0; m < kMetricCount; ++m) {
      if (t.metric_windows[m] == 0) continue;
      out[k].metrics.push_back({kMetricNames[m], t.metric_windows[m],
                                MedianInPlace(values[k].gpu[m]),
                                MedianInPlace(values[k].peers[m])});
    }
  }
}

// Each slot's (node, bus) latest job label in the reports.
std::unordered_map<std::string, const std::string*> LatestJobOfSlot(const FleetData& data) {
  const size_t n_cards = data.cards.size();
  std::vector<std::pair<int64_t, const std::string*>> latest(n_cards, {INT64_MIN, nullptr});
  for (const auto& j : data.card_jobs) {
    if (j.card < n_cards && j.time_s >= latest[j.card].first) latest[j.card] = {j.time_s, &j.job};
  }
  std::unordered_map<std::string, const std::string*> job_of;
  for (uint32_t c = 0; c < n_cards; ++c) {
    if (latest[c].second != nullptr) job_of[CardKeyOfSlot(data.cards[c])] = latest[c].second;
  }
  return job_of;
}

// Victims: the GPUs of a node that holds a hardware straggler wait for it at collectives, and so
// do the GPUs of the same job on other nodes (a job label in the reports). Each waits on the
// hardware straggler of its node (else of its job) flagged in the most windows.
void MarkVictims(const FleetData& data, std::vector<Straggler>& out) {
  const std::unordered_map<std::string, const std::string*> job_of = LatestJobOfSlot(data);
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
}

std::vector<Straggler> Scan::Stragglers() const {
  std::vector<Straggler> out = PersistentOutliers();
  AddMetricMedians(out);
  MarkVictims(data_, out);
  std::sort(out.begin(), out.end(), [](const Straggler& a, const Straggler& b) {
    if (a.kind != b.kind) return KindRank(a.kind) < KindRank(b.kind);
    if (a.windows_outlier != b.windows_outlier) return a.windows_outlier > b.windows_outlier;
    return a.card < b.card;
  });
  return out;
}

}  // namespace

OutlierResult FindOutliers(const FleetData& data, const OutlierOptions& opt) {
  Scan scan(data, opt);
  // Storage order is window and time order for reports read in order and Prometheus series: one
  // pass. Otherwise the samples are ordered first and visited again.
  if (!scan.Run({}, /*check=*/true)) {
    scan.Run(OrderByWindow(data.samples, data.cards.size(), std::max<int64_t>(1, opt.window_s)),
             /*check=*/false);
  }
  return {scan.Stragglers(), scan.Idle()};
}

std::vector<Straggler> FindStragglers(const FleetData& data, const OutlierOptions& opt) {
  return FindOutliers(data, opt).stragglers;
}

std::vector<IdleGpu> FindIdle(const FleetData& data, const OutlierOptions& opt) {
  return FindOutliers(data, opt).idle;
}

}  // namespace gpudoctor::fleet
