#include "watch/daemon_health.h"

#include <cstdlib>

#include "rules/make_finding.h"

namespace gpudoctor {

void AddHistoryFindings(const std::string& db_path, const StoreHealth& h,
                        std::vector<Finding>& findings) {
  if (!h.writing) {
    Finding f = MakeFinding("gpudoctor.history.degraded", Severity::kWarn,
                            "gpudoctor is not recording history in " + db_path + ": " + h.error);
    f.subject = db_path;
    f.Add("database", db_path).Add("error", h.error);
    f.Add("ticks_not_recorded", static_cast<int64_t>(h.dropped_ticks));
    findings.push_back(std::move(f));
  }
  if (h.reopened > 0 && h.since_reopen_s >= 0 && h.since_reopen_s < kHistoryReplacedNoticeS) {
    Finding f = MakeFinding("gpudoctor.history.replaced", Severity::kWarn,
                            "history database " + db_path + " " + h.reopen_reason +
                                " while watch ran; a new file was opened");
    f.subject = db_path;
    f.Add("database", db_path).Add("cause", h.reopen_reason);
    f.Add("times", static_cast<int64_t>(h.reopened)).Add("seconds_ago", h.since_reopen_s);
    findings.push_back(std::move(f));
  }
}

std::string HistoryDegradedReason(const StoreHealth& h) {
  if (!h.writing) return h.error;
  if (h.reopened > 0 && h.since_reopen_s >= 0 && h.since_reopen_s < kHistoryReplacedNoticeS) {
    return "the database " + h.reopen_reason + " " + std::to_string(int64_t(h.since_reopen_s)) +
           " s ago and was reopened";
  }
  return "";
}

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
