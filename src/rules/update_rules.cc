// host.updates.security: pending OS security updates (facts from probes/updates_scan.h).
// Severity by age: the oldest pending update was published at least `age` ago (the Date of the
// list that offers it); at or above warn_age_days → warn, else info. Unknown age (dnf, a list
// without a Date) → info.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/strings.h"
#include "rules/upkeep_rules.h"

namespace gpudoctor {

void UpdateRules(const UpdateFacts& updates, std::chrono::system_clock::time_point now,
                 const Thresholds& t, std::vector<Finding>& out) {
  if (!updates.checked || updates.pending_count == 0) return;
  const char* id = "host.updates.security";
  int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  std::optional<int64_t> oldest;
  for (const PendingUpdate& u : updates.pending) {
    if (u.list_date_unix_s) oldest = std::min(oldest.value_or(INT64_MAX), *u.list_date_unix_s);
  }
  std::optional<double> age_days;
  if (oldest && now_s > 0) age_days = std::max(0.0, static_cast<double>(now_s - *oldest) / 86400);
  double warn_days = t.Get(id, "warn_age_days");
  Severity sev = age_days && *age_days >= warn_days ? Severity::kWarn : Severity::kInfo;
  std::string names;
  for (size_t i = 0; i < updates.pending.size() && i < 5; ++i) {
    names += (i ? ", " : "") + updates.pending[i].name;
  }
  if (updates.pending_count > 5) names += ", ...";
  std::string summary =
      std::to_string(updates.pending_count) + " security update(s) pending (" + names + ")";
  if (age_days) {
    summary += ", the oldest published at least " + FormatDouble(*age_days, 0) + " day(s) ago";
  }
  Finding f = MakeFinding(id, sev, summary);
  f.Add("manager", updates.manager).Add("method", updates.method);
  f.Add("pending_count", updates.pending_count);
  // Ages in evidence to 0.01 day (~15 min): "1.8932175925925927" days read as noise, and a value
  // that changed every second made `watch` rewrite the finding's stored evidence every tick.
  auto days = [](double d) { return std::round(d * 100) / 100; };
  if (age_days) f.Add("oldest_age_days", days(*age_days));
  f.Add("warn_age_days", warn_days);
  if (updates.lists_date_unix_s && now_s > 0) {
    f.Add("lists_age_days", days(static_cast<double>(now_s - *updates.lists_date_unix_s) / 86400));
  }
  // Security lists that could not be read (an .xz list, a corrupt one): the count may be low.
  if (!updates.note.empty()) f.Add("lists_not_read", updates.note);
  for (size_t i = 0; i < updates.pending.size() && i < 10; ++i) {
    const PendingUpdate& u = updates.pending[i];
    f.Add("package_" + std::to_string(i + 1),
          u.name + " " + (u.installed_version.empty() ? "" : u.installed_version + " -> ") +
              u.candidate_version + " (" + u.suite + ")");
  }
  out.push_back(std::move(f));
}

}  // namespace gpudoctor
