// Snapshot: everything the probes learned in one check, as plain typed data. Rules are pure
// functions of a Snapshot (src/rules/engine.h). Probes never write a Snapshot directly from their
// worker thread: they return a patch that the runner applies on the calling thread, so an
// abandoned probe can never touch it.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "facts/gpu_facts.h"
#include "facts/host_facts.h"
#include "facts/inference_facts.h"
#include "facts/job_facts.h"
#include "facts/kernel_facts.h"
#include "facts/net_facts.h"
#include "findings/finding.h"

namespace gpudoctor {

enum class ProbeState { kOk, kSkipped, kFailed, kTimeout };
const char* ProbeStateName(ProbeState s);  // "ok", "skipped", "failed", "timeout"

struct ProbeRecord {
  std::string name;
  Layer layer = Layer::kResources;
  ProbeState state = ProbeState::kOk;
  std::string reason;  // why skipped / failed / timed out; empty when ok
  double ms = 0;       // wall time; for a timeout, the time waited
};

struct Snapshot {
  std::string hostname;
  std::string boot_id;  // /proc/sys/kernel/random/boot_id; empty when unreadable
  std::chrono::system_clock::time_point time;
  HostFacts host;
  GpuLayerFacts gpu;
  KernelLogFacts kernel;
  NetworkFacts network;
  std::vector<JobFacts> jobs;             // [[job]] tables (job probe)
  std::vector<InferenceFacts> inference;  // inference servers' own metrics (inference probe)
  std::vector<ProbeRecord> probes;
};

}  // namespace gpudoctor
