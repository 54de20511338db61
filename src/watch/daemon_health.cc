#include "watch/daemon_health.h"

#include <cstdlib>

#include "rules/make_finding.h"

namespace gpudoctor {

std::optional<int64_t> ClockStepDetector::Observe(int64_t unix_ms, int64_t mono_ms) {
  std::optional<int64_t> step;
  if (have_last_) {
    int64_t d = (unix_ms - last_unix_ms_) - (mono_ms - last_mono_ms_);
    if (std::llabs(d) >= kClockStepMinMs) {
      step = d;
      step_ms_ = d;
      step_mono_ms_ = mono_ms;
      stepped_ = true;
    }
  }
  have_last_ = true;
  last_unix_ms_ = unix_ms;
  last_mono_ms_ = mono_ms;
  return step;
}

void ClockStepDetector::AddFinding(int64_t mono_ms, std::vector<Finding>& findings) const {
  if (!stepped_ || (mono_ms - step_mono_ms_) / 1000.0 >= kClockStepNoticeS) return;
  double s = step_ms_ / 1000.0;
  Finding f = MakeFinding("gpudoctor.clock.step", Severity::kWarn,
                          std::string("the wall clock stepped ") + (s > 0 ? "forward" : "back") +
                              " by " + std::to_string(std::llabs(step_ms_) / 1000) + " s");
  f.Add("step_s", s);
  findings.push_back(std::move(f));
}

}  // namespace gpudoctor
