// Facts of the network layer: reachability, NICs, sockets (issue: network layer).
// Placeholder until that layer lands: the Snapshot already carries it, so rules, reports and
// probes of the layer plug in without touching the others.
#pragma once

namespace gpudoctor {

struct NetworkFacts {};

}  // namespace gpudoctor
