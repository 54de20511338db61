// Backup rules: host.backup.stale (the newest match of a pattern is older than max_age_h) and
// host.backup.none (a pattern matched nothing), one finding per pattern (subject = pattern).
#include <string>

#include "core/strings.h"
#include "rules/upkeep_rules.h"

namespace gpudoctor {

void BackupRules(const BackupFacts& backups, std::chrono::system_clock::time_point now,
                 const Thresholds& t, std::vector<Finding>& out) {
  int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  double max_age_h = t.Get("host.backup.stale", "max_age_h");
  for (const BackupPattern& p : backups.patterns) {
    if (!p.error.empty() && p.matched == 0) {
      Finding f = MakeFinding("host.backup.none", Severity::kWarn,
                              "backup pattern " + p.pattern + " could not be read");
      f.subject = p.pattern;
      f.Add("pattern", p.pattern).Add("error", p.error);
      out.push_back(std::move(f));
      continue;
    }
    if ((p.matched == 0 || !p.newest_mtime_unix_s) && p.truncated) {
      // The walk stopped early (entry bound or deadline): "nothing" is not proven, but the
      // backups are not checked either, and silence would read as "fine".
      Finding f = MakeFinding("host.backup.none", Severity::kWarn,
                              "backup pattern " + p.pattern +
                                  " could not be checked: the walk stopped before reaching a "
                                  "match (narrow the pattern)");
      f.subject = p.pattern;
      f.Add("pattern", p.pattern).Add("matched_count", 0).AddBool("scan_truncated", true);
      out.push_back(std::move(f));
      continue;
    }
    if (p.matched == 0 || !p.newest_mtime_unix_s) {
      Finding f = MakeFinding("host.backup.none", Severity::kWarn,
                              "backup pattern " + p.pattern +
                                  " matches no file (misconfigured, or nothing written yet)");
      f.subject = p.pattern;
      f.Add("pattern", p.pattern).Add("matched_count", 0);
      out.push_back(std::move(f));
      continue;
    }
    if (now_s <= 0) continue;
    double age_h = static_cast<double>(now_s - *p.newest_mtime_unix_s) / 3600.0;
    if (age_h <= max_age_h) continue;
    Finding f = MakeFinding(
        "host.backup.stale", Severity::kWarn,
        std::string(p.truncated ? "of the files examined (walk cut short), " : "") +
            "newest checkpoint matching " + p.pattern + " is " + FormatDouble(age_h) +
            " h old: a GPU failure now loses " + FormatDouble(age_h, 0) + " hours of training");
    f.subject = p.pattern;
    f.Add("pattern", p.pattern).Add("newest_path", p.newest_path);
    f.Add("age_h", age_h).Add("max_age_h", max_age_h).Add("matched_count", p.matched);
    if (p.truncated) f.AddBool("scan_truncated", true);
    out.push_back(std::move(f));
  }
}

}  // namespace gpudoctor
