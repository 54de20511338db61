// Backup rules: host.backup.stale (the newest match of a pattern is older than max_age_h) and
// host.backup.none (a pattern matched nothing), one finding per pattern (subject = pattern); and
// the same two for the [backup] command (subject "command"): its time too old, or no time.
#include <cmath>
#include <string>

#include "core/strings.h"
#include "core/time_spec.h"
#include "rules/upkeep_rules.h"

namespace gpudoctor {
namespace {

// An age in evidence to 0.1 h (6 minutes), as the summary prints it: a value that changed every
// second made `watch` rewrite the open finding's whole stored row (evidence JSON and indexes)
// every tick, as host.updates.security's ages did before they were rounded (update_rules.cc).
double EvidenceHours(double h) { return std::round(h * 10) / 10; }

// The [backup] command's answer: no time → host.backup.none (the backups are not checked, and
// silence would read as "fine"); a time older than max_age_h → host.backup.stale.
void CommandRule(const BackupCommandResult& c, int64_t now_s, double max_age_h,
                 std::vector<Finding>& out) {
  if (!c.newest_unix_s) {
    Finding f = MakeFinding("host.backup.none", Severity::kWarn,
                            "backup command could not tell the newest backup's time: " + c.error);
    f.subject = "command";
    f.Add("command", c.command).Add("error", c.error);
    if (!c.output.empty()) f.Add("output", c.output);
    out.push_back(std::move(f));
    return;
  }
  if (now_s <= 0) return;
  double age_h = static_cast<double>(now_s - *c.newest_unix_s) / 3600.0;
  if (age_h <= max_age_h) return;
  Finding f = MakeFinding("host.backup.stale", Severity::kWarn,
                          "newest backup reported by the backup command is " + FormatDouble(age_h) +
                              " h old: a GPU failure now loses " + FormatDouble(age_h, 0) +
                              " hours of training");
  f.subject = "command";
  f.Add("command", c.command).Add("newest_backup", FormatUtc(*c.newest_unix_s));
  f.Add("age_h", EvidenceHours(age_h)).Add("max_age_h", max_age_h);
  out.push_back(std::move(f));
}

}  // namespace

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
    f.Add("age_h", EvidenceHours(age_h)).Add("max_age_h", max_age_h);
    f.Add("matched_count", p.matched);
    if (p.truncated) f.AddBool("scan_truncated", true);
    out.push_back(std::move(f));
  }
  if (backups.command) CommandRule(*backups.command, now_s, max_age_h, out);
}

}  // namespace gpudoctor
