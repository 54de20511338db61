// Round-trip statistics of one probe series: loss, min/median/p95/max RTT and jitter.
// Pure function; thread-safe.
#pragma once

#include <optional>
#include <vector>

namespace gpudoctor {

struct RttStats {
  int sent = 0;
  int received = 0;
  std::optional<double> loss_pct;                           // absent when sent == 0
  std::optional<double> min_ms, median_ms, p95_ms, max_ms;  // absent when received == 0
  // Mean absolute difference of consecutive RTTs (in the order the probes were sent), as in
  // RFC 3550's interarrival jitter without smoothing. Absent with fewer than two replies.
  std::optional<double> jitter_ms;
};

// rtts_ms: the RTTs of the replies received, in send order. Percentiles use the nearest-rank
// method (p95 of 5 samples is the largest). Negative or non-finite RTTs are ignored.
RttStats ComputeRttStats(int sent, const std::vector<double>& rtts_ms);

}  // namespace gpudoctor
