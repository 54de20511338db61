#include "net/reachability.h"

#include <algorithm>
#include <map>
#include <optional>

#include "net/rtt_stats.h"

namespace gpudoctor {

std::chrono::milliseconds HostBudget(const ReachabilityOptions& opts, ProbeMethod method) {
  if (method == ProbeMethod::kHttp || method == ProbeMethod::kHttps) {
    return opts.resolve_timeout + HttpSeriesBudget(opts.http) + std::chrono::milliseconds(100);
  }
  int count = std::max(opts.ping.count, 1);
  return opts.resolve_timeout + (count - 1) * opts.ping.interval + opts.ping.timeout +
         std::chrono::milliseconds(100);
}

bool FallbackInconclusive(TargetGroup group, bool tcp_fallback, const PingResult& ping) {
  return group == TargetGroup::kGateway && tcp_fallback && ping.sent > 0 && ping.rtts_ms.empty() &&
         !ping.port_closed;
}

void JudgeSilentGateway(TargetProbeFacts& f, const std::optional<ArpEntry>& entry) {
  if (f.group != TargetGroup::kGateway || f.unfinished || f.sent <= 0 || f.received > 0 ||
      f.port_closed) {
    return;
  }
  const std::string probes = "none of the " + std::to_string(f.sent) + " probes";
  const char* measure = "; set [network] targets to measure the path";
  if (!entry) {
    f.inconclusive = true;
    f.error = "answered " + probes +
              ", and its link keeps no ARP entry to tell a router that drops them from one that "
              "is down" +
              measure;
    return;
  }
  f.arp_resolved = entry->complete();
  f.arp_device = entry->device;
  if (entry->complete()) {
    f.inconclusive = true;
    // A complete entry may be STALE (confirmed minutes ago): the kernel re-asks only seconds
    // after our first probe, so a router that died since can still look like this once.
    f.error = "answered ARP on " + entry->device + " when last asked, but " + probes +
              ": it drops them (cloud routers often never answer ping) or died since" + measure;
    return;
  }
  // Not even ARP: the loss is real, whatever the method.
  f.inconclusive = false;
  f.error.clear();
}

namespace {

TargetProbeFacts Named(const HostToProbe& host) {
  TargetProbeFacts f;
  f.name = host.target.DisplayName();  // no query tokens in reports, labels or history
  f.group = host.group;
  return f;
}

void FillFromPing(const HostToProbe& host, const PingResult& ping, bool tcp_fallback,
                  TargetProbeFacts& f) {
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
}

PingResult TcpFallback(const ResolvedAddress& addr, const ReachabilityOptions& opts) {
  PingResult ping = TcpPing(addr, opts.fallback_tcp_port, opts.ping);
  ping.method = "tcp-fallback:" + std::to_string(opts.fallback_tcp_port);
  return ping;
}

std::optional<double> Median(const std::vector<double>& v) {
  return ComputeRttStats(static_cast<int>(v.size()), v).median_ms;
}

// ICMP hosts together: names resolved in parallel, then one IcmpPingMany over one socket per
// family; hosts without an ICMP socket fall back to TCP connects, in parallel.
std::vector<TargetProbeFacts> ProbeIcmpHosts(const std::vector<HostToProbe>& hosts,
                                             const ReachabilityOptions& opts) {
  std::vector<TargetProbeFacts> out;
  // IP literals need no lookup; names are looked up in parallel (each bounded by the timeout).
  std::vector<std::shared_ptr<PendingResult<Result<ResolvedAddress>>>> resolving(hosts.size());
  for (size_t i = 0; i < hosts.size(); ++i) {
    out.push_back(Named(hosts[i]));
    if (hosts[i].target.numeric) continue;
    Target t = hosts[i].target;
    auto timeout = opts.resolve_timeout;
    resolving[i] = StartDetached([t, timeout] { return ResolveTarget(t, timeout); });
  }
  const TimePoint resolved_by =
      SteadyClock::now() + opts.resolve_timeout + std::chrono::milliseconds(100);
  std::vector<ResolvedAddress> addrs;
  std::vector<size_t> which;  // addrs[k] is hosts[which[k]]
  for (size_t i = 0; i < hosts.size(); ++i) {
    std::optional<Result<ResolvedAddress>> a;
    if (hosts[i].target.numeric) {
      a = ResolveTarget(hosts[i].target, opts.resolve_timeout);
    } else if (resolving[i] != nullptr && resolving[i]->WaitUntil(resolved_by)) {
      a = resolving[i]->Take();
    } else {
      out[i].error = "cannot resolve '" + hosts[i].target.host + "': no answer in time";
      continue;
    }
    if (!a->ok()) {
      out[i].error = a->status().message();
      continue;
    }
    out[i].address = AddressToString(**a);
    addrs.push_back(**a);
    which.push_back(i);
  }
  std::vector<Result<PingResult>> icmp;
  PingOptions ping = opts.ping;
  ping.give_up_silent = opts.gateway_give_up_silent;
  ping.clean_after = GatewayCleanAfter(opts);
  ping.quiet_after = opts.gateway_quiet_after;
  std::vector<bool> gateway;
  for (size_t i : which) gateway.push_back(hosts[i].group == TargetGroup::kGateway);
  if (opts.use_icmp && !addrs.empty()) icmp = IcmpPingMany(addrs, ping, gateway);
  std::vector<std::pair<size_t, std::shared_ptr<PendingResult<PingResult>>>> fallbacks;
  for (size_t k = 0; k < addrs.size(); ++k) {
    if (k < icmp.size() && icmp[k].ok()) {
      FillFromPing(hosts[which[k]], *icmp[k], false, out[which[k]]);
      continue;
    }
    ResolvedAddress a = addrs[k];
    ReachabilityOptions o = opts;
    if (gateway[k]) {
      o.ping.give_up_silent = opts.gateway_give_up_silent;
      o.ping.clean_after = GatewayCleanAfter(opts);
      o.ping.quiet_after = opts.gateway_quiet_after;
    }
    fallbacks.emplace_back(which[k], StartDetached([a, o] { return TcpFallback(a, o); }));
  }
  const int count = std::max(opts.ping.count, 1);
  const TimePoint fallback_by = SteadyClock::now() + (count - 1) * opts.ping.interval +
                                opts.ping.timeout + std::chrono::milliseconds(100);
  for (auto& [i, pending] : fallbacks) {
    if (pending == nullptr || !pending->WaitUntil(fallback_by)) {
      out[i].error = "TCP fallback series did not finish";
      continue;
    }
    FillFromPing(hosts[i], pending->Take(), true, out[i]);
  }
  return out;
}

}  // namespace

void FillFromHttp(const std::vector<HttpRequestResult>& requests, TargetProbeFacts& f) {
  std::vector<double> connect, tls, ttfb, wait;
  int failed = 0;
  // The failure that happened most (ties: the latest), with its latest message: four timeouts
  // and one 503 are a timing-out service, not a 5xx one.
  std::map<std::string, std::pair<int, std::string>> failures;  // kind -> count, last error
  std::string last_kind;
  auto fail = [&](const std::string& kind, const std::string& error) {
    ++failed;
    auto& [count, message] = failures[kind];
    ++count;
    message = error;
    last_kind = kind;
  };
  f.sent = static_cast<int>(requests.size());
  for (const auto& r : requests) {
    if (r.connect_ms) connect.push_back(*r.connect_ms);
    if (r.tls_ms) tls.push_back(*r.tls_ms);
    if (!r.status) {
      fail(r.error_kind, r.error);
      continue;
    }
    ++f.received;
    ++f.http_status_counts[*r.status];
    f.http_status = *r.status;
    if (r.ttfb_ms) ttfb.push_back(*r.ttfb_ms);
    if (r.wait_ms) wait.push_back(*r.wait_ms);
    if (*r.status >= 500) fail("http_5xx", "HTTP " + std::to_string(*r.status));
  }
  if (!failures.empty()) {
    std::string kind = last_kind;
    for (const auto& [k, v] : failures) {
      if (v.first > failures[kind].first) kind = k;
    }
    f.http_error_kind = kind;
    f.http_error = failures[kind].second;
  }
  if (f.sent == 0) {
    f.error = "no HTTP request could be started";
    return;
  }
  f.http_connect_ms = Median(connect);
  f.http_tls_ms = Median(tls);
  RttStats t = ComputeRttStats(static_cast<int>(ttfb.size()), ttfb);
  f.http_ttfb_ms = t.median_ms;
  f.http_ttfb_p95_ms = t.p95_ms;
  f.http_wait_ms = Median(wait);
  f.http_failed = failed;
  f.http_failed_pct = 100.0 * failed / f.sent;
}

int GatewayCleanAfter(const ReachabilityOptions& opts) {
  return opts.gateway_stop_clean && opts.ping.count >= 10 ? opts.ping.count / 2 : 0;
}

TargetProbeFacts ProbeHost(const HostToProbe& host, const ReachabilityOptions& opts) {
  if (host.target.method == ProbeMethod::kIcmp) return ProbeIcmpHosts({host}, opts).front();
  TargetProbeFacts f = Named(host);
  TimePoint start = SteadyClock::now();
  auto addr = ResolveTarget(host.target, opts.resolve_timeout);
  if (!host.target.numeric && addr.ok()) {
    f.dns_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();
  }
  if (!addr.ok()) {
    f.error = addr.status().message();
    return f;
  }
  f.address = AddressToString(*addr);
  if (host.target.IsUrl()) {
    f.method = host.target.method == ProbeMethod::kHttps ? "https" : "http";
    FillFromHttp(HttpProbeSeries(host.target, *addr, opts.http), f);
    return f;
  }
  FillFromPing(host, TcpPing(*addr, *host.target.port, opts.ping), false, f);
  return f;
}

std::vector<TargetProbeFacts> ProbeHosts(const std::vector<HostToProbe>& hosts,
                                         const ReachabilityOptions& opts, TimePoint deadline) {
  // ICMP hosts share one worker (and one socket per family); TCP and HTTP hosts get one each.
  std::vector<HostToProbe> icmp_hosts;
  std::vector<size_t> icmp_index;
  std::vector<std::shared_ptr<PendingResult<TargetProbeFacts>>> pending(hosts.size());
  std::vector<bool> started(hosts.size(), false);
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (hosts[i].target.method == ProbeMethod::kIcmp) {
      icmp_hosts.push_back(hosts[i]);
      icmp_index.push_back(i);
      continue;
    }
    const HostToProbe& h = hosts[i];
    pending[i] = StartDetached([h, opts] { return ProbeHost(h, opts); });
    started[i] = true;
  }
  // Only IP literals over ICMP (the default: the gateway): nothing can block (no name lookup; the
  // series ends within its own bound, which the probe fitted before the deadline), so the calling
  // thread runs it instead of waiting for a worker started for it.
  const bool only_literals = icmp_hosts.size() == hosts.size() &&
                             std::all_of(icmp_hosts.begin(), icmp_hosts.end(),
                                         [](const HostToProbe& h) { return h.target.numeric; });
  if (!icmp_hosts.empty() && only_literals && opts.use_icmp) {
    return ProbeIcmpHosts(icmp_hosts, opts);
  }
  std::shared_ptr<PendingResult<std::vector<TargetProbeFacts>>> icmp_pending;
  if (!icmp_hosts.empty()) {
    icmp_pending = StartDetached([icmp_hosts, opts] { return ProbeIcmpHosts(icmp_hosts, opts); });
  }
  std::vector<std::optional<TargetProbeFacts>> results(hosts.size());
  std::vector<bool> abandoned(hosts.size(), false);
  if (icmp_pending != nullptr && icmp_pending->WaitUntil(deadline)) {
    std::vector<TargetProbeFacts> got = icmp_pending->Take();
    for (size_t k = 0; k < got.size() && k < icmp_index.size(); ++k) {
      results[icmp_index[k]] = std::move(got[k]);
    }
  } else if (icmp_pending != nullptr) {
    CountAbandonedWorker();
    for (size_t i : icmp_index) abandoned[i] = true;
  }
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (!started[i] || pending[i] == nullptr) continue;
    if (pending[i]->WaitUntil(deadline)) {
      results[i] = pending[i]->Take();
    } else {
      CountAbandonedWorker();
      abandoned[i] = true;
    }
  }
  std::vector<TargetProbeFacts> out;
  out.reserve(hosts.size());
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (results[i]) {
      out.push_back(std::move(*results[i]));
      continue;
    }
    TargetProbeFacts f = Named(hosts[i]);
    if (!abandoned[i]) {
      f.error = "could not start a worker thread";
    } else {
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
