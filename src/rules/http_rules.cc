// HTTP(S) service rules: failing (no connection, timeout, TLS, not HTTP, 5xx)
// and slow (time to first byte) URL targets, with next steps that fit what was seen: a fast TCP
// handshake with a slow first byte is the application, not the network; a host that answers
// ICMP/TCP in the same check while its service fails is the service. Pure functions.
#include <string>

#include "core/strings.h"
#include "rules/engine.h"
#include "rules/grade.h"

namespace gpudoctor {
namespace {

// A host probed by ICMP/TCP in this check at the same address as the URL target.
const TargetProbeFacts* SameHostPing(const ReachabilityFacts& r, const TargetProbeFacts& url) {
  for (const auto& h : r.hosts) {
    if (&h != &url && !h.address.empty() && h.address == url.address && h.loss_pct &&
        !h.inconclusive) {
      return &h;
    }
  }
  return nullptr;
}

std::string StatusCounts(const std::map<int, int>& counts) {
  std::string s;
  for (const auto& [status, n] : counts) {
    if (!s.empty()) s += ", ";
    s += std::to_string(status) + "x" + std::to_string(n);
  }
  return s;
}

void AddHttp(Finding& f, const TargetProbeFacts& h, const TargetProbeFacts* ping) {
  f.Add("url", h.name).Add("group", TargetGroupName(h.group));
  if (!h.address.empty()) f.Add("address", h.address);
  f.Add("requests", h.sent).Add("responses", h.received);
  if (h.http_failed) f.Add("failed", *h.http_failed);
  if (!h.http_status_counts.empty()) f.Add("statuses", StatusCounts(h.http_status_counts));
  if (!h.http_error.empty()) f.Add("error", h.http_error).Add("error_kind", h.http_error_kind);
  if (h.dns_ms) f.Add("dns_ms", *h.dns_ms);
  if (h.http_connect_ms) f.Add("connect_ms", *h.http_connect_ms);
  if (h.http_tls_ms) f.Add("tls_ms", *h.http_tls_ms);
  if (h.http_ttfb_ms) f.Add("ttfb_ms", *h.http_ttfb_ms);
  if (h.http_ttfb_p95_ms) f.Add("ttfb_p95_ms", *h.http_ttfb_p95_ms);
  if (h.http_wait_ms) f.Add("server_wait_ms", *h.http_wait_ms);
  if (ping != nullptr) {
    f.Add("same_host_target", ping->name);
    f.Add("same_host_loss_pct", *ping->loss_pct);
    if (ping->rtt_median_ms) f.Add("same_host_rtt_median_ms", *ping->rtt_median_ms);
  }
}

void FailingRule(const TargetProbeFacts& h, const TargetProbeFacts* ping, const Thresholds& t,
                 std::vector<Finding>& out) {
  const char* id = "net.http.failing";
  if (!h.http_failed_pct || !h.http_failed || *h.http_failed == 0) return;
  auto sev =
      GradeHigh(*h.http_failed_pct, t.Get(id, "warn_failed_pct"), t.Get(id, "crit_failed_pct"));
  if (!sev) return;
  std::string kind = h.http_error_kind.empty() ? "other" : h.http_error_kind;
  std::string why = h.http_error.empty() ? kind : h.http_error;
  std::string summary = *h.http_failed == h.sent
                            ? "'" + h.name + "' failing: all " + std::to_string(h.sent) +
                                  " requests failed (" + why + ")"
                            : std::to_string(*h.http_failed) + " of " + std::to_string(h.sent) +
                                  " requests to '" + h.name + "' failed (" + why + ")";
  if (ping != nullptr && ping->received > 0 && kind != "http_5xx") {
    std::string how = ping->method.starts_with("icmp") ? "ICMP echo" : "TCP connects";
    summary += "; the host answers " + how + ", so it is the service, not the network";
  }
  Finding f = MakeFinding(id, *sev, summary);
  f.subject = h.name;
  AddHttp(f, h, ping);
  KeepStepsFor(f, kind);
  out.push_back(std::move(f));
}

void SlowRule(const TargetProbeFacts& h, const TargetProbeFacts* ping, const Thresholds& t,
              std::vector<Finding>& out) {
  const char* id = "net.http.slow";
  if (!h.http_ttfb_ms) return;
  auto sev = GradeHigh(*h.http_ttfb_ms, t.Get(id, "warn_ttfb_ms"), t.Get(id, "crit_ttfb_ms"));
  if (!sev) return;
  // The TCP handshake is one network round trip: slow, and the path is to blame. Fast, and the
  // server's own wait (request sent to first byte, TLS excluded) decides: long, the application
  // is slow; short, the time went into the TLS handshake. No handshake time: no verdict on
  // the network.
  bool network =
      h.http_connect_ms && *h.http_connect_ms >= t.Get("net.latency.high", "warn_rtt_ms");
  std::string ttfb = FormatDouble(*h.http_ttfb_ms, 0) + " ms";
  std::string head = "'" + h.name + "' answers slowly (first byte after " + ttfb + ", median)";
  std::string verdict;
  std::string summary;
  if (network) {
    verdict = "network";
    summary = head + " and the TCP handshake alone takes " + FormatDouble(*h.http_connect_ms, 1) +
              " ms: the network path is slow";
  } else if (!h.http_connect_ms) {
    verdict = "application";
    summary = head + " (TCP handshake time unknown: the network could not be ruled out)";
  } else if (h.http_tls_ms && h.http_wait_ms && *h.http_tls_ms > *h.http_wait_ms) {
    verdict = "tls";
    summary = head + " while the TCP handshake takes " + FormatDouble(*h.http_connect_ms, 1) +
              " ms and the TLS handshake " + FormatDouble(*h.http_tls_ms, 0) +
              " ms: TLS setup, not the network and not the application";
  } else {
    verdict = "application";
    summary = head + " while the TCP handshake takes " + FormatDouble(*h.http_connect_ms, 1) +
              " ms: the application or its backend, not the network";
  }
  Finding f = MakeFinding(id, *sev, summary);
  f.subject = h.name;
  f.Add("verdict", verdict);
  AddHttp(f, h, ping);
  KeepStepsFor(f, verdict);
  out.push_back(std::move(f));
}

}  // namespace

void HttpRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out) {
  if (!snap.network.reachability) return;
  const ReachabilityFacts& r = *snap.network.reachability;
  for (const auto& h : r.hosts) {
    // URL targets only (they alone have these facts); references only feed comparisons.
    if (!h.http_failed_pct || h.group == TargetGroup::kReference) continue;
    const TargetProbeFacts* ping = SameHostPing(r, h);
    FailingRule(h, ping, t, out);
    SlowRule(h, ping, t, out);
  }
}

}  // namespace gpudoctor
