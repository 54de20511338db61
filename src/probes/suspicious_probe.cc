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
#include "probes/probe_entry_points.h"
#include "probes/round_walk.h"
#include "probes/shared_samples.h"

namespace gpudoctor {

namespace {

// Under `watch` the sockets and suspicious probes (and inference discovery) of one round share
// one /proc walk (RecentFullScan): a walk that started this long before is this round's.
constexpr auto kSameRoundScanAge = std::chrono::milliseconds(500);

// Under `watch`: what the next run needs of this run's /proc walk and socket table, its "before"
// (the window is the time between runs; no sleep inside a tick). Not the walk and the table
// themselves: held until the next round, they were megabytes on a host with thousands of
// processes and connections, and two of each were alive while a round ran.
struct SuspiciousCarry : ProbeCarry {
  ProcessSignsBaseline baseline;
  TimePoint scan_started_at{};  // the walk's: the next run must not be handed the same walk
  TimePoint tcp_at{};
};

}  // namespace

ProbeOutput RunSuspiciousProbe(const ProbeContext& ctx) {
  if (!RootFs::Exists(ctx.fs().ProcPath("self"))) {
    return ProbeSkipped("no procfs at " + ctx.fs().procfs());
  }
  TimePoint scan_deadline = ctx.deadline - std::chrono::milliseconds(200);  // time to report
  // `check` shares the walks and dumps with the sockets probe and samples across its window;
  // `watch` reads once per run and diffs against the previous run's carry.
  const bool stepping = ctx.continuous || ctx.shared == nullptr;
  auto own = ctx.continuous ? nullptr
             : stepping     ? std::make_shared<SharedSamples>(ctx.fs(), scan_deadline)
                            : ctx.shared;
  std::shared_ptr<SuspiciousCarry> carry;
  ProcessSignsBaseline baseline;  // check: built from the window's first samples
  const ProcessSignsBaseline* before = nullptr;
  TimePoint before_at{};
  std::shared_ptr<const ProcessScan> this_round;  // watch: the round's shared walk
  const ProcessScan* after_scan = nullptr;
  const TcpTable* tcp_after_sample = nullptr;
  std::shared_ptr<const TcpTable> round_tcp;  // watch: the round's table, shared with `sockets`
  if (ctx.continuous) {
    auto* prev = dynamic_cast<SuspiciousCarry*>(ctx.previous.get());
    std::optional<TimePoint> after_previous, tcp_after_previous;
    if (prev != nullptr) {
      after_previous = prev->scan_started_at;
      tcp_after_previous = prev->tcp_at;
    }
    // Not copied: a socket table can be megabytes.
    round_tcp = RoundTcpDump(ctx, kSameRoundScanAge, tcp_after_previous);
    const TcpTable& watch_tcp = *round_tcp;
    this_round = RoundWalk(ctx, kSameRoundScanAge, scan_deadline, after_previous);
    carry = std::make_shared<SuspiciousCarry>();
    carry->baseline = MakeProcessSignsBaseline(
        *this_round, watch_tcp.sockets.ok() ? &*watch_tcp.sockets : nullptr);
    carry->scan_started_at = this_round->started_at;
    carry->tcp_at = watch_tcp.at;
    if (prev == nullptr) {
      ProbeOutput out = ProbeSkipped("first sample of a watch: CPU and traffic from the next run");
      out.next = std::move(carry);
      return out;
    }
    before = &prev->baseline;
    before_at = prev->tcp_at;
    after_scan = this_round.get();
    tcp_after_sample = &watch_tcp;
  } else {
    TimePoint window_start = stepping ? SteadyClock::now() : ctx.window_start;
    TimePoint window_end = window_start + ctx.sample_window();
    const ProcessScan& scan_before = own->ProcessesBefore();
    const SharedSamples::TcpSample& tcp_before = own->TcpBefore();
    baseline = MakeProcessSignsBaseline(scan_before,
                                        tcp_before.sockets.ok() ? &*tcp_before.sockets : nullptr);
    before = &baseline;
    before_at = tcp_before.at;
    tcp_after_sample = &own->TcpAfter(window_end);
    after_scan = &own->ProcessesAfter(window_end);
  }
  const ProcessScan& after = *after_scan;
  const Result<std::vector<TcpSocketInfo>>& sockets_after = tcp_after_sample->sockets;
  double window_s = std::chrono::duration<double>(tcp_after_sample->at - before_at).count();
  std::map<uint32_t, std::string> users;
  if (auto passwd = RootFs::ReadFile(ctx.fs().RootPath("/etc/passwd")); passwd.ok()) {
    users = ParsePasswd(*passwd);
  }
  ProcessSignInputs in;
  in.before = before;
  in.after = &after;
  // Connection signs need both tables (persistence is "established in both").
  if (before->established && sockets_after.ok()) in.sockets_after = &*sockets_after;
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
  ProbeOutput out =
      ProbeOk([facts = std::move(facts)](Snapshot& s) { s.network.process_signs = facts; });
  out.next = std::move(carry);
  return out;
}

}  // namespace gpudoctor
