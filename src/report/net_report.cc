#include "report/net_report.h"

#include "core/strings.h"

namespace gpudoctor {

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
