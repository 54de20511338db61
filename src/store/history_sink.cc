#include "store/history_sink.h"

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

void HistorySink::Judge(std::vector<Finding>& findings, TickResult& tick) {
  StoreHealth health = store_.health();
  AddHistoryFindings(store_.path(), health, findings);
  tick.history_degraded = HistoryDegradedReason(health);
}

void HistorySink::OnTick(const std::shared_ptr<const TickResult>& tick) { store_.Append(tick); }

}  // namespace gpudoctor
