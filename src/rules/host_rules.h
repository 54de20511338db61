// Host rule sets, one file each (host_rules.cc runs them from HostRules). Pure functions of the
// facts; they read every threshold through Thresholds::Get. Internal to src/rules.
#pragma once

#include <optional>
#include <vector>

#include "facts/host_facts.h"
#include "findings/finding.h"
#include "rules/grade.h"
#include "rules/make_finding.h"
#include "rules/thresholds.h"

namespace gpudoctor {

// A rate measured over a short window (check's 250 ms CPU sample, one watch tick) is a moment,
// not a state: such findings are at most warn. Crit needs a window of at least this long (watch
// turns a lasting warn into an open finding through its for_s instead).
inline constexpr double kMinCritWindowS = 5;
// Lowers crit to warn when `window_s` is unknown or shorter than kMinCritWindowS.
inline Severity CapForShortWindow(Severity sev, std::optional<double> window_s) {
  if (sev == Severity::kCrit && (!window_s || *window_s < kMinCritWindowS)) return Severity::kWarn;
  return sev;
}

void MemoryRules(const MemoryFacts& mem, const Thresholds& t, std::vector<Finding>& out);
void PressureRules(const PressureFacts& psi, const Thresholds& t, std::vector<Finding>& out);
void DiskRules(const std::vector<MountFacts>& mounts, const Thresholds& t,
               std::vector<Finding>& out);
// host.mount.missing: one crit finding per [node] required_mounts entry that is not mounted.
void RequiredMountRules(const std::vector<RequiredMountFacts>& required, std::vector<Finding>& out);
void ProcessRules(const ProcessFacts& procs, const Thresholds& t, std::vector<Finding>& out);

}  // namespace gpudoctor
