// Socket traffic probe. Source: netlink sock_diag TCP dumps (tcp_info bytes_acked /
// bytes_received) at both ends of the sampling window; owners from /proc/PID/fd socket inodes
// (D-state tasks skipped). Units: bytes and bytes per second over the window.
// Failure modes: no sock_diag (kernel without inet_diag, seccomp) → skipped; kernels without
// the byte counters (< 4.1) give sockets without bytes; unreadable fd dirs (other users, no
// CAP_SYS_PTRACE) leave their traffic unmapped; a /proc scan cut short by the check deadline is
// marked process_scan_truncated (its processes' traffic is unmapped too).
// The suspicious probe scans /proc again on its own: probes are independent by design.
#include <thread>

#include "net/proc_scan.h"
#include "net/socket_traffic.h"
#include "probes/probe.h"

namespace gpudoctor {

ProbeOutput RunSocketsProbe(const ProbeContext& ctx) {
  auto first = DumpTcpSockets();
  if (!first.ok()) return ProbeSkipped("sock_diag unavailable: " + first.status().message());
  TimePoint t0 = SteadyClock::now();
  std::this_thread::sleep_for(ctx.sample_window());
  auto second = DumpTcpSockets();
  if (!second.ok()) return ProbeFailed("second sock_diag dump: " + second.status().message());
  double window_s = std::chrono::duration<double>(SteadyClock::now() - t0).count();
  ProcScanOptions opts;
  opts.deadline = ctx.deadline - std::chrono::milliseconds(200);  // leave time to report
  ProcessScan scan = ScanProcesses(ctx.fs(), opts);
  SocketTrafficFacts facts = AggregateSocketTraffic(*first, *second, scan.processes, window_s);
  facts.process_scan_truncated = scan.truncated;
  facts.processes_scanned = static_cast<int>(scan.processes.size());
  return ProbeOk([facts = std::move(facts)](Snapshot& s) { s.network.sockets = facts; });
}

}  // namespace gpudoctor
