#include "rules/engine.h"

#include <algorithm>

namespace gpudoctor {

std::vector<Finding> EvaluateRules(const Snapshot& snap, const Thresholds& thresholds) {
  static constexpr RuleSet kRuleSets[] = {
      HostRules, NetRules, HttpRules, KernelRules, ProbeHealthRules, GpuRules, UpkeepRules,
  };
  std::vector<Finding> findings;
  for (RuleSet rules : kRuleSets) rules(snap, thresholds, findings);
  std::erase_if(findings, [&](const Finding& f) { return !thresholds.Enabled(f.id); });
  return findings;
}

}  // namespace gpudoctor
