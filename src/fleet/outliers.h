// Stragglers: GPUs that are outliers among peers of the same model under comparable load,
// persistently. Per window (time bucket of `window_s`, one sample per GPU: the latest), per
// model, robust statistics: median and MAD (scaled by 1.4826), with a floor on the spread per
// metric so that identical peers do not turn a 1 MHz difference into an outlier:
//   sm clock low, power low, temperature high (among peers at >= 50% utilisation);
//   error counters (ECC SBE/DBE, PCIe replays) rising faster than peers' between windows;
//   utilisation low while the peers are busy.
// A GPU is a straggler when it is an outlier in at least `persist_windows` windows and in at
// least half of the windows in which it could be compared: a momentary blip is not flagged.
// Kind: "hardware" when clocks/power/temperature/errors are the outlier (slow silicon, throttle,
// cooling, errors: drain and fix), "workload" when only utilisation is low with healthy clocks
// (the job's imbalance: draining the node will not fix it). Pure functions, thread-compatible.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fleet/fleet_model.h"

namespace gpudoctor::fleet {

struct OutlierOptions {
  int64_t window_s = 300;
  int persist_windows = 3;
  int min_peers = 4;          // peers (incl. the GPU) needed to judge a window
  double z_threshold = 3.5;   // robust z
  double busy_util_pct = 50;  // "under load"
};

struct MetricOutlier {
  std::string metric;  // "sm_clock_mhz", "power_w", "temp_c", "util_pct", "errors"
  int windows = 0;
  double gpu_median = 0;   // the GPU's median value over its outlier windows
  double peer_median = 0;  // peers' median over the same windows
};

struct Straggler {
  uint32_t card = 0;  // index into FleetData::cards
  int windows_compared = 0;
  int windows_outlier = 0;
  std::string kind;            // "hardware" | "workload"
  bool throttle_seen = false;  // HW slowdown / thermal / power-brake clock event reasons
  std::vector<MetricOutlier> metrics;
  std::string advice;
};

// Sorted: hardware before workload, then most outlier windows first.
std::vector<Straggler> FindStragglers(const FleetData& data, const OutlierOptions& options);

// Median of values (reorders them); 0 for an empty vector.
double MedianInPlace(std::vector<double>& values);

}  // namespace gpudoctor::fleet
