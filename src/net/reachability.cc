#include "net/reachability.h"

#include <optional>

#include "net/rtt_stats.h"

namespace gpudoctor {

std::chrono::milliseconds HostBudget(const ReachabilityOptions& opts) {
  int count = std::max(opts.ping.count, 1);
  return opts.resolve_timeout + (count - 1) * opts.ping.interval + opts.ping.timeout +
         std::chrono::milliseconds(100);
}

bool FallbackInconclusive(TargetGroup group, bool tcp_fallback, const PingResult& ping) {
  return group == TargetGroup::kGateway && tcp_fallback && ping.sent > 0 && ping.rtts_ms.empty() &&
         !ping.port_closed;
}

TargetProbeFacts ProbeHost(const HostToProbe& host, const ReachabilityOptions& opts) {
  TargetProbeFacts f;
  f.name = host.target.spec;
  f.group = host.group;
  auto addr = ResolveTarget(host.target, opts.resolve_timeout);
  if (!addr.ok()) {
    f.error = addr.status().message();
    return f;
  }
  f.address = AddressToString(*addr);
  PingResult ping;
  bool tcp_fallback = false;
  if (host.target.method == ProbeMethod::kTcp) {
    ping = TcpPing(*addr, *host.target.port, opts.ping);
  } else {
    std::optional<PingResult> icmp;
    if (opts.use_icmp) {
      if (auto r = IcmpPing(*addr, opts.ping); r.ok()) icmp = std::move(*r);
    }
    if (icmp) {
      ping = std::move(*icmp);
    } else {
      ping = TcpPing(*addr, opts.fallback_tcp_port, opts.ping);
      ping.method = "tcp-fallback:" + std::to_string(opts.fallback_tcp_port);
      tcp_fallback = true;
    }
  }
  f.method = ping.method;
  RttStats s = ComputeRttStats(ping.sent, ping.rtts_ms);
  f.sent = s.sent;
  f.received = s.received;
  f.loss_pct = s.loss_pct;
  f.rtt_min_ms = s.min_ms;
  f.rtt_median_ms = s.median_ms;
  f.rtt_p95_ms = s.p95_ms;
  f.rtt_max_ms = s.max_ms;
  f.jitter_ms = s.jitter_ms;
  f.port_closed = ping.port_closed;
  if (ping.sent == 0) f.error = ping.last_error.empty() ? "nothing sent" : ping.last_error;
  if (FallbackInconclusive(host.group, tcp_fallback, ping)) {
    f.inconclusive = true;
    f.error = kGatewayUnprobed;
  }
  return f;
}

std::vector<TargetProbeFacts> ProbeHosts(const std::vector<HostToProbe>& hosts,
                                         const ReachabilityOptions& opts, TimePoint deadline) {
  std::vector<std::shared_ptr<PendingResult<TargetProbeFacts>>> pending;
  pending.reserve(hosts.size());
  for (const auto& h : hosts) {
    pending.push_back(StartDetached([h, opts] { return ProbeHost(h, opts); }));
  }
  std::vector<TargetProbeFacts> out;
  out.reserve(hosts.size());
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (pending[i] != nullptr && pending[i]->WaitUntil(deadline)) {
      out.push_back(pending[i]->Take());
      continue;
    }
    TargetProbeFacts f;
    f.name = hosts[i].target.spec;
    f.group = hosts[i].group;
    if (pending[i] == nullptr) {
      f.error = "could not start a worker thread";
    } else {
      CountAbandonedWorker();
      // Not a name problem and not a loss: the series was cut, so nothing can be said.
      f.inconclusive = true;
      f.unfinished = true;
      f.error = "probe series did not finish within the check deadline";
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gpudoctor
