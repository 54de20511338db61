#include "bandwidth/bandwidth_report.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/strings.h"

namespace gpudoctor {
namespace {

double ToMbps(double bytes_per_s) { return bytes_per_s * 8 / 1e6; }
constexpr size_t kTopSenders = 5;

int64_t BucketOf(int64_t t) {
  int64_t b = t / kBandwidthBucketS * kBandwidthBucketS;
  return t < 0 && b != t ? b - kBandwidthBucketS : b;
}

std::string LabelValue(const std::string& labels, const std::string& key) {
  // LabelsKey text: "k=v" or "k=v,k2=v2" (values hold no ',' or '=').
  size_t pos = 0;
  while (pos <= labels.size()) {
    size_t end = labels.find(',', pos);
    if (end == std::string::npos) end = labels.size();
    std::string item = labels.substr(pos, end - pos);
    size_t eq = item.find('=');
    if (eq != std::string::npos && item.substr(0, eq) == key) return item.substr(eq + 1);
    pos = end + 1;
  }
  return "";
}

// bucket start → average of the points in it (bytes/s).
std::map<int64_t, double> Buckets(const std::vector<std::pair<int64_t, double>>& points) {
  std::map<int64_t, std::pair<double, int>> acc;
  for (const auto& [t, v] : points) {
    if (!std::isfinite(v)) continue;
    auto& a = acc[BucketOf(t)];
    a.first += v;
    ++a.second;
  }
  std::map<int64_t, double> out;
  for (const auto& [b, a] : acc) out[b] = a.first / a.second;
  return out;
}

const Series* FindNic(const std::vector<Series>& series, const std::string& nic) {
  for (const Series& s : series) {
    if (LabelValue(s.labels, "nic") == nic) return &s;
  }
  return nullptr;
}

// Each process's average rate per bucket: its points over the bucket's sockets samples (a
// sample where it was not among the largest counts as 0).
struct SenderBuckets {
  std::map<int64_t, int> samples;                               // bucket → distinct sample times
  std::map<std::string, std::map<int64_t, double>> by_process;  // process → bucket → bytes/s
};

SenderBuckets SenderRates(const std::vector<Series>& procs) {
  SenderBuckets out;
  std::map<int64_t, std::set<int64_t>> times;
  std::map<std::string, std::map<int64_t, double>> sums;
  for (const Series& s : procs) {
    std::string name = LabelValue(s.labels, "process");
    if (name.empty()) continue;
    for (const auto& [t, v] : s.points) {
      if (!std::isfinite(v)) continue;
      times[BucketOf(t)].insert(t);
      sums[name][BucketOf(t)] += v;
    }
  }
  for (const auto& [b, ts] : times) out.samples[b] = static_cast<int>(ts.size());
  for (auto& [name, buckets] : sums) {
    for (auto& [b, sum] : buckets) out.by_process[name][b] = sum / out.samples[b];
  }
  return out;
}

BandwidthDirection Direction(const char* name, const Series* nic, const std::vector<Series>& procs,
                             double plan_mbps) {
  BandwidthDirection d;
  d.direction = name;
  if (nic == nullptr) return d;
  bool first = true;
  for (const auto& [t, v] : nic->points) {
    if (std::isfinite(v) && (first || ToMbps(v) > d.peak_mbps)) {
      first = false;
      d.peak_mbps = ToMbps(v);
      d.peak_at_s = t;
    }
  }
  std::map<int64_t, double> buckets = Buckets(nic->points);
  std::vector<double> mbps;
  double sum = 0;
  for (const auto& [b, v] : buckets) {
    mbps.push_back(ToMbps(v));
    sum += ToMbps(v);
  }
  d.buckets = static_cast<int>(mbps.size());
  if (mbps.empty()) return d;
  d.mean_mbps = sum / mbps.size();
  d.p95_mbps = BillingPercentile95(mbps).value_or(0);
  if (plan_mbps <= 0) return d;
  const double full_at = plan_mbps * kFullSharePct / 100;
  std::vector<int64_t> full;
  for (const auto& [b, v] : buckets) {
    if (ToMbps(v) > full_at) full.push_back(b);
  }
  d.full_buckets = static_cast<int>(full.size());
  d.above_80_pct = 100.0 * full.size() / buckets.size();
  SenderBuckets senders = SenderRates(procs);
  double nic_bytes = 0;
  std::map<std::string, double> bytes;
  for (int64_t b : full) {
    if (senders.samples.count(b) == 0) continue;
    ++d.full_buckets_with_senders;
    nic_bytes += buckets[b] * kBandwidthBucketS;
    for (const auto& [proc, rates] : senders.by_process) {
      if (auto it = rates.find(b); it != rates.end()) bytes[proc] += it->second * kBandwidthBucketS;
    }
  }
  for (const auto& [proc, n] : bytes) {
    if (n <= 0) continue;
    double share = nic_bytes > 0 ? std::min(100.0, 100 * n / nic_bytes) : 0;
    d.top.push_back({proc, n, share});
  }
  std::sort(d.top.begin(), d.top.end(), [](const auto& a, const auto& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.process < b.process;
  });
  if (d.top.size() > kTopSenders) d.top.resize(kTopSenders);
  return d;
}

std::string Mbps(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
  return buf;
}

BandwidthAdvice Advise(const NicBandwidth& n) {
  BandwidthAdvice a;
  const BandwidthDirection& d = n.rx.p95_mbps > n.tx.p95_mbps ? n.rx : n.tx;
  if (n.plan_mbps <= 0 || d.buckets == 0) {
    a.kind = "none";
    a.text = d.buckets == 0 ? "no traffic stored for " + n.nic
                            : "no plan and no link speed known: give --plan-mbps N";
    return a;
  }
  a.need_mbps = d.p95_mbps * kHeadroom;
  a.upgrade_to_mbps = PlanCovering(a.need_mbps);
  const std::string dir = d.direction == "tx" ? "outbound" : "inbound";
  if (a.need_mbps <= n.plan_mbps) {
    a.kind = "ok";
    a.upgrade_to_mbps.reset();
    a.text = "the " + Mbps(n.plan_mbps) + " Mb/s plan covers the 95th percentile (" +
             Mbps(d.p95_mbps) + " Mb/s " + dir + ") with 25% headroom: no change needed";
    return a;
  }
  std::string upgrade = a.upgrade_to_mbps
                            ? "upgrade to " + Mbps(*a.upgrade_to_mbps) + " Mb/s"
                            : "more than " + Mbps(kPlanLadderMbps[std::size(kPlanLadderMbps) - 1]) +
                                  " Mb/s: split the traffic over several lines";
  if (!d.top.empty() && d.top[0].share_pct > kDominantSharePct) {
    a.kind = "split";
    a.sender = d.top[0].process;
    a.sender_share_pct = d.top[0].share_pct;
    a.text = "split that traffic onto its own line: " + a.sender + " sent " +
             Mbps(a.sender_share_pct) + "% of the " + dir +
             " bytes while the line was full (when extra bandwidth on this line is priced above "
             "a second line; otherwise " +
             upgrade + ")";
    return a;
  }
  a.kind = "upgrade";
  a.text = upgrade + ": the 95th percentile (" + Mbps(d.p95_mbps) + " Mb/s " + dir + ") × " +
           "1.25 headroom is " + Mbps(a.need_mbps) + " Mb/s, above the " + Mbps(n.plan_mbps) +
           " Mb/s plan";
  return a;
}

}  // namespace

std::optional<double> PlanCovering(double need_mbps) {
  for (double p : kPlanLadderMbps) {
    if (p >= need_mbps) return p;
  }
  return std::nullopt;
}

std::optional<double> BillingPercentile95(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  size_t keep = (95 * n + 99) / 100;  // ceil(0.95 n), exact in integers
  return values[std::max<size_t>(keep, 1) - 1];
}

BandwidthReport ComputeBandwidthReport(const BandwidthInput& in, const BandwidthOptions& opt) {
  BandwidthReport r;
  r.since_unix_s = in.since_unix_s;
  r.until_unix_s = in.until_unix_s;
  std::set<std::string> names;
  for (const auto* list : {&in.nic_tx, &in.nic_rx}) {
    for (const Series& s : *list) {
      std::string nic = LabelValue(s.labels, "nic");
      // Loopback is never billed: only when asked for by name.
      if (!nic.empty() && !s.points.empty() && (opt.nic.empty() ? nic != "lo" : nic == opt.nic)) {
        names.insert(nic);
      }
    }
  }
  for (const std::string& nic : names) {
    NicBandwidth n;
    n.nic = nic;
    if (const Series* s = FindNic(in.nic_speed, nic); s != nullptr && !s->points.empty()) {
      double v = ToMbps(s->points.back().second);
      if (v > 0) n.link_mbps = v;
    }
    if (opt.plan_mbps_flag && *opt.plan_mbps_flag > 0) {
      n.plan_mbps = *opt.plan_mbps_flag;
      n.plan_source = "--plan-mbps";
    } else if (auto it = opt.config_plan_nics.find(nic);
               it != opt.config_plan_nics.end() && it->second > 0) {
      n.plan_mbps = it->second;
      n.plan_source = "[network] plan_mbps_nics";
    } else if (opt.config_plan_mbps > 0) {
      n.plan_mbps = opt.config_plan_mbps;
      n.plan_source = "[network] plan_mbps";
    } else if (n.link_mbps) {
      n.plan_mbps = *n.link_mbps;
      n.plan_source = "link speed";
    }
    const Series* tx = FindNic(in.nic_tx, nic);
    const Series* rx = FindNic(in.nic_rx, nic);
    n.tx = Direction("tx", tx, in.proc_tx, n.plan_mbps);
    n.rx = Direction("rx", rx, in.proc_rx, n.plan_mbps);
    {
      std::map<int64_t, double> tb = tx ? Buckets(tx->points) : std::map<int64_t, double>();
      std::map<int64_t, double> rb = rx ? Buckets(rx->points) : std::map<int64_t, double>();
      std::map<int64_t, std::array<double, 3>> merged;
      const double nan = std::nan("");
      for (const auto& [b, v] : tb) merged[b] = {static_cast<double>(b), ToMbps(v), nan};
      for (const auto& [b, v] : rb) {
        auto it =
            merged.try_emplace(b, std::array<double, 3>{static_cast<double>(b), nan, 0}).first;
        it->second[2] = ToMbps(v);
      }
      for (const auto& [b, row] : merged) n.buckets_mbps.push_back(row);
    }
    // Coverage: buckets with data of either direction, and the gaps between them.
    std::set<int64_t> have;
    for (const Series* s : {tx, rx}) {
      if (s == nullptr) continue;
      for (const auto& [t, v] : s->points) have.insert(BucketOf(t));
    }
    if (!have.empty()) {
      n.first_s = *have.begin();
      n.last_s = *have.rbegin();
      int64_t prev = n.first_s;
      for (int64_t b : have) {
        int64_t missing = (b - prev) / kBandwidthBucketS - 1;
        if (missing > 0) {
          n.gap_buckets += static_cast<int>(missing);
          n.longest_gap_s = std::max(n.longest_gap_s, missing * kBandwidthBucketS);
        }
        prev = b;
      }
    }
    n.advice = Advise(n);
    r.nics.push_back(std::move(n));
  }
  if (r.nics.empty()) {
    r.note = "no NIC traffic stored in this period" +
             (opt.nic.empty() ? std::string() : " for " + Sanitize(opt.nic, 40)) +
             ": the history holds what `gpudoctor watch` recorded (is it running, with the nics "
             "probe?)";
  }
  return r;
}

Result<BandwidthReport> LoadBandwidthReport(HistoryReader& reader, int64_t since_unix_s,
                                            int64_t until_unix_s, BandwidthOptions opt,
                                            const ThresholdOverrides* config) {
  BandwidthInput in;
  in.since_unix_s = since_unix_s;
  in.until_unix_s = until_unix_s;
  // Every stored point: raw retention at tick rate plus minute rollups stays far below this.
  constexpr int kAllPoints = 5'000'000;
  auto query = [&](const char* metric, std::vector<Series>& out) -> Status {
    SeriesQuery q;
    q.metric = metric;
    q.gpu = -1;
    q.since_unix_s = since_unix_s;
    q.until_unix_s = until_unix_s;
    q.max_points = kAllPoints;
    Result<std::vector<Series>> s = reader.QuerySeries(q);
    if (!s.ok()) return s.status();
    out = std::move(*s);
    return Status::Ok();
  };
  const std::pair<const char*, std::vector<Series>*> wanted[] = {
      {"gpudoctor_nic_transmit_bytes_per_second", &in.nic_tx},
      {"gpudoctor_nic_receive_bytes_per_second", &in.nic_rx},
      {"gpudoctor_nic_speed_bytes_per_second", &in.nic_speed},
      {"gpudoctor_process_transmit_bytes_per_second", &in.proc_tx},
      {"gpudoctor_process_receive_bytes_per_second", &in.proc_rx},
  };
  for (const auto& [metric, out] : wanted) {
    if (Status s = query(metric, *out); !s.ok()) return s;
  }
  std::set<std::string> stored;
  for (const auto* list : {&in.nic_tx, &in.nic_rx}) {
    for (const Series& s : *list) {
      if (!s.points.empty()) stored.insert(LabelValue(s.labels, "nic"));
    }
  }
  if (config != nullptr) {
    const char* id = "net.nic.saturated";
    if (auto v = config->Find(id, "plan_mbps")) opt.config_plan_mbps = *v;
    for (const std::string& nic : stored) {
      if (auto v = config->Find(id, "plan_mbps." + nic)) opt.config_plan_nics[nic] = *v;
    }
  }
  if (!opt.nic.empty()) {
    if (!stored.empty() && stored.count(opt.nic) == 0) {
      std::string names;
      for (const auto& n : stored) names += (names.empty() ? "" : ", ") + Sanitize(n, 40);
      return NotFound("NIC '" + Sanitize(opt.nic, 40) +
                      "' has no traffic stored in this period (stored: " + names + ")");
    }
  }
  return ComputeBandwidthReport(in, opt);
}

}  // namespace gpudoctor
