// gpu.util.sawtooth: the busy/idle saw-tooth of a server that batches statically (waits to fill
// a batch, runs it to the longest request's end), judged on each GPU's utilisation over the last
// watch ticks. The history is the caller's (the watch engine keeps one per GPU identity) and is
// passed in, so the rule stays a function of its inputs. Thread-compatible.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "facts/snapshot.h"
#include "findings/finding.h"

namespace gpudoctor {

struct SawTooth {
  bool detected = false;
  int cycles = 0;            // complete high -> low -> high alternations
  double high_fraction = 0;  // share of samples at or above the high threshold
  double low_fraction = 0;   // share of samples at or below the low threshold
  double mean_util_pct = 0;
};

// The busy/idle saw-tooth of static batching in a GPU utilisation series (percent, one value per
// sample, oldest first): samples fall into high (>= 70%) or low (<= 20%) with few in between
// (< 30%), each side holds at least 15% of the samples, and there are at least 3 complete
// cycles. A series shorter than 12 samples is never detected.
SawTooth DetectStaticBatchingSawTooth(const std::vector<double>& util_series);

// Utilisation of the last kUtilWindowTicks ticks per GPU identity key (GpuIdentityKey).
using UtilHistory = std::map<std::string, std::deque<double>>;
inline constexpr size_t kUtilWindowTicks = 120;

// Adds the newest utilisation of each GPU in `snap` to `history`, then appends
// gpu.util.sawtooth for GPUs whose window shows the cycles.
void AddSawToothFindings(const Snapshot& snap, UtilHistory& history,
                         std::vector<Finding>& findings);

}  // namespace gpudoctor
