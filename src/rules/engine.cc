#include "rules/engine.h"

#include <algorithm>

#include "rules/catalogue.h"
#include "rules/make_finding.h"

namespace gpudoctor {

std::vector<Finding> EvaluateRules(const Snapshot& snap, const Thresholds& thresholds) {
  static constexpr RuleSet kRuleSets[] = {
      HostRules, NetRules,    HttpRules, KernelRules,    ProbeHealthRules,
      GpuRules,  UpkeepRules, JobRules,  InferenceRules,
  };
  std::vector<Finding> findings;
  for (RuleSet rules : kRuleSets) rules(snap, thresholds, findings);
  std::erase_if(findings, [&](const Finding& f) { return !thresholds.Enabled(f.id); });
  // A site's `[finding."ID"] action` replaces the rule's, at the finding's worst severity only
  // (ActionAtSeverity, as MakeFinding): a warm GPU or a spare unplugged port is never drained.
  for (Finding& f : findings) {
    auto name = thresholds.ActionOverride(f.id);
    const CatalogueEntry* entry = FindCatalogueEntry(f.id);
    if (!name || entry == nullptr) continue;
    if (auto a = ParseAction(*name)) f.action = ActionAtSeverity(*a, f.severity, *entry);
  }
  return findings;
}

}  // namespace gpudoctor
