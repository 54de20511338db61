// `gpudoctor plan batching` without the CLI: sizes the KV cache of the model on the GPU
// (kv_planner.h), derives the cost model (cost_model.h), runs both policies over a trace
// (batch_sim.h) and, optionally, re-runs them with one knob changed at a time to say which knob
// matters most. Pure functions, deterministic, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "plan/batch_sim.h"
#include "plan/kv_planner.h"

namespace gpudoctor::plan {

struct BatchingInput {
  KvPlanInput kv;  // model, dtypes, tp, GPU memory, reserve, block size (contexts unused)
  GpuSpec gpu;
  // Cost-model overrides (cost_model.h), seconds. weights_s replaces the whole weight read per
  // iteration (a MoE's routed experts included).
  std::optional<double> overhead_s, weights_s, token_s, kv_token_s;
  uint32_t batch_size = 8;
  double max_wait_s = 0.05;
  uint32_t max_seqs = 256;
  uint32_t max_batched_tokens = 8192;
  uint64_t max_queue = 100000;
  std::optional<uint32_t> max_context;  // default: longest prompt + output of the trace
  // Prefill scheduling of the continuous policy (batch_sim.h); when either is set, PlanBatching
  // also runs continuous batching with them ("after") next to the plain run ("before").
  uint32_t chunked_prefill_tokens = 0;  // 0: off
  double prefix_cache_hit = 0;          // fraction of each prompt cached, [0, 1)
};

struct KnobEffect {
  std::string knob;    // "batch size", "max sequences", "block size", "KV dtype"
  std::string policy;  // the policy it applies to
  std::string from, to;
  double throughput_before = 0, throughput_after = 0;  // tokens/s
  double p99_before_s = 0, p99_after_s = 0;
  double busy_after = 0;
  bool stable_before = true, stable_after = true;  // PolicyResult::stable of each run
  double score = 0;  // the larger relative change of throughput and of p99 latency
};

// A knob "matters" when it moves throughput or p99 latency by at least this much; when none
// does, the policy itself (static against continuous) is what matters.
inline constexpr double kKnobThreshold = 0.05;

struct BatchingPlan {
  KvPlan kv;
  SimConfig config;
  PolicyResult static_result, continuous_result;
  // Continuous batching with the prefill levers of the input; absent when none is set.
  std::optional<PolicyResult> continuous_prefill_result;
  uint32_t chunked_prefill_tokens = 0;  // the levers of that run, from the input
  double prefix_cache_hit = 0;
  std::vector<KnobEffect> knobs;    // empty unless explored
  std::string most_important_knob;  // a KnobEffect::knob, or "policy"
};

// Errors: those of PlanKv, an empty trace, and zero batch size / max sequences.
Result<SimConfig> BuildSimConfig(const BatchingInput& in, const std::vector<Request>& trace,
                                 KvPlan* kv_out);
Result<BatchingPlan> PlanBatching(const BatchingInput& in, const std::vector<Request>& trace,
                                  bool explore_knobs);

}  // namespace gpudoctor::plan
