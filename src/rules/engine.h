// Rules engine: runs every rule set over a Snapshot and returns the findings, with findings
// switched off in the config removed. Rules are pure functions (no I/O, no clock); thread-safe.
#pragma once

#include <vector>

#include "facts/snapshot.h"
#include "findings/finding.h"
#include "rules/make_finding.h"
#include "rules/thresholds.h"

namespace gpudoctor {

// One rule set per topic (host_rules.cc, gpu_rules.cc, ...). Appends to `out`.
using RuleSet = void (*)(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out);

void HostRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out);
void NetRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out);
// URL targets: net.http.failing, net.http.slow.
void HttpRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out);
void KernelRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out);
void ProbeHealthRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out);
void GpuRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out);
void UpkeepRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out);
void JobRules(const Snapshot& snap, const Thresholds& t,
              std::vector<Finding>& out);  // job_rules.cc
// inference_rules.cc: inference.kv_cache.full, inference.queue, inference.latency.
void InferenceRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out);

std::vector<Finding> EvaluateRules(const Snapshot& snap, const Thresholds& thresholds);

}  // namespace gpudoctor
