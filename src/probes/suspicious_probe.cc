// Process-signs probe (miner-like behaviour). Source: /proc/PID/{stat,comm}, /proc/PID/fd and
// exe links (never for D-state tasks), sock_diag TCP dumps at both ends of the window,
// /etc/passwd for user names. Units: CPU percent of one core over the window.
// Failure modes: no /proc → skipped; no sock_diag → signs without connections; unreadable fds
// of other users (not root) → those processes lack connection and GPU signs; a /proc scan cut
// short by the check deadline gives partial facts marked truncated.
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "net/process_signs.h"
#include "probes/probe.h"

namespace gpudoctor {

ProbeOutput RunSuspiciousProbe(const ProbeContext& ctx) {
  if (!RootFs::Exists(ctx.fs().ProcPath("self"))) {
    return ProbeSkipped("no procfs at " + ctx.fs().procfs());
  }
  TimePoint scan_deadline = ctx.deadline - std::chrono::milliseconds(200);  // time to report
  ProcScanOptions light;
  light.read_fds = false;
  light.deadline = scan_deadline;
  ProcessScan before = ScanProcesses(ctx.fs(), light);
  auto sockets_before = DumpTcpSockets();
  TimePoint t0 = SteadyClock::now();
  std::this_thread::sleep_for(ctx.sample_window());
  auto sockets_after = DumpTcpSockets();
  double window_s = std::chrono::duration<double>(SteadyClock::now() - t0).count();
  ProcScanOptions full;
  full.read_exe = true;
  full.deadline = scan_deadline;
  ProcessScan after = ScanProcesses(ctx.fs(), full);
  std::map<uint32_t, std::string> users;
  if (auto passwd = RootFs::ReadFile(ctx.fs().RootPath("/etc/passwd")); passwd.ok()) {
    users = ParsePasswd(*passwd);
  }
  ProcessSignInputs in;
  in.before = &before;
  in.after = &after;
  if (sockets_before.ok() && sockets_after.ok()) {
    in.sockets_before = &*sockets_before;
    in.sockets_after = &*sockets_after;
  }
  in.users = &users;
  in.window_s = window_s;
  long hz = ::sysconf(_SC_CLK_TCK);
  in.ticks_per_s = hz > 0 ? static_cast<double>(hz) : 100.0;
  ProcessSignFacts facts = CollectProcessSigns(in);
  const auto& known = ctx.settings->net_known_gpu_users;
  if (!known.empty()) {
    for (auto& p : facts.processes) {
      if (!p.gpu_device_open) continue;
      p.gpu_user_known =
          std::find(known.begin(), known.end(), p.user) != known.end() ||
          (p.uid && std::find(known.begin(), known.end(), std::to_string(*p.uid)) != known.end());
    }
  }
  return ProbeOk([facts = std::move(facts)](Snapshot& s) { s.network.process_signs = facts; });
}

}  // namespace gpudoctor
