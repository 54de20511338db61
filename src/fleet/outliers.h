// Stragglers: GPUs that are outliers among peers of the same model under comparable load,
// persistently. Per window (time bucket of `window_s`, one sample per GPU: the latest), per
// model, robust statistics: median and MAD (scaled by 1.4826), with a floor on the spread per
// metric so that identical peers do not turn a 1 MHz difference into an outlier:
//   sm clock low, power low, temperature high (among peers at >= 50% utilisation);
//   error counters (ECC SBE/DBE, PCIe replays) rising faster than peers' between windows;
//   utilisation low while the peers are busy.
// A GPU is a straggler when it is an outlier in at least `persist_windows` windows and in at
// least half of the windows in which it could be compared: a momentary blip is not flagged.
// Each outlier window is classed, and the class of most windows is the straggler's kind:
//   "hardware": evidence against the GPU itself: a hardware clock event reason (HW slowdown
//     0x8, HW thermal 0x40, HW power brake 0x80) with low clocks, temperature above peers,
//     errors rising faster than peers', or low clocks that nothing explains (no reason bit, a
//     power draw not above peers', the same configured power limit): drain and fix.
//   "capped": low clocks explained by configuration or the job: application clocks (0x2),
//     sync boost (0x10) or display clocks (0x100) set, a power limit configured below the
//     peers' (< 90 %), or a power draw above the peers' (a power-heavy job at its power cap,
//     SW power cap 0x4). Not a fault; draining will not fix it.
//   "workload": utilisation (or power) below busy peers with healthy clocks: the job's doing.
//   "victim": a workload or capped straggler on the same node as a hardware straggler, or in
//     the same job (its latest job label, FleetData::card_jobs) as one on another node: it
//     waits for that GPU at collectives (`waits_on`: the node's hardware straggler first, else
//     the job's; the one with most outlier windows when there are several); the hardware
//     straggler's `holds_back` counts them.
// An idle GPU (utilisation <= idle_util_pct) is never compared on utilisation: it has no work,
// and FindIdle reports it as unused capacity instead. Pure functions, thread-compatible.
// Cost: one pass over the samples judging each (window, model) group as its window closes, with
// per-model arrays sized once; medians and spreads by robust_stats.h, exactly what sorting gives
// (tests/unit/fleet_outliers_exact_test.cc holds the previous implementation as the reference).
#pragma once

#include <map>
#include <optional>
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
  double idle_util_pct = 5;   // at or below: no work on the GPU
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
  std::string kind;                  // "hardware" | "capped" | "workload" | "victim"
  bool throttle_seen = false;        // HW slowdown / thermal / power-brake clock event reasons
  std::optional<uint32_t> waits_on;  // victims: the hardware straggler's card (node or job)
  int holds_back = 0;                // hardware stragglers: victims waiting on it
  std::vector<MetricOutlier> metrics;
  std::string advice;
};

// Sorted: hardware, capped, victim, workload; then most outlier windows first.
std::vector<Straggler> FindStragglers(const FleetData& data, const OutlierOptions& options);

// A GPU with no work: utilisation <= idle_util_pct in at least `persist_windows` windows and
// in at least half of the windows with a utilisation value. Capacity left unused, not a fault.
struct IdleGpu {
  uint32_t card = 0;
  int windows_idle = 0;
  int windows_seen = 0;
};
// Sorted by card index.
std::vector<IdleGpu> FindIdle(const FleetData& data, const OutlierOptions& options);

// FindStragglers and FindIdle from one pass over the samples (what Analyze uses): the same
// results as calling each. Cost: one read of the samples when their storage order is window order
// with each card's samples in time order (reports read in order, Prometheus series), else an
// ordering first; O(cards) memory besides.
struct OutlierResult {
  std::vector<Straggler> stragglers;
  std::vector<IdleGpu> idle;
};
OutlierResult FindOutliers(const FleetData& data, const OutlierOptions& options);

// Clock event reason bits (NVML nvmlClocksEventReason*).
inline constexpr uint32_t kReasonAppClocks = 0x2, kReasonSwPowerCap = 0x4, kReasonHwSlowdown = 0x8,
                          kReasonSyncBoost = 0x10, kReasonSwThermal = 0x20, kReasonHwThermal = 0x40,
                          kReasonHwPowerBrake = 0x80, kReasonDisplayClocks = 0x100;
// Reasons that are evidence against the hardware.
inline constexpr uint32_t kHardwareReasons =
    kReasonHwSlowdown | kReasonHwThermal | kReasonHwPowerBrake;
// Reasons that explain low clocks by configuration.
inline constexpr uint32_t kConfigReasons =
    kReasonAppClocks | kReasonSyncBoost | kReasonDisplayClocks;

// Median of values (reorders them); 0 for an empty vector. The definition robust_stats.h's
// faster MedianOf matches exactly.
double MedianInPlace(std::vector<double>& values);

}  // namespace gpudoctor::fleet
