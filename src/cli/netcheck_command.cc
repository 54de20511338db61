// `gpudoctor netcheck SERVER[:PORT]|URL`: the user's side of the network (net/netcheck.h). For a
// user on their own machine: no GPU, no root, no config needed. Probes the server and reference
// sites (--reference, repeatable; default net/netcheck.h) in parallel within --deadline, prints
// the verdict and a short text to send to the operator (--json: the same as JSON).
// Exit: 0 no problem seen, 1 a problem (own network, path or server), 3 could not run.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/hostname.h"
#include "core/json_text.h"
#include "core/strings.h"
#include "core/time_spec.h"
#include "net/netcheck.h"

namespace gpudoctor {
namespace {

std::string Row(const TargetProbeFacts& f) {
  std::string problem = NetcheckProblem(f);
  std::string out = std::string(f.group == TargetGroup::kReference ? "reference " : "server    ") +
                    f.name + " (" + (f.method.empty() ? "-" : f.method) +
                    (f.address.empty() || f.address == f.name ? "" : " " + f.address) + "): ";
  if (f.http_failed_pct) {
    out += std::to_string(f.received) + "/" + std::to_string(f.sent) + " responses";
    if (f.http_ttfb_ms) out += ", first byte " + FormatDouble(*f.http_ttfb_ms, 0) + " ms";
  } else if (f.sent > 0) {
    out += "loss " + FormatDouble(f.loss_pct.value_or(100), 0) + "%";
    if (f.rtt_median_ms) out += ", RTT median " + FormatDouble(*f.rtt_median_ms, 1) + " ms";
    if (f.rtt_p95_ms) out += ", p95 " + FormatDouble(*f.rtt_p95_ms, 1) + " ms";
    if (f.port_closed) out += ", port closed (connection refused)";
  }
  out += problem.empty() ? "  ok" : "  PROBLEM: " + problem;
  return out;
}

nlohmann::ordered_json HostJson(const TargetProbeFacts& f) {
  nlohmann::ordered_json j;
  j["name"] = f.name;
  j["group"] = TargetGroupName(f.group);
  j["address"] = f.address;
  j["method"] = f.method;
  j["sent"] = f.sent;
  j["received"] = f.received;
  if (f.loss_pct) j["loss_pct"] = *f.loss_pct;
  if (f.rtt_median_ms) j["rtt_median_ms"] = *f.rtt_median_ms;
  if (f.rtt_p95_ms) j["rtt_p95_ms"] = *f.rtt_p95_ms;
  if (f.http_failed_pct) j["http_failed_pct"] = *f.http_failed_pct;
  if (f.http_ttfb_ms) j["http_ttfb_ms"] = *f.http_ttfb_ms;
  j["port_closed"] = f.port_closed;
  j["problem"] = NetcheckProblem(f);
  return j;
}

}  // namespace

int NetcheckCommand(const CliOptions& o) {
  if (o.positional.size() != 1) {
    return CouldNotRun("usage: gpudoctor netcheck SERVER[:PORT]|URL [--reference HOST:PORT]...");
  }
  auto server = ParseTarget(o.positional[0]);
  if (!server.ok()) return CouldNotRun("netcheck: " + server.status().message());
  auto settings = BuildSettings(o);
  if (!settings.ok()) return CouldNotRun(settings.status().message());
  const Settings& s = **settings;
  std::vector<std::string> ref_specs =
      s.net_references.empty() ? DefaultNetcheckReferences() : s.net_references;
  auto refs = ParseTargets(ref_specs);
  if (!refs.ok()) return CouldNotRun("netcheck: " + refs.status().message());

  ReachabilityOptions opts;
  opts.ping.count = std::clamp(s.net_probe_count, 1, 200);
  opts.ping.interval = std::chrono::milliseconds(std::max(s.net_probe_interval_ms, 10));
  opts.ping.timeout = std::chrono::milliseconds(s.net_probe_timeout_ms);
  opts.resolve_timeout = std::chrono::milliseconds(s.net_resolve_timeout_ms);
  opts.http.count = s.net_http_count;
  opts.http.interval = std::chrono::milliseconds(s.net_http_interval_ms);
  opts.http.timeout = std::chrono::milliseconds(s.net_http_timeout_ms);
  opts.http.tls_verify = s.net_http_tls_verify;
  TimePoint deadline =
      SteadyClock::now() + std::chrono::milliseconds(static_cast<int64_t>(s.deadline_s * 1000));
  std::vector<TargetProbeFacts> results = ProbeHosts(NetcheckHosts(*server, *refs), opts, deadline);
  NetcheckJudgement j = JudgeNetcheck(results);
  std::string when = FormatUtc(std::chrono::system_clock::now());
  std::string from = LocalHostname();

  if (o.json) {
    nlohmann::ordered_json out;
    out["netcheck"] = server->DisplayName();
    out["from"] = from;
    out["time"] = when;
    out["verdict"] = NetcheckVerdictName(j.verdict);
    out["headline"] = j.headline;
    out["advice"] = j.advice;
    out["hosts"] = nlohmann::ordered_json::array();
    for (const auto& r : results) out["hosts"].push_back(HostJson(r));
    std::string text = JsonText(out, 2) + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    std::string out =
        "gpudoctor netcheck " + server->DisplayName() + " from " + from + " at " + when + "\n\n";
    for (const auto& r : results) out += "  " + Row(r) + "\n";
    out += "\nverdict: " + std::string(NetcheckVerdictName(j.verdict)) + " - " + j.headline +
           "\nnext: " + j.advice + "\n";
    out += "\nto send to the operator:\n  netcheck " + server->DisplayName() + " from " + from +
           " at " + when + ": verdict " + NetcheckVerdictName(j.verdict) + "; ";
    for (const auto& r : results) {
      std::string p = NetcheckProblem(r);
      out += r.name + " " +
             (r.loss_pct ? "loss " + FormatDouble(*r.loss_pct, 0) + "%" : std::string("-")) +
             (r.rtt_median_ms ? " rtt " + FormatDouble(*r.rtt_median_ms, 0) + "ms" : "") +
             (p.empty() ? "" : " (" + p + ")") + "; ";
    }
    out += "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return j.verdict == NetcheckVerdict::kNone ? 0 : 1;
}

}  // namespace gpudoctor
