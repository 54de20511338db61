#include "plan/batching_plan.h"

#include <algorithm>
#include <cmath>

namespace gpudoctor::plan {
namespace {

double Relative(double before, double after) { return before > 0 ? (after - before) / before : 0; }

KnobEffect Compare(std::string knob, const PolicyResult& base, const PolicyResult& changed,
                   std::string from, std::string to) {
  KnobEffect k;
  k.knob = std::move(knob);
  k.policy = base.policy;
  k.from = std::move(from);
  k.to = std::move(to);
  k.throughput_before = base.throughput_tokens_per_s;
  k.throughput_after = changed.throughput_tokens_per_s;
  k.p99_before_s = base.p99_latency_s;
  k.p99_after_s = changed.p99_latency_s;
  k.busy_after = changed.gpu_busy_fraction;
  k.stable_before = base.stable;
  k.stable_after = changed.stable;
  k.score = std::max(std::abs(Relative(k.throughput_before, k.throughput_after)),
                     std::abs(Relative(k.p99_before_s, k.p99_after_s)));
  return k;
}

}  // namespace

Result<SimConfig> BuildSimConfig(const BatchingInput& in, const std::vector<Request>& trace,
                                 KvPlan* kv_out) {
  if (trace.empty()) return InvalidArgument("the trace has no requests");
  if (in.batch_size == 0) return InvalidArgument("batch size must be at least 1");
  if (in.max_seqs == 0) return InvalidArgument("max sequences must be at least 1");
  if (!(in.prefix_cache_hit >= 0 && in.prefix_cache_hit < 1)) {
    return InvalidArgument("prefix cache hit rate must be in [0, 1)");
  }
  uint32_t longest = 0;
  for (const auto& q : trace) longest = std::max(longest, q.prompt_tokens + q.output_tokens);
  KvPlanInput kv_in = in.kv;
  uint32_t max_context = in.max_context.value_or(longest);
  kv_in.contexts = SingleContext(max_context);
  kv_in.max_context = max_context;
  auto kv = PlanKv(kv_in);
  if (!kv.ok()) return kv.status();
  SimConfig c;
  c.cost = DeriveCostModel(in.kv.model, in.kv.weight_dtype, kv->kv_bytes_per_token_per_gpu,
                           in.kv.tp, in.gpu);
  if (in.overhead_s) c.cost.overhead_s = *in.overhead_s;
  if (in.weights_s) {
    c.cost.weights_s = *in.weights_s;
    c.cost.expert_weights_s = 0;
  }
  if (in.token_s) c.cost.token_s = *in.token_s;
  if (in.kv_token_s) c.cost.kv_token_s = *in.kv_token_s;
  c.kv_bytes_per_token = kv->kv_bytes_per_token_per_gpu;
  c.kv_capacity_tokens = kv->kv_capacity_tokens;
  c.max_queue = in.max_queue;
  c.batch_size = in.batch_size;
  c.max_wait_s = in.max_wait_s;
  c.max_context = max_context;
  c.max_seqs = in.max_seqs;
  c.block_tokens = in.kv.block_tokens;
  c.max_batched_tokens = in.max_batched_tokens;
  if (kv_out != nullptr) *kv_out = *kv;
  return c;
}

Result<BatchingPlan> PlanBatching(const BatchingInput& in, const std::vector<Request>& trace,
                                  bool explore_knobs) {
  BatchingPlan plan;
  auto config = BuildSimConfig(in, trace, &plan.kv);
  if (!config.ok()) return config.status();
  plan.config = *config;
  plan.static_result = SimulateStatic(trace, plan.config);
  plan.continuous_result = SimulateContinuous(trace, plan.config);
  if (in.chunked_prefill_tokens > 0 || in.prefix_cache_hit > 0) {
    SimConfig c = plan.config;
    c.chunked_prefill_tokens = in.chunked_prefill_tokens;
    c.prefix_cache_hit = in.prefix_cache_hit;
    plan.continuous_prefill_result = SimulateContinuous(trace, c);
    plan.continuous_prefill_result->policy = "continuous+prefill";
    plan.chunked_prefill_tokens = in.chunked_prefill_tokens;
    plan.prefix_cache_hit = in.prefix_cache_hit;
  }
  if (!explore_knobs) return plan;

  {  // Static: twice the batch size (still capped by memory inside the simulator).
    SimConfig c = plan.config;
    c.batch_size = in.batch_size * 2;
    PolicyResult changed = SimulateStatic(trace, c);
    std::string to = std::to_string(c.batch_size);
    if (changed.batch_slots < c.batch_size) {
      to += " (memory allows " + std::to_string(changed.batch_slots) + ")";
    }
    plan.knobs.push_back(
        Compare("batch size", plan.static_result, changed, std::to_string(in.batch_size), to));
  }
  {  // Continuous: twice the sequence slots.
    SimConfig c = plan.config;
    c.max_seqs = in.max_seqs * 2;
    plan.knobs.push_back(Compare("max sequences", plan.continuous_result,
                                 SimulateContinuous(trace, c), std::to_string(in.max_seqs),
                                 std::to_string(c.max_seqs)));
  }
  {  // Continuous: twice the block size (more internal fragmentation, fewer block tables).
    BatchingInput changed = in;
    changed.kv.block_tokens = in.kv.block_tokens * 2;
    auto c = BuildSimConfig(changed, trace, nullptr);
    if (c.ok()) {
      plan.knobs.push_back(
          Compare("block size", plan.continuous_result, SimulateContinuous(trace, *c),
                  std::to_string(in.kv.block_tokens), std::to_string(changed.kv.block_tokens)));
    }
  }
  {  // Continuous: the other KV dtype (fp8 halves the cache of fp16/bf16).
    BatchingInput changed = in;
    changed.kv.kv_dtype = BytesPerElement(in.kv.kv_dtype) > 1 ? DType::kFp8 : DType::kFp16;
    auto c = BuildSimConfig(changed, trace, nullptr);
    if (c.ok()) {
      plan.knobs.push_back(Compare("KV dtype", plan.continuous_result,
                                   SimulateContinuous(trace, *c), DTypeName(in.kv.kv_dtype),
                                   DTypeName(changed.kv.kv_dtype)));
    }
  }
  const KnobEffect* best = nullptr;
  for (const auto& k : plan.knobs) {
    if (best == nullptr || k.score > best->score) best = &k;
  }
  plan.most_important_knob =
      best != nullptr && best->score >= kKnobThreshold ? best->knob : "policy";
  return plan;
}

}  // namespace gpudoctor::plan
