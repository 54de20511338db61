// Reachability probe. Source: ICMP echo / TCP connect / HTTP(S) GET (URL targets)
// to the configured [network] targets and references (--target/--reference); with none
// configured, the default gateway from /proc/net/route. Units: RTT and HTTP phase times in ms,
// loss and failed requests in percent of those sent.
// Failure modes: nothing configured and no default gateway → skipped; an unresolvable or silent
// host is a fact (error / 100% loss), never a probe failure. The implicit gateway that answered
// none of its probes is judged by /proc/net/arp (JudgeSilentGateway): inconclusive when it
// answers ARP (it drops the probes: Azure's never answers ping) or has no entry, lost when not
// even ARP resolves it.
// Bounded: all hosts in parallel, each within HostBudget(), the whole probe within the check
// deadline.
#include "net/reachability.h"
#include "net/route_table.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {

ProbeOutput RunReachabilityProbe(const ProbeContext& ctx) {
  const Settings& s = *ctx.settings;
  std::vector<HostToProbe> hosts;
  auto add = [&](const std::vector<std::string>& specs, TargetGroup group) -> Status {
    for (const auto& spec : specs) {
      auto t = ParseTarget(spec);
      if (!t.ok()) return t.status();
      hosts.push_back({std::move(*t), group});
    }
    return Status::Ok();
  };
  if (Status st = add(s.net_targets, TargetGroup::kTarget); !st.ok()) {
    return ProbeFailed(st.message());
  }
  if (Status st = add(s.net_references, TargetGroup::kReference); !st.ok()) {
    return ProbeFailed(st.message());
  }
  bool gateway_fallback = false;
  std::string gateway_device;
  if (s.net_targets.empty()) {
    auto routes = ctx.fs().ReadProc("net/route");
    std::optional<DefaultRoute> gw;
    if (routes.ok()) gw = ParseDefaultRoute(*routes);
    if (gw) {
      if (auto t = ParseTarget(gw->gateway); t.ok()) {
        hosts.push_back({std::move(*t), TargetGroup::kGateway});
        gateway_fallback = true;
        gateway_device = gw->iface;
      }
    }
    if (!gateway_fallback && hosts.empty()) {
      return ProbeSkipped("no [network] targets configured and no default gateway in " +
                          ctx.fs().ProcPath("net/route"));
    }
  }
  ReachabilityOptions opts;
  opts.ping.count = std::clamp(s.net_probe_count, 1, 100);
  opts.ping.interval = std::chrono::milliseconds(std::clamp(s.net_probe_interval_ms, 1, 10000));
  opts.ping.timeout = std::chrono::milliseconds(std::clamp(s.net_probe_timeout_ms, 1, 10000));
  opts.resolve_timeout = std::chrono::milliseconds(std::clamp(s.net_resolve_timeout_ms, 1, 10000));
  opts.fallback_tcp_port = static_cast<uint16_t>(std::clamp(s.net_fallback_tcp_port, 1, 65535));
  opts.http.count = std::clamp(s.net_http_count, 1, 100);
  opts.http.interval = std::chrono::milliseconds(std::clamp(s.net_http_interval_ms, 1, 10000));
  opts.http.timeout = std::chrono::milliseconds(std::clamp(s.net_http_timeout_ms, 1, 60000));
  opts.http.tls_verify = s.net_http_tls_verify;
  bool any_ping = false, any_url = false;
  for (const auto& h : hosts) (h.target.IsUrl() ? any_url : any_ping) = true;
  // A series that cannot end before the deadline would be abandoned and say nothing at all:
  // send fewer probes or requests (at least one) so that it ends in time.
  auto shorten = [&](ProbeMethod method, int& count, std::chrono::milliseconds interval) {
    auto room = std::chrono::duration_cast<std::chrono::milliseconds>(
        ctx.deadline - std::chrono::milliseconds(200) - SteadyClock::now() -
        HostBudget(opts, method));
    if (room.count() >= 0 || count <= 1) return;
    auto shortfall = -room;
    int fewer = static_cast<int>((shortfall + interval - std::chrono::milliseconds(1)) / interval);
    count = std::max(1, count - fewer);
  };
  // A request timeout near the whole time left leaves room for one request only, and one
  // request cannot show loss: give each request at most 2/3 of the series' room first, then
  // send fewer requests if the series still does not fit.
  if (any_url) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        ctx.deadline - std::chrono::milliseconds(200) - SteadyClock::now());
    auto series = (opts.http.count - 1) * opts.http.interval + opts.http.timeout;
    auto fixed = HostBudget(opts, ProbeMethod::kHttp) - series;  // DNS and slack
    auto cap = (left - fixed) * 2 / 3;
    if (opts.http.timeout > cap) {
      opts.http.timeout = std::max(std::chrono::milliseconds(100), cap);
    }
  }
  shorten(ProbeMethod::kIcmp, opts.ping.count, opts.ping.interval);
  shorten(ProbeMethod::kHttp, opts.http.count, opts.http.interval);
  // One request still too long for the deadline: give it less time rather than lose it.
  auto http_room = std::chrono::duration_cast<std::chrono::milliseconds>(
      ctx.deadline - std::chrono::milliseconds(200) - SteadyClock::now() -
      HostBudget(opts, ProbeMethod::kHttp));
  if (any_url && http_room.count() < 0) {
    opts.http.timeout = std::max(std::chrono::milliseconds(100), opts.http.timeout + http_room);
  }
  std::chrono::milliseconds budget(0);
  if (any_ping) budget = std::max(budget, HostBudget(opts, ProbeMethod::kIcmp));
  if (any_url) budget = std::max(budget, HostBudget(opts, ProbeMethod::kHttp));
  // Finish a little before the check deadline so the facts still make it into the report.
  TimePoint deadline =
      std::min(ctx.deadline - std::chrono::milliseconds(200), SteadyClock::now() + budget);
  ReachabilityFacts facts;
  facts.gateway_fallback = gateway_fallback;
  facts.hosts = ProbeHosts(hosts, opts, deadline);
  // A gateway that answered nothing: the ARP table, read now (the probes just made the kernel
  // resolve it), tells a router that drops them from one that is down. Not read when it answered.
  for (TargetProbeFacts& f : facts.hosts) {
    if (f.group != TargetGroup::kGateway || f.received > 0) continue;
    auto arp = ctx.fs().ReadProc("net/arp");
    JudgeSilentGateway(f, arp.ok() ? FindArpEntry(*arp, f.address, gateway_device) : std::nullopt);
  }
  return ReachabilityOutput(std::move(facts));
}

ProbeOutput ReachabilityOutput(ReachabilityFacts facts) {
  // Only the implicit gateway, and it said nothing: no reachability data at all. The reason is
  // built before `facts` is moved into the apply function (function arguments have no order of
  // evaluation: g++ moved first and read hosts[0] of the emptied vector).
  if (facts.hosts.size() == 1 && facts.hosts[0].inconclusive) {
    std::string reason = "default gateway " + facts.hosts[0].name + " " + facts.hosts[0].error;
    return ProbeSkipped(std::move(reason), [facts = std::move(facts)](Snapshot& snap) {
      snap.network.reachability = facts;
    });
  }
  return ProbeOk([facts = std::move(facts)](Snapshot& snap) { snap.network.reachability = facts; });
}

}  // namespace gpudoctor
