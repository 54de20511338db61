// Backup probe: how old is the newest checkpoint? Sources: the [backup] paths
// globs, resolved on <rootfs> (core/path_glob.h); stat(2) modification times (Unix seconds); and
// the [backup] command (argv, no shell; remote or object storage), whose first output line is the
// newest backup's time, unix seconds or RFC 3339 (ParseBackupTime), run under
// min([backup] command_timeout_s, the check's deadline) and killed after it.
// Bounded: at most kMaxEntriesPerPattern directory entries per pattern, and the walk stops
// shortly before the check's deadline (the pattern is then marked truncated). Failure modes: no
// patterns configured → skipped; an unreadable directory is recorded on its pattern.
#include <algorithm>

#include "core/path_glob.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "core/time_spec.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {
namespace {

constexpr size_t kMaxEntriesPerPattern = 20000;

BackupCommandResult RunBackupCommand(const std::vector<std::string>& argv, double timeout_s,
                                     TimePoint deadline) {
  BackupCommandResult r;
  for (const std::string& a : argv) r.command += (r.command.empty() ? "" : " ") + a;
  r.command = Sanitize(r.command, 300);
  double left = std::chrono::duration<double>(deadline - SteadyClock::now()).count();
  if (left < 0.1) {
    r.error = "no time left in the check's deadline";
    return r;
  }
  auto out = RunProcess(argv, std::min(timeout_s, left), 64 * 1024);
  if (!out.ok()) {
    r.error = out.status().ToString();
    return r;
  }
  std::string_view first;
  for (std::string_view line : SplitLines(out->out)) {
    if (!Trim(line).empty()) {
      first = Trim(line);
      break;
    }
  }
  r.output = Sanitize(first, 120);
  if (out->exit_code != 0) {
    r.error = "exited with " + std::to_string(out->exit_code) +
              (Trim(out->err).empty() ? "" : ": " + Sanitize(Trim(out->err), 200));
    return r;
  }
  r.newest_unix_s = ParseBackupTime(first);
  if (!r.newest_unix_s) {
    r.error = first.empty() ? "printed nothing"
                            : "printed '" + r.output + "', not unix seconds or RFC 3339";
  }
  return r;
}

}  // namespace

std::optional<int64_t> ParseBackupTime(std::string_view text) {
  text = Trim(text);
  if (text.empty()) return std::nullopt;
  if (text.find_first_not_of("0123456789.") == std::string_view::npos) {
    std::string_view whole = text.substr(0, text.find('.'));
    auto v = ParseBoundedDecimal(whole, 12);
    if (!v || *v <= 0) return std::nullopt;
    return *v;
  }
  return ParseRfc3339(text);
}

ProbeOutput RunBackupProbe(const ProbeContext& ctx) {
  const std::vector<std::string>& paths = ctx.settings->backup_paths;
  const std::vector<std::string>& command = ctx.settings->backup_command;
  if (paths.empty() && command.empty()) {
    return ProbeSkipped("no [backup] paths or command configured");
  }
  TimePoint deadline = ctx.deadline - std::chrono::milliseconds(200);
  BackupFacts facts;
  if (!command.empty()) {
    facts.command = RunBackupCommand(command, ctx.settings->backup_command_timeout_s, deadline);
  }
  for (const std::string& pattern : paths) {
    BackupPattern p;
    p.pattern = pattern;
    auto r = GlobUnderRoot(ctx.fs(), pattern, kMaxEntriesPerPattern, deadline);
    if (!r.ok()) {
      p.error = r.status().ToString();
      facts.patterns.push_back(std::move(p));
      continue;
    }
    p.truncated = r->truncated;
    p.matched = static_cast<int>(r->matches.size());
    const GlobMatch* newest = nullptr;
    for (const GlobMatch& m : r->matches) {
      if (newest == nullptr || m.info.mtime_unix_ns > newest->info.mtime_unix_ns) newest = &m;
    }
    if (newest != nullptr) {
      p.newest_path = newest->host_path;
      p.newest_mtime_unix_s = newest->info.mtime_unix_ns / 1000000000;
    }
    facts.patterns.push_back(std::move(p));
  }
  return ProbeOk([facts](Snapshot& s) { s.host.backups = facts; });
}

}  // namespace gpudoctor
