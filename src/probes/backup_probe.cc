// Backup probe: how old is the newest checkpoint? Source: the [backup] paths
// globs, resolved on <rootfs> (core/path_glob.h); stat(2) modification times (Unix seconds).
// Bounded: at most kMaxEntriesPerPattern directory entries per pattern, and the walk stops
// shortly before the check's deadline (the pattern is then marked truncated). Failure modes: no
// patterns configured → skipped; an unreadable directory is recorded on its pattern.
#include <algorithm>

#include "core/path_glob.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {
namespace {

constexpr size_t kMaxEntriesPerPattern = 20000;

}  // namespace

ProbeOutput RunBackupProbe(const ProbeContext& ctx) {
  const std::vector<std::string>& paths = ctx.settings->backup_paths;
  if (paths.empty()) return ProbeSkipped("no [backup] paths configured");
  TimePoint deadline = ctx.deadline - std::chrono::milliseconds(200);
  BackupFacts facts;
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
