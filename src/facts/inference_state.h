// "Are requests waiting right now?" for other rules (gpu.util.underused's scheduling limiter):
// the inference servers' queues as the last tick read them. Header-only, pure; thread-compatible.
//
// GPU attribution: an engine serves a GPU when a process on that GPU has the engine's family
// name (GpuFacts::live_kv->server, "vLLM", "SGLang", ...) or one of the engine's discovered pids;
// an engine that matches no GPU is attributed to every GPU with processes (unknown placement).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "facts/gpu_facts.h"
#include "facts/inference_facts.h"

namespace gpudoctor {

struct InferenceWaiting {
  std::string name;    // InferenceFacts::name
  std::string engine;  // "vllm", ...
  std::string model;
  double waiting = 0;      // requests waiting now
  double running = 0;      // requests running now (0 when unknown)
  bool gpu_known = false;  // true: attributed through a process on the GPU
};

// The engine family as GpuFacts::live_kv->server names it (plan/live_advice.cc).
inline bool InferenceEngineMatchesServer(const std::string& engine, const std::string& server) {
  if (engine == "vllm") return server == "vLLM";
  if (engine == "sglang") return server == "SGLang";
  if (engine == "tgi") return server.rfind("TGI", 0) == 0;
  if (engine == "triton") return server.rfind("Triton", 0) == 0;
  return false;
}

inline bool InferenceServesGpu(const InferenceFacts& f, const GpuFacts& g) {
  if (g.live_kv && InferenceEngineMatchesServer(f.engine, g.live_kv->server)) return true;
  if (g.processes) {
    for (const auto& p : *g.processes) {
      if (std::find(f.pids.begin(), f.pids.end(), static_cast<int>(p.pid)) != f.pids.end()) {
        return true;
      }
    }
  }
  return false;
}

// The engines with requests waiting now (requests_waiting > 0) that serve `gpu` (see above).
inline std::vector<InferenceWaiting> RequestsWaitingNow(const std::vector<InferenceFacts>& engines,
                                                        const std::vector<GpuFacts>& gpus,
                                                        const GpuFacts& gpu) {
  std::vector<InferenceWaiting> out;
  for (const auto& f : engines) {
    if (!f.requests_waiting || !(*f.requests_waiting > 0)) continue;
    bool known = false, here = false;
    for (const auto& g : gpus) {
      if (InferenceServesGpu(f, g)) {
        known = true;
        if (g.index == gpu.index) here = true;
      }
    }
    if (!known) here = gpu.processes && !gpu.processes->empty();
    if (!here) continue;
    out.push_back(
        {f.name, f.engine, f.model, *f.requests_waiting, f.requests_running.value_or(0), known});
  }
  return out;
}

}  // namespace gpudoctor
