#include "net/netcheck.h"

#include "core/strings.h"

namespace gpudoctor {

const char* NetcheckVerdictName(NetcheckVerdict v) {
  switch (v) {
    case NetcheckVerdict::kNone:
      return "none";
    case NetcheckVerdict::kOwnNetwork:
      return "own_network";
    case NetcheckVerdict::kServerName:
      return "server_name";
    case NetcheckVerdict::kServer:
      return "server";
    case NetcheckVerdict::kPath:
      return "path";
  }
  return "?";
}

std::vector<HostToProbe> NetcheckHosts(const Target& server, const std::vector<Target>& refs) {
  std::vector<HostToProbe> hosts = {{server, TargetGroup::kTarget}};
  if (server.method != ProbeMethod::kIcmp) {
    auto bare = ParseTarget(server.host.find(':') != std::string::npos ? "[" + server.host + "]"
                                                                       : server.host);
    if (bare.ok()) hosts.push_back({*bare, TargetGroup::kTarget});
  }
  for (const Target& r : refs) hosts.push_back({r, TargetGroup::kReference});
  return hosts;
}

std::string NetcheckProblem(const TargetProbeFacts& f) {
  if (f.unfinished || f.inconclusive) return "not measured";
  if (f.address.empty()) return "not resolved" + (f.error.empty() ? "" : ": " + f.error);
  if (!f.error.empty() && f.sent == 0) return f.error;
  if (f.http_failed_pct) {
    if (*f.http_failed_pct >= kBadLossPct) {
      return FormatDouble(*f.http_failed_pct, 0) + "% of requests failed" +
             (f.http_error.empty() ? "" : " (" + f.http_error + ")");
    }
    if (f.http_ttfb_ms && *f.http_ttfb_ms >= kSlowRttMs * 3) {
      return "first byte after " + FormatDouble(*f.http_ttfb_ms, 0) + " ms";
    }
    return "";
  }
  // The server's port refused (RST): the host is there, the service is not. A reference that
  // refuses still proves the network works.
  if (f.port_closed && f.group == TargetGroup::kTarget) return "connection refused";
  if (f.sent > 0 && f.received == 0) return "no answer";
  if (f.loss_pct && *f.loss_pct >= kBadLossPct) return "loss " + FormatDouble(*f.loss_pct, 0) + "%";
  if (f.rtt_median_ms && *f.rtt_median_ms >= kSlowRttMs) {
    return "median RTT " + FormatDouble(*f.rtt_median_ms, 0) + " ms";
  }
  return "";
}

NetcheckJudgement JudgeNetcheck(const std::vector<TargetProbeFacts>& results) {
  std::vector<const TargetProbeFacts*> server, refs;
  for (const auto& r : results) (r.group == TargetGroup::kReference ? refs : server).push_back(&r);
  int refs_bad = 0, refs_measured = 0;
  for (const auto* r : refs) {
    std::string p = NetcheckProblem(*r);
    if (p == "not measured") continue;
    ++refs_measured;
    refs_bad += p.empty() ? 0 : 1;
  }
  NetcheckJudgement j;
  // Most references bad: the user's own connection (or the machine's DNS) is the problem.
  if (refs_measured > 0 && refs_bad * 2 > refs_measured) {
    j.verdict = NetcheckVerdict::kOwnNetwork;
    j.headline = "your own network: " + std::to_string(refs_bad) + " of " +
                 std::to_string(refs_measured) + " well-known reference sites fail or are slow too";
    j.advice =
        "check your own connection first (Wi-Fi, router, VPN/proxy, your provider); try "
        "another network (a phone hotspot) and run netcheck again";
    return j;
  }
  if (server.empty()) return j;
  const TargetProbeFacts& service = *server.front();
  const TargetProbeFacts* host = server.size() > 1 ? server[1] : nullptr;
  std::string service_problem = NetcheckProblem(service);
  std::string host_problem = host ? NetcheckProblem(*host) : "";
  if (service.address.empty() && service_problem != "not measured") {
    j.verdict = NetcheckVerdict::kServerName;
    j.headline = "the server's name does not resolve from here (" + service_problem + ")";
    j.advice = "send this to the operator: the DNS record of " + service.name +
               " may be missing or wrong; check your DNS with `nslookup " + service.name + "`";
    return j;
  }
  if (service_problem.empty() && host_problem.empty()) {
    j.headline = "no problem seen from here: the server and the references answer normally";
    j.advice =
        "if it is still slow for you, send this report to the operator with the time it "
        "happened";
    return j;
  }
  // The host answers (ICMP, or the service's port refused = RST) but the service does not.
  bool host_answers = (host && host_problem.empty()) || service.port_closed;
  if (host_problem == "not measured" && service_problem == "connection refused")
    host_answers = true;
  if (host_answers && !service_problem.empty()) {
    j.verdict = NetcheckVerdict::kServer;
    j.headline =
        "the server: the host answers but " + service.name + " does not (" + service_problem + ")";
    j.advice =
        "send this to the operator: the service is down, overloaded or firewalled; the "
        "network path to the host works";
    return j;
  }
  j.verdict = NetcheckVerdict::kPath;
  j.headline = "the path to the server or its network: " + service.name + " — " +
               (service_problem.empty() ? host_problem : service_problem) +
               ", while the reference sites are fine";
  j.advice = "send this to the operator with the output of `mtr -rwc 50 " +
             (service.address.empty() ? service.name : service.address) +
             "`: they can compare it with other users' networks";
  return j;
}

}  // namespace gpudoctor
