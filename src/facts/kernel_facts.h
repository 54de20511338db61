// Facts of the kernel log: Xid and other kernel events (issue: kernel log).
// Placeholder until that layer lands: the Snapshot already carries it, so rules, reports and
// probes of the layer plug in without touching the others.
#pragma once

namespace gpudoctor {

struct KernelLogFacts {};

}  // namespace gpudoctor
