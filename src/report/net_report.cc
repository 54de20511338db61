#include "report/net_report.h"

#include "core/strings.h"

namespace gpudoctor {
namespace {

// "4/5 responses (200x4), dns 1.2 ms, connect 0.3 ms, tls 2.1 ms, first byte 310 ms
// (p95 650 ms); 1 failed: timeout: ..."
std::string HttpSummary(const TargetProbeFacts& h) {
  std::string line = std::to_string(h.received) + "/" + std::to_string(h.sent) + " responses";
  if (!h.http_status_counts.empty()) {
    std::string counts;
    for (const auto& [status, n] : h.http_status_counts) {
      counts += (counts.empty() ? "" : " ") + std::to_string(status) + "x" + std::to_string(n);
    }
    line += " (" + counts + ")";
  }
  auto ms = [&](const char* what, const std::optional<double>& v) {
    if (v) line += std::string(", ") + what + " " + FormatDouble(*v, 1) + " ms";
  };
  ms("dns", h.dns_ms);
  ms("connect", h.http_connect_ms);
  ms("tls", h.http_tls_ms);
  ms("first byte", h.http_ttfb_ms);
  if (h.http_ttfb_p95_ms) line += " (p95 " + FormatDouble(*h.http_ttfb_p95_ms, 1) + " ms)";
  if (h.http_failed && *h.http_failed > 0) {
    line += "; " + std::to_string(*h.http_failed) + " failed: " + h.http_error;
  }
  return line;
}

}  // namespace

std::string ReachabilityLines(const NetworkFacts& facts) {
  if (!facts.reachability) return "";
  std::string out;
  for (const auto& h : facts.reachability->hosts) {
    std::string line = std::string(TargetGroupName(h.group)) + " " + h.name;
    if (!h.address.empty() && h.address != h.name) line += " (" + h.address + ")";
    if (!h.method.empty()) line += " " + h.method;
    line += ": ";
    if (!h.error.empty() && (h.inconclusive || h.sent == 0)) {
      line += h.error;
    } else if (h.http_failed_pct) {
      line += HttpSummary(h);
    } else {
      line += std::to_string(h.received) + "/" + std::to_string(h.sent) + " replies";
      if (h.rtt_median_ms) line += ", median " + FormatDouble(*h.rtt_median_ms, 2) + " ms";
      if (h.rtt_p95_ms) line += ", p95 " + FormatDouble(*h.rtt_p95_ms, 2) + " ms";
      if (h.jitter_ms) line += ", jitter " + FormatDouble(*h.jitter_ms, 2) + " ms";
      if (h.port_closed) line += " (port closed: host answers)";
    }
    out += line + "\n";
  }
  return out;
}

std::string NicLines(const NetworkFacts& facts) {
  if (!facts.nics) return "";
  std::string out;
  for (const auto& n : *facts.nics) {
    if (n.name == "lo" || (!n.rx_bytes_per_s && !n.tx_bytes_per_s)) continue;
    std::string line = "nic " + n.name + (n.operstate.empty() ? "" : " " + n.operstate);
    if (n.speed_mbps) line += " " + std::to_string(*n.speed_mbps) + " Mb/s";
    auto rate = [](double bytes_per_s) { return FormatDouble(bytes_per_s * 8 / 1e6, 1) + " Mb/s"; };
    line +=
        ": rx " + rate(n.rx_bytes_per_s.value_or(0)) + ", tx " + rate(n.tx_bytes_per_s.value_or(0));
    out += line + "\n";
  }
  return out;
}

}  // namespace gpudoctor
