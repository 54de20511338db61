// JSON sections for the host and network facts of `check --json`: "resources" (cpu, memory,
// pressure, mounts, processes) and "network" (reachability per host, NICs). Only what a probe
// measured appears; units are in the key names. Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "facts/host_facts.h"
#include "facts/inference_facts.h"
#include "facts/job_facts.h"
#include "facts/net_facts.h"

namespace gpudoctor {

// Empty object when no host probe ran.
nlohmann::ordered_json HostFactsToJson(const HostFacts& h);
// Empty object when no network probe ran.
nlohmann::ordered_json NetworkFactsToJson(const NetworkFacts& n);
// [[job]] step times: [{"name","sources","log","step_seconds","baseline_seconds",...}].
nlohmann::ordered_json JobFactsToJson(const std::vector<JobFacts>& jobs);
nlohmann::ordered_json InferenceFactsToJson(const std::vector<InferenceFacts>& engines);

}  // namespace gpudoctor
