// `gpudoctor netcheck SERVER[:PORT]|URL`: run by a user on their own machine (no GPU, no root):
// is everyone slow, or only me? The server (and, for HOST:PORT, the bare host over ICMP, to tell
// the path from the service) and well-known reference sites are probed in parallel (pingers and
// HTTP prober of src/net), then judged:
//   - kOwnNetwork: the references fail or are slow too → the user's own connection;
//   - kServerName: the server's name does not resolve (references fine);
//   - kServer:     the host answers (ICMP, or a RST) but the service port/URL does not;
//   - kPath:       the server does not answer or is slow/lossy while the references are fine →
//                  the path to the server or its network (the operator's side to look at);
//   - kNone:       everything answers normally from here.
// Bad = not resolved, no answer, loss >= kBadLossPct, median RTT >= kSlowRttMs, or an HTTP failure
// share >= kBadLossPct. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "facts/net_facts.h"
#include "net/reachability.h"

namespace gpudoctor {

inline constexpr double kBadLossPct = 20;
inline constexpr double kSlowRttMs = 300;
// Reference sites when none are given: anycast resolvers that answer TCP 443 worldwide and in
// mainland China.
inline const std::vector<std::string>& DefaultNetcheckReferences() {
  static const std::vector<std::string> refs = {"223.5.5.5:443", "1.1.1.1:443", "8.8.8.8:443"};
  return refs;
}

enum class NetcheckVerdict { kNone, kOwnNetwork, kServerName, kServer, kPath };
const char* NetcheckVerdictName(NetcheckVerdict v);  // "none", "own_network", ...

// The server's hosts to probe: the target as given and, for HOST:PORT and URLs, the bare host
// over ICMP (group kTarget); then the references (group kReference).
std::vector<HostToProbe> NetcheckHosts(const Target& server, const std::vector<Target>& refs);

// Why one host's result is bad ("no answer", "loss 35%", "median RTT 420 ms", "not resolved: ...");
// empty when it is fine. Inconclusive or unfinished hosts are "not measured".
std::string NetcheckProblem(const TargetProbeFacts& f);

struct NetcheckJudgement {
  NetcheckVerdict verdict = NetcheckVerdict::kNone;
  std::string headline;  // one sentence for the user
  std::string advice;    // what to do next
};
// `results` in NetcheckHosts order: server first (1 or 2 entries), then references.
NetcheckJudgement JudgeNetcheck(const std::vector<TargetProbeFacts>& results);

}  // namespace gpudoctor
