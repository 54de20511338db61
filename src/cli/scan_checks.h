// `gpudoctor scan`: what "scan and kill viruses" means on a GPU server, with the real tools where
// they are installed. Each step runs under a deadline and ends in findings with evidence:
//  - ClamAV on the executables of flagged processes (a known miner name, an executable under
//    /tmp, /var/tmp or /dev/shm, or deleted from disk) and of every GPU process (holding
//    /dev/nvidiaN): `clamdscan --no-summary --fdpass` when a clamd socket is up, else
//    `clamscan --no-summary`. Paths come from /proc/PID/exe through the root fs layer; a deleted
//    executable is scanned through /proc/PID/exe itself.
//  - Package integrity of system binaries and libraries: `debsums -s` when present, else
//    `dpkg --verify` (`--root DIR` with --path.rootfs); changed files under /usr/bin, /usr/sbin,
//    /bin, /sbin and the library directories are listed.
//  - SSH authorized_keys (root and /home/*) and crontabs (/etc/crontab, /etc/cron.d,
//    /var/spool/cron) modified since a time (mtime), with paths and times.
// A tool that is absent, fails or runs out of time gives scan.not_checked, never a clean result.
// Severity follows check's probes: an absent (or switched off) tool is like a skipped probe, a
// note (info, exit 0) saying how to install it; a tool that is there but failed or ran out of
// time is like a failed probe (warn, exit 1).
// Thread-compatible (one scan at a time: it runs child processes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/root_fs.h"
#include "findings/finding.h"

namespace gpudoctor {

struct SecurityScanOptions {
  RootFs fs;
  int64_t since_unix_s = 0;     // files changed after this are listed
  std::string since_text;       // as given, for the evidence
  double tool_timeout_s = 120;  // each external tool
  TimePoint files_deadline{};   // the authorized_keys / crontab walk
  // Packages to verify; empty: all installed packages (`dpkg --verify` takes minutes on a
  // loaded host: --tool-timeout bounds it).
  std::vector<std::string> packages;
};

struct SecurityScanTarget {
  std::string exe;        // the host path (" (deleted)" stripped)
  std::string scan_path;  // what the scanner is given (under the root fs; /proc/PID/exe if gone)
  std::vector<int> pids;
  std::vector<std::string> comms;
  std::vector<std::string> why;  // "gpu", "miner name", "temp dir", "deleted"
};

// Processes worth scanning (flagged or GPU), one target per executable. Never fails.
std::vector<SecurityScanTarget> CollectScanTargets(const RootFs& fs, TimePoint deadline);

// The three steps; each appends findings to `out`.
void ScanWithClamav(const SecurityScanOptions& o, const std::vector<SecurityScanTarget>& targets,
                    std::vector<Finding>& out);
void VerifyPackages(const SecurityScanOptions& o, std::vector<Finding>& out);
void CheckChangedFiles(const SecurityScanOptions& o, std::vector<Finding>& out);

// Why a step did not run: its tool is absent or switched off (info), or it failed (warn).
enum class NotCheckedKind { kAbsent, kFailed };
// scan.not_checked for a step that was not run; evidence "tool" is "absent" or "failed".
Finding MakeScanNotChecked(const std::string& step, const std::string& why, NotCheckedKind kind);

// Whether a path lies under the system binary and library directories judged by VerifyPackages.
bool IsSystemBinaryPath(std::string_view path);

}  // namespace gpudoctor
