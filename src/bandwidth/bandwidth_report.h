// `gpudoctor report bandwidth`: the figures of the conversation with the bandwidth provider, from
// the watch history (store/history_store.h).
//
// Per NIC and direction (tx, rx):
//   5-minute averages  the stored points (tick rates; minute averages beyond raw retention) of
//                      gpudoctor_nic_{transmit,receive}_bytes_per_second averaged in buckets
//                      aligned to 300 s of unix time; a bucket without a point is a gap (the watch
//                      was not running) and counts nowhere.
//   peak               the highest stored point (Mb/s) and when.
//   p95                "95th percentile billing": the 5-minute averages sorted ascending, the top
//                      5% discarded, the highest remaining one (index ceil(0.95 n) - 1).
//   above 80%          share of the 5-minute averages above 80% of the plan: the "full" periods.
//   top senders        in the full periods, the processes' bytes
//   (gpudoctor_process_*_bytes_per_second,
//                      the 5 largest of every sockets sample, summed by name; TCP only, all NICs)
//                      as a share of the NIC's bytes in the same periods; a bucket's bytes are its
//                      average × 300 s.
// The plan: --plan-mbps, else [network] plan_mbps_nics for the NIC, else [network] plan_mbps, else
// the NIC's link speed (the newest stored gpudoctor_nic_speed_bytes_per_second); the report says
// which. Advice per NIC, from the larger direction (providers bill the greater of in and out):
//   need = p95 × kHeadroom; need <= plan: "ok"; otherwise, when one process holds more than
//   kDominantSharePct of the bytes in the full periods: "split" (that traffic onto its own line,
//   when extra bandwidth on this line costs more than a second line), else "upgrade" to the
//   smallest plan of kPlanLadderMbps >= need.
// Pure functions except LoadBandwidthReport (reads the history). Thread-safe (no shared state).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/threshold_overrides.h"
#include "store/history_store.h"

namespace gpudoctor {

inline constexpr int64_t kBandwidthBucketS = 300;
inline constexpr double kFullSharePct = 80;
inline constexpr double kHeadroom = 1.25;
inline constexpr double kDominantSharePct = 50;
// Common plan sizes of hosting and transit providers, Mb/s.
inline constexpr double kPlanLadderMbps[] = {10,   20,   30,   50,   100,   200,   300,   500,
                                             1000, 2000, 2500, 5000, 10000, 25000, 40000, 100000};

// The smallest ladder plan >= need_mbps; nullopt above the ladder.
std::optional<double> PlanCovering(double need_mbps);
// ceil(0.95 n) - 1 of the values sorted ascending; nullopt when empty.
std::optional<double> BillingPercentile95(std::vector<double> values);

struct BandwidthOptions {
  std::string nic;                                 // empty: every stored NIC but loopback (lo)
  std::optional<double> plan_mbps_flag;            // --plan-mbps
  double config_plan_mbps = 0;                     // [network] plan_mbps; 0: unset
  std::map<std::string, double> config_plan_nics;  // [network] plan_mbps_nics
};

// The series the report is computed from (HistoryReader::QuerySeries, label nic= / process=).
struct BandwidthInput {
  int64_t since_unix_s = 0, until_unix_s = 0;
  std::vector<Series> nic_tx, nic_rx, nic_speed;  // bytes/s, label nic=NAME
  std::vector<Series> proc_tx, proc_rx;           // bytes/s, label process=NAME
};

struct BandwidthSender {
  std::string process;
  double bytes = 0;
  double share_pct = 0;  // of the NIC's bytes in the full periods with socket samples
};

struct BandwidthDirection {
  std::string direction;  // "tx", "rx"
  int buckets = 0;        // 5-minute averages with data
  double peak_mbps = 0;
  int64_t peak_at_s = 0;
  double p95_mbps = 0;
  double mean_mbps = 0;
  std::optional<double> above_80_pct;  // nullopt without a plan
  int full_buckets = 0;
  int full_buckets_with_senders = 0;  // of those, the ones with a sockets sample
  std::vector<BandwidthSender> top;   // largest first, at most 5
};

struct BandwidthAdvice {
  std::string kind;  // "none" (no plan or no data), "ok", "upgrade", "split"
  double need_mbps = 0;
  std::optional<double> upgrade_to_mbps;  // upgrade and split (the alternative); nullopt: above
                                          // the ladder
  std::string sender;                     // split: the process
  double sender_share_pct = 0;
  std::string text;
};

struct NicBandwidth {
  std::string nic;
  std::optional<double> link_mbps;
  double plan_mbps = 0;     // 0: none known
  std::string plan_source;  // "--plan-mbps", "[network] plan_mbps_nics", "[network] plan_mbps",
                            // "link speed", "" (none)
  int64_t first_s = 0, last_s = 0;  // first and last 5-minute bucket with data
  int gap_buckets = 0;              // empty buckets between them
  int64_t longest_gap_s = 0;
  BandwidthDirection tx, rx;
  BandwidthAdvice advice;
  // The 5-minute averages for a plot: bucket start (unix s), tx and rx Mb/s (NaN: no data).
  std::vector<std::array<double, 3>> buckets_mbps;
};

struct BandwidthReport {
  int64_t since_unix_s = 0, until_unix_s = 0;
  std::vector<NicBandwidth> nics;
  std::string note;  // why there is nothing to report; empty otherwise
};

BandwidthReport ComputeBandwidthReport(const BandwidthInput& in, const BandwidthOptions& opt);

// Reads the series of [since, until] and computes. With `config`, its [network] plan_mbps and
// plan_mbps_nics (as net.nic.saturated holds them) fill opt's config plans. NotFound naming the
// stored NICs when opt.nic is not among them; read errors as the reader returns them.
Result<BandwidthReport> LoadBandwidthReport(HistoryReader& reader, int64_t since_unix_s,
                                            int64_t until_unix_s, BandwidthOptions opt,
                                            const ThresholdOverrides* config = nullptr);

std::string BandwidthReportText(const BandwidthReport& r);
// with_points: each NIC's "points" [[unix_s, tx_mbps, rx_mbps], ...] (the dashboard's plot).
nlohmann::ordered_json BandwidthReportJson(const BandwidthReport& r, bool with_points = false);

}  // namespace gpudoctor
