// Reachability of a set of hosts: resolve, probe (ICMP echo, TCP connect for "host:port" or
// when no ICMP socket can be opened, HTTP(S) requests for URLs) and summarise each one. All
// hosts are probed in parallel, so the whole set takes about as long as its slowest host: the
// ICMP hosts together on one detached worker sharing one socket per address family (so
// hundreds of targets do not steal each other's replies), every TCP or HTTP
// host on a detached worker of its own. A worker still running at `deadline` is abandoned and
// its hosts reported as not finished.
// Thread-safe; owns no global state.
#pragma once

#include <chrono>
#include <vector>

#include "core/deadline.h"
#include "facts/net_facts.h"
#include "net/http_prober.h"
#include "net/neighbor_table.h"
#include "net/pinger.h"
#include "net/target.h"

namespace gpudoctor {

struct HostToProbe {
  Target target;
  TargetGroup group = TargetGroup::kTarget;
};

struct ReachabilityOptions {
  PingOptions ping;
  HttpProbeOptions http;  // http:// and https:// targets
  std::chrono::milliseconds resolve_timeout{1000};
  uint16_t fallback_tcp_port = 22;
  // false: skip ICMP and use the TCP fallback directly, as when no ICMP socket can be opened.
  bool use_icmp = true;
  // The implicit default gateway (TargetGroup::kGateway) only: a series with no answer this long
  // after its first probe stops (PingOptions::give_up_silent): a router on our own link answers
  // within milliseconds or not at all, and the ARP table judges the silence either way. Configured
  // targets and references always get their whole series. 0: the gateway does too.
  std::chrono::milliseconds gateway_give_up_silent{500};
  // The implicit gateway only: a series of 10 or more probes whose first half was answered in
  // full, each in time, ends there (PingOptions::clean_after): 20 echoes instead of 40 on a
  // healthy link; one lost or late and it gets the whole series. false: the whole series.
  bool gateway_stop_clean = true;
  // The implicit gateway only: from this probe on, a probe goes out only once the gateway has
  // answered one (PingOptions::quiet_after): a router that drops pings gets 5, not the 25 of
  // half a second; a slow one's first reply lets the rest go. 0: every probe is sent.
  int gateway_quiet_after = 5;
};

// PingOptions::clean_after for the implicit gateway's series under `opts` (0: never stopped).
int GatewayCleanAfter(const ReachabilityOptions& opts);

// The implicit gateway probed over the TCP fallback with not one answer (no SYN-ACK, no RST):
// routers silently drop SYNs to ports they do not serve, so 100% loss says nothing. Such a
// host is marked inconclusive with this text in `error`; configured targets never are.
inline constexpr const char* kGatewayUnprobed =
    "could not be probed (no ICMP socket; TCP fallback unanswered)";
bool FallbackInconclusive(TargetGroup group, bool tcp_fallback, const PingResult& ping);

// The implicit default gateway answered none of its probes (ICMP or the TCP fallback): the ARP
// table, read after the series, decides what that says.
//  - a resolved entry: the router answers ARP but drops the probes (Azure's default gateway never
//    answers ping; many routers drop SYNs), or died after its entry was last confirmed (a STALE
//    entry is re-asked only seconds after our first probe): inconclusive, no loss is judged;
//  - an unresolved entry (INCOMPLETE / FAILED): it answers nothing, not even ARP: a real loss,
//    also over the TCP fallback;
//  - no entry (a link without ARP: TUN, WireGuard, PPP): nothing tells a router that drops the
//    probes from one that is down: inconclusive.
// Hosts with any reply, configured targets and references, series that sent nothing and
// unfinished series are left as they are. Sets arp_resolved / arp_device where an entry exists.
void JudgeSilentGateway(TargetProbeFacts& f, const std::optional<ArpEntry>& entry);

// A URL target's facts from its series of requests: counts, medians of the connect, TLS,
// first-byte and wait times, and the failure kind that happened most (ties: the latest) with
// its latest message.
void FillFromHttp(const std::vector<HttpRequestResult>& requests, TargetProbeFacts& f);

// Longest a single host can take with these options (resolution + series + slack): the ping
// series, or the HTTP series for a URL target.
std::chrono::milliseconds HostBudget(const ReachabilityOptions& opts,
                                     ProbeMethod method = ProbeMethod::kIcmp);

// One host, on the calling thread. Resolution or socket failures go into `error`.
TargetProbeFacts ProbeHost(const HostToProbe& host, const ReachabilityOptions& opts);

// All hosts in parallel; returns by `deadline` at the latest, results in input order.
std::vector<TargetProbeFacts> ProbeHosts(const std::vector<HostToProbe>& hosts,
                                         const ReachabilityOptions& opts, TimePoint deadline);

}  // namespace gpudoctor
