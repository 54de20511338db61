#include "cli/scan_checks.h"

#include <algorithm>
#include <map>

#include "core/strings.h"
#include "core/subprocess.h"
#include "core/time_spec.h"
#include "facts/miner_signs.h"
#include "net/proc_scan.h"
#include "parsers/scan_outputs.h"
#include "rules/make_finding.h"

namespace gpudoctor {
namespace {

constexpr size_t kToolOutputBytes = 8 << 20;

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}
constexpr size_t kListedPaths = 40;

void NotChecked(const std::string& step, const std::string& why, const std::string& method,
                std::vector<Finding>& out, NotCheckedKind kind = NotCheckedKind::kFailed) {
  Finding f = MakeScanNotChecked(step, why, kind);
  if (!method.empty()) f.Add("method", method);
  out.push_back(std::move(f));
}

// A tool that did not run: absent (not found on PATH: `absent_why`, a note) or failed (warn).
void NotRun(const std::string& step, const Status& status, const std::string& absent_why,
            const std::string& method, std::vector<Finding>& out) {
  if (status.code() == StatusCode::kNotFound) {
    NotChecked(step, absent_why, method, out, NotCheckedKind::kAbsent);
  } else {
    NotChecked(step, status.message(), method, out);
  }
}

void Clean(const std::string& step, const std::string& what, const std::string& method,
           std::vector<Finding>& out) {
  Finding f = MakeFinding("scan.clean", Severity::kInfo, step + ": " + what);
  f.subject = step;
  f.Add("step", step).Add("method", method);
  out.push_back(std::move(f));
}

std::string Excerpt(const std::string& text) {
  std::string t(Trim(text));
  if (size_t nl = t.find('\n'); nl != std::string::npos) t = t.substr(0, nl);
  return Sanitize(t, 200);
}

std::string Command(const std::vector<std::string>& argv, size_t shown) {
  std::vector<std::string> head(argv.begin(), argv.begin() + std::min(shown, argv.size()));
  std::string s = Join(head, " ");
  if (argv.size() > shown) s += " ... (" + std::to_string(argv.size() - shown) + " paths)";
  return s;
}

// The clamd socket from clamd.conf (LocalSocket), else Debian's default; empty when none exists.
std::string ClamdSocket(const RootFs& fs) {
  std::vector<std::string> candidates;
  if (auto conf = RootFs::ReadFile(fs.RootPath("/etc/clamav/clamd.conf"), 256 * 1024); conf.ok()) {
    for (std::string_view line : SplitLines(*conf)) {
      auto f = Split(Trim(line), " \t", /*skip_empty=*/true);
      if (f.size() == 2 && f[0] == "LocalSocket") candidates.emplace_back(f[1]);
    }
  }
  candidates.emplace_back("/run/clamav/clamd.ctl");
  candidates.emplace_back("/var/run/clamav/clamd.ctl");
  for (const auto& c : candidates) {
    if (StartsWith(c, "/") && RootFs::Exists(fs.RootPath(c))) return c;
  }
  return "";
}

bool UnderDir(std::string_view path, std::string_view dir) {
  return StartsWith(path, dir) && path.size() > dir.size() && path[dir.size()] == '/';
}

}  // namespace

Finding MakeScanNotChecked(const std::string& step, const std::string& why, NotCheckedKind kind) {
  bool absent = kind == NotCheckedKind::kAbsent;
  Finding f = MakeFinding("scan.not_checked", absent ? Severity::kInfo : Severity::kWarn,
                          step + " not checked: " + why);
  f.subject = step;
  f.Add("step", step).Add("reason", why).Add("tool", absent ? "absent" : "failed");
  return f;
}

bool IsSystemBinaryPath(std::string_view path) {
  for (std::string_view dir : {"/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/lib", "/lib",
                               "/usr/lib64", "/lib64", "/usr/lib32", "/lib32", "/usr/libexec"}) {
    if (UnderDir(path, dir)) return true;
  }
  return false;
}

std::vector<SecurityScanTarget> CollectScanTargets(const RootFs& fs, TimePoint deadline) {
  ProcScanOptions opts;
  opts.read_fds = true;
  opts.read_exe = true;
  opts.deadline = deadline;
  ProcessScan scan = ScanProcesses(fs, opts);
  std::map<std::string, SecurityScanTarget> by_exe;
  for (const auto& p : scan.processes) {
    if (p.exe.empty()) continue;
    std::vector<std::string> why;
    if (p.gpu_device_open) why.emplace_back("gpu");
    if (MinerName(p.comm)) why.emplace_back("miner name");
    if (ExeInTempDir(p.exe)) why.emplace_back("temp dir");
    bool deleted = EndsWith(p.exe, " (deleted)");
    if (deleted) why.emplace_back("deleted");
    if (why.empty()) continue;
    std::string exe = deleted ? p.exe.substr(0, p.exe.size() - 10) : p.exe;
    SecurityScanTarget& t = by_exe[exe];
    if (t.exe.empty()) {
      t.exe = exe;
      // A deleted file is gone from the tree: its content is still readable through the link.
      t.scan_path = deleted ? fs.ProcPath(std::to_string(p.pid) + "/exe") : fs.RootPath(exe);
    }
    t.pids.push_back(p.pid);
    t.comms.push_back(p.comm);
    for (auto& w : why) {
      if (std::find(t.why.begin(), t.why.end(), w) == t.why.end()) t.why.push_back(w);
    }
  }
  std::vector<SecurityScanTarget> out;
  for (auto& [exe, t] : by_exe) out.push_back(std::move(t));
  return out;
}

void ScanWithClamav(const SecurityScanOptions& o, const std::vector<SecurityScanTarget>& targets,
                    std::vector<Finding>& out) {
  const std::string step = "clamav";
  if (targets.empty()) {
    Clean(step, "no flagged or GPU process: no executable to scan",
          "processes flagged by name, temp-dir or deleted executable, and GPU processes", out);
    return;
  }
  std::vector<std::string> paths;
  for (const auto& t : targets) paths.push_back(t.scan_path);
  std::string socket = ClamdSocket(o.fs);
  Result<ProcessResult> run = NotFound("not tried");
  std::vector<std::string> argv;
  if (!socket.empty()) {
    argv = {"clamdscan", "--no-summary", "--fdpass"};
    argv.insert(argv.end(), paths.begin(), paths.end());
    run = RunProcess(argv, o.tool_timeout_s, kToolOutputBytes);
  }
  if (socket.empty() || run.status().code() == StatusCode::kNotFound) {
    argv = {"clamscan", "--no-summary"};
    argv.insert(argv.end(), paths.begin(), paths.end());
    run = RunProcess(argv, o.tool_timeout_s, kToolOutputBytes);
  }
  std::string method = Command(argv, argv[0] == "clamdscan" ? 3 : 2) +
                       (socket.empty() ? "" : " (clamd socket " + socket + ")");
  if (!run.ok()) {
    NotRun(step, run.status(),
           "ClamAV is not installed (no clamscan or clamdscan on PATH); install it with "
           "`apt install clamav` and load its signatures with `freshclam`",
           method, out);
    return;
  }
  auto parsed = ParseClamOutput(run->out);
  if (!parsed.ok()) {
    NotChecked(step, parsed.status().message(), method, out);
    return;
  }
  // Exit 0: clean, 1: something found, 2: errors (no database, unreadable file).
  if (run->exit_code != 0 && run->exit_code != 1 && parsed->empty()) {
    NotChecked(step,
               "exit code " + std::to_string(run->exit_code) + ": " +
                   Excerpt(run->err.empty() ? run->out : run->err),
               method, out);
    return;
  }
  std::map<std::string, const SecurityScanTarget*> by_path;
  for (const auto& t : targets) by_path[t.scan_path] = &t;
  int found = 0;
  std::vector<std::string> errors;
  std::vector<std::string> scanned;
  for (const auto& r : *parsed) {
    const SecurityScanTarget* t = by_path.count(r.path) ? by_path[r.path] : nullptr;
    std::string shown = t ? t->exe : r.path;
    if (r.error) {
      errors.push_back(shown + " (" + r.error_text + ")");
      continue;
    }
    scanned.push_back(shown);
    if (r.signature.empty()) continue;
    ++found;
    Finding f =
        MakeFinding("scan.malware", Severity::kCrit, "ClamAV: " + shown + " is " + r.signature);
    f.subject = shown;
    f.Add("path", shown).Add("signature", r.signature).Add("method", method);
    if (t != nullptr) {
      std::vector<std::string> pids;
      for (size_t i = 0; i < t->pids.size(); ++i) {
        pids.push_back(t->comms[i] + " (pid " + std::to_string(t->pids[i]) + ")");
      }
      f.Add("processes", Join(pids, ", ")).Add("flagged_as", Join(t->why, ", "));
    }
    out.push_back(std::move(f));
  }
  if (!errors.empty()) {
    NotChecked(step,
               std::to_string(errors.size()) +
                   " executable(s) could not be scanned: " + Join(errors, "; "),
               method, out);
  }
  if (found == 0 && !scanned.empty()) {
    Clean(step,
          std::to_string(scanned.size()) +
              " executable(s) scanned, nothing found: " + Join(scanned, ", "),
          method, out);
  }
  if (scanned.empty() && errors.empty()) {
    NotChecked(step,
               "ClamAV printed no result for the " + std::to_string(paths.size()) +
                   " executable(s) it was given",
               method, out);
  }
}

void VerifyPackages(const SecurityScanOptions& o, std::vector<Finding>& out) {
  const std::string step = "packages";
  const std::string root = o.fs.rootfs();
  const bool host_root = root.empty() || root == "/";
  std::vector<std::string> argv = {"debsums", "-s"};
  if (!host_root) argv.push_back("--root=" + root);
  argv.insert(argv.end(), o.packages.begin(), o.packages.end());
  auto run = RunProcess(argv, o.tool_timeout_s, kToolOutputBytes);
  bool debsums = true;
  if (!run.ok() && run.status().code() == StatusCode::kNotFound) {
    debsums = false;
    argv = {"dpkg"};
    if (!host_root) argv.push_back("--root=" + root);
    argv.push_back("--verify");
    argv.insert(argv.end(), o.packages.begin(), o.packages.end());
    run = RunProcess(argv, o.tool_timeout_s, kToolOutputBytes);
  }
  std::string method = Join(argv, " ");
  if (!run.ok()) {
    NotRun(step, run.status(),
           "neither debsums nor dpkg is installed (not a Debian-family system); on Debian or "
           "Ubuntu: `apt install debsums`",
           method, out);
    return;
  }
  std::vector<ChangedPackageFile> files;
  if (debsums) {
    files = ParseDebsums(run->err + "\n" + run->out);
    // debsums exits 2 for changed files; anything else without findings is a failure.
    if (files.empty() && run->exit_code != 0) {
      NotChecked(step, "exit code " + std::to_string(run->exit_code) + ": " + Excerpt(run->err),
                 method, out);
      return;
    }
  } else {
    auto parsed = ParseDpkgVerify(run->out);
    if (!parsed.ok()) {
      NotChecked(step, parsed.status().message(), method, out);
      return;
    }
    if (parsed->empty() && run->exit_code != 0) {
      NotChecked(step, "exit code " + std::to_string(run->exit_code) + ": " + Excerpt(run->err),
                 method, out);
      return;
    }
    files = std::move(*parsed);
  }
  if (run->out_truncated || run->err_truncated) {
    NotChecked(step, "output longer than " + std::to_string(kToolOutputBytes) + " bytes: cut",
               method, out);
  }
  std::vector<std::string> listed;
  size_t system = 0, elsewhere = 0;
  for (const auto& f : files) {
    if (f.conffile || !IsSystemBinaryPath(f.path)) {
      ++elsewhere;
      continue;
    }
    ++system;
    if (listed.size() < kListedPaths) listed.push_back(f.path + " [" + f.checks + "]");
  }
  if (system == 0) {
    Clean(step,
          "no system binary or library differs from its package (" + std::to_string(elsewhere) +
              " other file(s) differ: configuration, data)",
          method, out);
    return;
  }
  Finding f = MakeFinding(
      "scan.packages.changed", Severity::kWarn,
      std::to_string(system) + " system binary/library file(s) differ from their packages");
  f.subject = "packages";
  f.Add("changed_files", Join(listed, ", ")).Add("count", static_cast<int64_t>(system));
  if (system > listed.size()) f.Add("listed", static_cast<int64_t>(listed.size()));
  f.Add("other_changed_files", static_cast<int64_t>(elsewhere)).Add("method", method);
  out.push_back(std::move(f));
}

namespace {

struct ChangedFile {
  std::string path;
  int64_t mtime_s = 0;
};

struct FileWalk {
  std::vector<ChangedFile> keys, crons;
  int keys_checked = 0, crons_checked = 0;
};

void Visit(const RootFs& fs, const std::string& path, int64_t since, int depth,
           std::vector<ChangedFile>& changed, int& checked) {
  auto info = RootFs::Stat(fs.RootPath(path));
  if (!info.ok()) return;
  if (info->is_dir) {
    if (depth <= 0) return;
    auto entries = RootFs::ListDir(fs.RootPath(path));
    if (!entries.ok()) return;
    for (const auto& e : *entries) Visit(fs, path + "/" + e, since, depth - 1, changed, checked);
    return;
  }
  if (!info->is_regular) return;
  ++checked;
  int64_t mtime = info->mtime_unix_ns / 1000000000;
  if (mtime >= since) changed.push_back({Sanitize(path, 1024), mtime});
}

FileWalk WalkFiles(const RootFs& fs, int64_t since) {
  FileWalk w;
  std::vector<std::string> homes = {"/root"};
  if (auto entries = RootFs::ListDir(fs.RootPath("/home")); entries.ok()) {
    for (const auto& e : *entries) homes.push_back("/home/" + e);
  }
  for (const auto& home : homes) {
    for (const char* name : {"/.ssh/authorized_keys", "/.ssh/authorized_keys2"}) {
      Visit(fs, home + name, since, 0, w.keys, w.keys_checked);
    }
  }
  Visit(fs, "/etc/crontab", since, 0, w.crons, w.crons_checked);
  Visit(fs, "/etc/cron.d", since, 1, w.crons, w.crons_checked);
  Visit(fs, "/var/spool/cron", since, 3, w.crons, w.crons_checked);
  return w;
}

void ReportChanged(const std::string& step, const char* id, const std::string& what,
                   const std::vector<ChangedFile>& changed, int checked,
                   const SecurityScanOptions& o, std::vector<Finding>& out) {
  std::string method = "mtime of " + what + " through the root fs (" + o.fs.rootfs() + ")";
  if (changed.empty()) {
    Clean(step,
          "none of " + std::to_string(checked) + " " + what + " file(s) changed since " +
              FormatUtc(o.since_unix_s),
          method, out);
    return;
  }
  std::vector<std::string> listed;
  for (const auto& c : changed) {
    if (listed.size() >= kListedPaths) break;
    listed.push_back(c.path + " (" + FormatUtc(c.mtime_s) + ")");
  }
  Finding f = MakeFinding(id, Severity::kWarn,
                          std::to_string(changed.size()) + " " + what + " file(s) changed since " +
                              FormatUtc(o.since_unix_s) + ": " + Join(listed, ", "));
  f.subject = step;
  f.Add("files", Join(listed, ", ")).Add("count", static_cast<int64_t>(changed.size()));
  f.Add("since", FormatUtc(o.since_unix_s));
  if (!o.since_text.empty()) f.Add("since_given", o.since_text);
  f.Add("files_checked", checked).Add("method", method);
  out.push_back(std::move(f));
}

}  // namespace

void CheckChangedFiles(const SecurityScanOptions& o, std::vector<Finding>& out) {
  RootFs fs = o.fs;
  int64_t since = o.since_unix_s;
  auto walk = RunWithDeadline([fs, since] { return WalkFiles(fs, since); }, o.files_deadline);
  if (!walk) {
    NotChecked("ssh_keys", "reading the files did not finish before the deadline", "", out);
    NotChecked("crontabs", "reading the files did not finish before the deadline", "", out);
    return;
  }
  std::vector<ChangedFile> keys = walk->keys, crons = walk->crons;
  auto by_time = [](const ChangedFile& a, const ChangedFile& b) {
    return a.mtime_s != b.mtime_s ? a.mtime_s > b.mtime_s : a.path < b.path;
  };
  std::sort(keys.begin(), keys.end(), by_time);
  std::sort(crons.begin(), crons.end(), by_time);
  ReportChanged("ssh_keys", "scan.ssh_keys.changed", "authorized_keys", keys, walk->keys_checked, o,
                out);
  ReportChanged("crontabs", "scan.cron.changed", "crontab", crons, walk->crons_checked, o, out);
}

}  // namespace gpudoctor
