// Text lines for the network layer: one line per probed host (target, reference or gateway) with
// replies, RTT and loss, so the operator sees what "ok" was measured on. Pure; thread-safe.
#pragma once

#include <string>

#include "facts/net_facts.h"

namespace gpudoctor {

// Empty when the reachability probe did not run.
std::string ReachabilityLines(const NetworkFacts& facts);
// One line per NIC that carried traffic: state, link speed, rx/tx in Mb/s over the window.
std::string NicLines(const NetworkFacts& facts);

}  // namespace gpudoctor
