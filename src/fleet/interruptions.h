// Interruptions in the sense of the Llama 3 report (Meta: 466 interruptions in 54 days on 16,384
// GPUs, 419 of them unexpected): an interruption is a hardware-class incident that needs the node
// or the job stopped. Counted from onsets (onsets.h) that are hardware-class (IsHardwareClass: by
// the finding's action) and crit, per node, merged into one interruption while each follows the
// previous one within `gap_s` (the Xid 48 and the gpu.ecc.dbe finding of one event, or a flapping
// finding, are one interruption). A condition already present in a node's first report has no
// known start and is counted apart (present_at_start), never as a new interruption. The category
// (the Llama 3 table's: gpu, gpu_memory, nvlink_pcie, network, host, software) is that of the
// incident's first finding other than a bare gpu.xid (so Xid 48 + gpu.ecc.dbe is gpu_memory),
// else of its first finding. Every interruption found in findings is unexpected: planned ones
// (maintenance, upgrades) are not in the inputs and are reported as 0 planned.
// Rates: interruptions of lemons (lemons.h: cards and nodes with repeated incidents) are listed
// apart, and the rate per GPU-day is computed from the others over the observed GPU-days, with a
// 95% Poisson interval (Wilson-Hilferty), so one bad card cannot dominate the projection to 1k,
// 10k and 100k GPUs; Meta's measured rate is given beside it for scale. Pure function.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fleet/fleet_model.h"
#include "fleet/lemons.h"

namespace gpudoctor::fleet {

struct Interruption {
  std::string node, serial, id, category;  // id/category: see above
  int64_t time_s = 0;                      // the first onset of the incident
  int findings = 0;                        // onsets merged into this interruption
  bool lemon = false;                      // on a lemon node or card
};

struct InterruptionStats {
  std::vector<Interruption> list;  // in time order
  int unexpected = 0, planned = 0;
  int present_at_start = 0;                // crit hardware findings in a node's first report
  std::map<std::string, int> by_category;  // every category of kCategories
  int lemon_interruptions = 0;             // on lemons: not in the rate
  double gpu_days = 0;                     // observed (failure_stats.h)
  double per_gpu_day = 0, per_gpu_day_lo = 0, per_gpu_day_hi = 0;  // without lemons, 95%
  double per_day_at[3] = {}, lo_at[3] = {}, hi_at[3] = {};         // at kProjectionGpus
  double meta_per_day_at[3] = {};  // Meta's unexpected rate (419 / 54 days / 16,384 GPUs)
  std::string arithmetic;
};

inline constexpr int kMetaInterruptions = 466;
inline constexpr int kMetaUnexpected = 419;
inline constexpr double kMetaDays = 54;
inline constexpr double kMetaGpus = 16384;

// 95% interval of a Poisson mean given `n` events (Wilson-Hilferty); {0, 3.69} for n = 0.
std::pair<double, double> PoissonInterval95(int n);

InterruptionStats ComputeInterruptions(const FleetData& data, const std::vector<size_t>& onsets,
                                       const std::vector<Lemon>& lemons, double gpu_days,
                                       int64_t gap_s);

}  // namespace gpudoctor::fleet
