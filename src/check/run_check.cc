#include "check/run_check.h"

#include <chrono>

#include "probes/registry.h"
#include "probes/runner.h"
#include "rules/engine.h"

namespace gpudoctor {

Report RunCheck(const std::shared_ptr<const Settings>& settings, TimePoint start) {
  TimePoint deadline = start + std::chrono::duration_cast<SteadyClock::duration>(
                                   std::chrono::duration<double>(settings->deadline_s));
  Report report;
  report.snapshot = RunProbes(EnabledProbes(*settings), settings, deadline);
  report.findings = EvaluateRules(report.snapshot, settings->thresholds);
  SortFindings(report.findings);
  report.duration_ms =
      std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();
  return report;
}

}  // namespace gpudoctor
