// Socket traffic probe. Source: netlink sock_diag TCP dumps (tcp_info bytes_acked /
// bytes_received) at both ends of the sampling window; owners from /proc/PID/fd socket inodes
// (D-state tasks skipped). Units: bytes and bytes per second over the window.
// Failure modes: no sock_diag (kernel without inet_diag, seccomp) → skipped; kernels without
// the byte counters (< 4.1) give sockets without bytes; unreadable fd dirs (other users, no
// CAP_SYS_PTRACE) leave their traffic unmapped; a /proc scan cut short by the check deadline is
// marked process_scan_truncated (its processes' traffic is unmapped too).
// UDP and raw sockets: sock_diag dumps at both ends of the window (owners, peers, queue sizes;
// the kernel counts no bytes for them) and the namespace's /proc/net/snmp datagram counters.
// Under `watch` the suspicious probe and this one share the round's /proc walk (RecentFullScan)
// and its TCP table (RecentTcpDump): one walk and one dump a round.
#include <thread>

#include "net/client_networks.h"
#include "net/proc_scan.h"
#include "net/socket_traffic.h"
#include "net/udp_sample.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"
#include "probes/round_walk.h"
#include "probes/shared_samples.h"

namespace gpudoctor {

namespace {

// `check`: the socket table at both ends of the window and the /proc walk, shared with the
// suspicious probe (one pair of dumps and one walk per check).
ProbeOutput FromSharedSamples(const ProbeContext& ctx) {
  SharedSamples& shared = *ctx.shared;
  UdpSample udp_before = TakeUdpSample(ctx.fs());
  // CPU at the window's start ranks UDP senders (shared with the suspicious probe: one walk).
  const ProcessScan& procs_before = shared.ProcessesBefore();
  const auto& before = shared.TcpBefore();
  if (!before.sockets.ok()) {
    return ProbeSkipped("sock_diag unavailable: " + before.sockets.status().message());
  }
  TimePoint window_end = ctx.window_start + ctx.sample_window();
  const auto& after = shared.TcpAfter(window_end);
  if (!after.sockets.ok()) {
    return ProbeFailed("second sock_diag dump: " + after.sockets.status().message());
  }
  double window_s = std::chrono::duration<double>(after.at - before.at).count();
  const ProcessScan& scan = shared.ProcessesAfter(window_end);
  SocketTrafficFacts facts =
      AggregateSocketTraffic(*before.sockets, *after.sockets, scan.processes, window_s);
  facts.client_networks = GroupClientNetworks(*after.sockets);
  facts.process_scan_truncated = scan.truncated;
  facts.processes_scanned = static_cast<int>(scan.processes.size());
  UdpSample udp_after = TakeUdpSample(ctx.fs());
  if (udp_after.udp_ok) {
    facts.udp = UdpFactsBetween(udp_before, udp_after, scan.processes, &procs_before.processes);
  }
  return ProbeOk([facts = std::move(facts)](Snapshot& s) { s.network.sockets = facts; });
}

// A walk that started this long before is this round's (see RecentFullScan).
constexpr auto kSameRoundScanAge = std::chrono::milliseconds(500);

struct SocketsSample {
  std::shared_ptr<const TcpTable> tcp;  // the round's table (RoundTcpDump), dumped without error
  UdpSample udp;
};
// What the next window needs of a sample (under `watch` carried from tick to tick): the TCP
// sockets' byte counters, not the table (net/socket_traffic.h).
struct SocketsStart {
  std::vector<SocketBytes> tcp;
  UdpSample udp;
};
SocketsStart StartOf(SocketsSample&& sample) {
  return {SocketBytesOf(*sample.tcp->sockets), std::move(sample.udp)};
}

}  // namespace

ProbeOutput RunSocketsProbe(const ProbeContext& ctx) {
  if (ctx.shared != nullptr && !ctx.continuous) return FromSharedSamples(ctx);
  // The TCP table is the round's (under `watch` the suspicious probe reads the same dump), one
  // dumped after `newer_than` (this window's start) so that a window never ends where it began.
  auto read = [&ctx](std::optional<TimePoint> newer_than) -> Result<SocketsSample> {
    std::shared_ptr<const TcpTable> tcp = RoundTcpDump(ctx, kSameRoundScanAge, newer_than);
    if (!tcp->sockets.ok()) return tcp->sockets.status();
    return SocketsSample{std::move(tcp), TakeUdpSample(ctx.fs())};
  };
  auto first = TakeFirstSample<SocketsStart>(ctx, [&read]() -> Result<SocketsStart> {
    auto sample = read(std::nullopt);
    if (!sample.ok()) return sample.status();
    return StartOf(std::move(*sample));
  });
  if (!first.ok()) return ProbeSkipped("sock_diag unavailable: " + first.status().message());
  auto second = read(first->sample ? std::optional<TimePoint>(first->at) : std::nullopt);
  if (!second.ok()) return ProbeFailed("second sock_diag dump: " + second.status().message());
  const TimePoint t1 = second->tcp->at;
  const std::vector<TcpSocketInfo>& tcp_after = *second->tcp->sockets;
  // The carry takes the second dump's counters (and UDP sample) once this run is through with it.
  auto carry_of = [&] {
    return std::make_shared<SampleCarry<SocketsStart>>(StartOf(std::move(*second)), t1);
  };
  if (!first->sample) {
    ProbeOutput out = ProbeSkipped("first sample of a watch: rates from the next tick");
    out.next = carry_of();
    return out;
  }
  double window_s = std::chrono::duration<double>(t1 - first->at).count();
  ProcScanOptions opts;
  opts.deadline = ctx.deadline - std::chrono::milliseconds(200);  // leave time to report
  // Under watch the round's one /proc walk, shared with the suspicious probe (proc_scan.h).
  std::shared_ptr<const ProcessScan> walk =
      ctx.continuous ? RoundWalk(ctx, kSameRoundScanAge, opts.deadline)
                     : std::make_shared<const ProcessScan>(ScanProcesses(ctx.fs(), opts));
  const ProcessScan& scan = *walk;
  SocketTrafficFacts facts =
      AggregateSocketTraffic(first->sample->tcp, tcp_after, scan.processes, window_s);
  facts.client_networks = GroupClientNetworks(tcp_after);
  if (second->udp.udp_ok)
    facts.udp = UdpFactsBetween(first->sample->udp, second->udp, scan.processes);
  facts.process_scan_truncated = scan.truncated;
  facts.processes_scanned = static_cast<int>(scan.processes.size());
  ProbeOutput out = ProbeOk([facts = std::move(facts)](Snapshot& s) { s.network.sockets = facts; });
  out.next = carry_of();
  return out;
}

}  // namespace gpudoctor
