#include "fleet/analysis.h"

#include <algorithm>
#include <map>
#include <utility>

#include "fleet/onsets.h"

namespace gpudoctor::fleet {

FleetAnalysis Analyze(const FleetData& data, const FleetOptions& options) {
  FleetAnalysis a;
  std::vector<size_t> onsets = FindOnsets(data);
  OutlierResult outliers = FindOutliers(data, options.outliers);
  a.stragglers = std::move(outliers.stragglers);
  a.idle = std::move(outliers.idle);
  std::map<std::string, int> idle_per_node;
  for (const auto& g : a.idle) ++idle_per_node[data.cards[g.card].node];
  a.table = BuildHealthTable(data, onsets, a.stragglers);
  for (const auto& row : a.table) {
    auto it = idle_per_node.find(row.node);
    if (it != idle_per_node.end() && row.gpus > 0 && it->second >= row.gpus) {
      a.idle_nodes.push_back(row.node);
    }
  }
  std::sort(a.idle_nodes.begin(), a.idle_nodes.end());
  a.lemons = FindLemons(data, onsets, options.lemon_min_onsets, options.incident_gap_s);
  a.problems = IdentityProblems(data);
  a.stats = ComputeFailureStats(data, onsets, options.outliers.window_s);
  a.interruptions =
      ComputeInterruptions(data, onsets, a.lemons, a.stats.gpu_days, options.incident_gap_s);
  return a;
}

int FleetExitCode(const FleetAnalysis& a) {
  int code = 0;
  for (const auto& r : a.table) {
    if (r.worst == "crit") return 2;
    if (r.worst == "warn") code = 1;
  }
  for (const auto& s : a.stragglers) {
    if (s.kind == "hardware") code = 1;
  }
  if (!a.lemons.empty()) code = 1;
  return code;
}

}  // namespace gpudoctor::fleet
