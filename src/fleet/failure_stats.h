// Failure statistics by root-cause category: crit onsets (see onsets.h) over the observed
// GPU-time, MTBF per category, and a projection of interruptions per day at 1k, 10k and 100k
// GPUs with the arithmetic written out. Observed GPU-time = per node (last report - first report
// + one window) x the node's GPU count. The projection assumes failures scale linearly with the
// GPU count (each crit onset on any GPU interrupts a synchronous job spanning all of them).
// Pure functions.
#pragma once

#include <string>
#include <vector>

#include "fleet/fleet_model.h"

namespace gpudoctor::fleet {

struct CategoryStats {
  std::string category;
  int failures = 0;
  double mtbf_gpu_hours = 0;  // observed GPU-hours per failure; 0 when no failure
  double per_day_at[3] = {};  // projected interruptions per day at 1k, 10k, 100k GPUs
  std::string arithmetic;     // "3 failures / 12.5 GPU-days = 0.24 per GPU-day; x 1000 = ..."
};

struct FailureStats {
  double gpu_days = 0;
  int gpus = 0;
  int failures = 0;
  std::vector<CategoryStats> categories;  // every category, plus "all" last
  std::string note;                       // small-sample caveat when failures < 10
};

inline constexpr int kProjectionGpus[3] = {1000, 10000, 100000};

FailureStats ComputeFailureStats(const FleetData& data, const std::vector<size_t>& onsets,
                                 int64_t window_s);

}  // namespace gpudoctor::fleet
