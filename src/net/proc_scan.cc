#include "net/proc_scan.h"

#include <sys/stat.h>

#include <cctype>

#include "core/strings.h"

namespace gpudoctor {

std::optional<uint64_t> ParseSocketLink(std::string_view link) {
  if (!StartsWith(link, "socket:[") || !EndsWith(link, "]")) return std::nullopt;
  return ParseUint64(link.substr(8, link.size() - 9));
}

bool IsNvidiaGpuDevice(std::string_view link) {
  constexpr std::string_view kPrefix = "/dev/nvidia";
  if (!StartsWith(link, kPrefix) || link.size() == kPrefix.size()) return false;
  for (char c : link.substr(kPrefix.size())) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::map<uint32_t, std::string> ParsePasswd(std::string_view text) {
  std::map<uint32_t, std::string> out;
  for (std::string_view line : SplitLines(text)) {
    auto f = Split(line, ":", /*skip_empty=*/false);
    if (f.size() < 3 || f[0].empty()) continue;
    auto uid = ParseUint64(f[2]);
    if (!uid || *uid > 0xffffffffu) continue;
    out.emplace(static_cast<uint32_t>(*uid), Sanitize(f[0], 64));
  }
  return out;
}

ProcessScan ScanProcesses(const RootFs& fs, const ProcScanOptions& opts) {
  ProcessScan scan;
  auto entries = RootFs::ListDir(fs.procfs());
  if (!entries.ok()) return scan;
  auto past_deadline = [&opts] { return opts.deadline && SteadyClock::now() >= *opts.deadline; };
  size_t visited = 0;
  for (const auto& name : *entries) {
    if (scan.processes.size() >= opts.max_processes) break;
    if (visited++ % kScanDeadlineStride == 0 && past_deadline()) {
      scan.truncated = true;
      break;
    }
    auto pid = ParseInt64(name);
    if (!pid || *pid <= 0 || *pid > 0x3fffffff) continue;
    auto stat_text = fs.ReadProc(name + "/stat", 4096);
    if (!stat_text.ok()) continue;  // exited meanwhile
    auto st = ParsePidStat(*stat_text);
    if (!st.ok()) continue;
    ScannedProcess p;
    p.pid = static_cast<int>(*pid);
    p.state = st->state;
    p.cpu_ticks = st->utime_ticks.value_or(0) + st->stime_ticks.value_or(0);
    p.start_ticks = st->start_ticks;
    p.comm = st->comm;
    if (auto comm = fs.ReadProc(name + "/comm", 256); comm.ok()) {
      p.comm = Sanitize(Trim(*comm), 64);
    }
    struct stat sb {};
    if (::stat(fs.ProcPath(name).c_str(), &sb) == 0) p.uid = sb.st_uid;
    if (p.state == 'D') {
      ++scan.skipped_dstate;
      scan.processes.push_back(std::move(p));
      continue;
    }
    if (opts.read_fds) {
      std::string fd_dir = fs.ProcPath(name + "/fd");
      if (auto fds = RootFs::ListDir(fd_dir); fds.ok()) {
        p.fds_read = true;
        size_t fds_visited = 0;
        for (const auto& fd : *fds) {
          if (++fds_visited % kScanDeadlineStride == 0 && past_deadline()) {
            scan.truncated = true;
            break;
          }
          auto link = RootFs::ReadLink(fd_dir + "/" + fd);
          if (!link.ok()) continue;
          if (auto inode = ParseSocketLink(*link)) {
            p.socket_inodes.push_back(*inode);
          } else if (IsNvidiaGpuDevice(*link)) {
            p.gpu_device_open = true;
          }
        }
      }
    }
    if (opts.read_exe) {
      if (auto exe = RootFs::ReadLink(fs.ProcPath(name + "/exe")); exe.ok()) {
        p.exe = Sanitize(*exe, 512);
      }
    }
    scan.processes.push_back(std::move(p));
    if (scan.truncated) break;
  }
  return scan;
}

}  // namespace gpudoctor
