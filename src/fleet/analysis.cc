#include "fleet/analysis.h"

#include "fleet/onsets.h"

namespace gpudoctor::fleet {

FleetAnalysis Analyze(const FleetData& data, const FleetOptions& options) {
  FleetAnalysis a;
  std::vector<size_t> onsets = FindOnsets(data);
  a.stragglers = FindStragglers(data, options.outliers);
  a.table = BuildHealthTable(data, onsets, a.stragglers);
  a.lemons = FindLemons(data, onsets, options.lemon_min_onsets);
  a.stats = ComputeFailureStats(data, onsets, options.outliers.window_s);
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
