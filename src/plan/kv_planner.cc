#include "plan/kv_planner.h"

#include <cmath>
#include <string>

#include "core/strings.h"

namespace gpudoctor::plan {

uint64_t PagedSequences(const KvPlan& plan, uint32_t block_tokens, uint32_t context_tokens) {
  uint64_t per_seq = (context_tokens + block_tokens - 1) / block_tokens;
  return per_seq == 0 ? 0 : plan.paged_blocks / per_seq;
}

Result<KvPlan> PlanKv(const KvPlanInput& in) {
  const ModelShape& m = in.model;
  if (m.layers <= 0)
    return InvalidArgument("layers must be positive, got " + std::to_string(m.layers));
  if (m.kv_heads <= 0) {
    return InvalidArgument("kv-heads must be positive, got " + std::to_string(m.kv_heads));
  }
  if (m.head_dim <= 0) {
    return InvalidArgument("head-dim must be positive, got " + std::to_string(m.head_dim));
  }
  if (!(m.params > 0)) return InvalidArgument("params must be positive");
  if (in.tp < 1) return InvalidArgument("tp must be at least 1, got " + std::to_string(in.tp));
  if (in.gpu_mem_bytes == 0) return InvalidArgument("GPU memory must be positive, got 0");
  if (in.block_tokens == 0) return InvalidArgument("block size must be at least 1 token");
  if (in.contexts.buckets.empty()) return InvalidArgument("empty context distribution");
  if (in.reserve_fraction && !(*in.reserve_fraction >= 0 && *in.reserve_fraction < 1)) {
    return InvalidArgument("reserve fraction must be in [0, 1)");
  }
  if (!(in.memory_fraction > 0 && in.memory_fraction <= 1)) {
    return InvalidArgument("memory fraction must be in (0, 1], got " +
                           FormatDouble(in.memory_fraction, 3));
  }
  if (in.max_batched_tokens == 0) return InvalidArgument("max batched tokens must be at least 1");
  if (in.max_seqs == 0) return InvalidArgument("max sequences must be at least 1");

  KvPlan p;
  double kv_elem = BytesPerElement(in.kv_dtype);
  int heads_per_gpu = (m.kv_heads + in.tp - 1) / in.tp;
  p.kv_bytes_per_token = 2.0 * m.layers * m.kv_heads * m.head_dim * kv_elem;
  p.kv_bytes_per_token_per_gpu = 2.0 * m.layers * heads_per_gpu * m.head_dim * kv_elem;
  p.weights_bytes_per_gpu = m.params * BytesPerElement(in.weight_dtype) / in.tp;
  const double total = static_cast<double>(in.gpu_mem_bytes);
  if (in.reserve_bytes || in.reserve_fraction) {
    p.flat_reserve = true;
    p.usable_bytes = total;
    p.reserve_bytes = in.reserve_bytes.value_or(
        static_cast<uint64_t>(std::llround(total * in.reserve_fraction.value_or(0))));
  } else {
    p.usable_bytes = total * in.memory_fraction;
    p.activation = ProfileRunPeak(m, in.tp, in.max_batched_tokens, in.max_seqs);
    if (in.activation_bytes) {
      p.activation_given = true;
      p.activation.peak_bytes = static_cast<double>(*in.activation_bytes);
    }
    const NonTorchProfile& profile = NonTorchProfileFor(in.gpu);
    p.non_torch_profile = profile.label;
    p.non_torch_given = in.non_torch_bytes.has_value();
    p.non_torch_bytes = p.non_torch_given ? static_cast<double>(*in.non_torch_bytes)
                                          : NonTorchBytes(profile, in.tp);
    p.reserve_bytes = static_cast<uint64_t>(
        std::llround(total - p.usable_bytes + p.activation.peak_bytes + p.non_torch_bytes));
  }
  p.kv_budget_bytes_per_gpu = total - p.weights_bytes_per_gpu - p.reserve_bytes;
  const double block_bytes = in.block_tokens * p.kv_bytes_per_token_per_gpu;
  p.paged_blocks = p.kv_budget_bytes_per_gpu > 0
                       ? static_cast<uint64_t>(std::floor(p.kv_budget_bytes_per_gpu / block_bytes))
                       : 0;
  p.kv_capacity_tokens = p.paged_blocks * in.block_tokens;
  if (p.paged_blocks == 0) {
    return InvalidArgument(
        "the model does not fit: weights need " + FormatGiB(p.weights_bytes_per_gpu) +
        " per GPU (tp " + std::to_string(in.tp) + ", " + DTypeName(in.weight_dtype) +
        ") plus a reserve of " + FormatGiB(p.reserve_bytes) + ", the GPU has " +
        FormatGiB(in.gpu_mem_bytes) + ": no room for one KV block (raise --tp or lower --dtype)");
  }

  p.mean_context_tokens = in.contexts.MeanTokens();
  p.max_context_tokens = in.max_context.value_or(in.contexts.MaxTokens());
  if (p.max_context_tokens < in.contexts.MaxTokens()) {
    return InvalidArgument("max-context " + std::to_string(p.max_context_tokens) +
                           " is below the longest context of the distribution (" +
                           std::to_string(in.contexts.MaxTokens()) + ")");
  }
  p.kv_bytes_per_sequence = p.kv_bytes_per_token * p.mean_context_tokens;
  double mean_blocks = in.contexts.MeanBlocks(in.block_tokens);
  p.max_concurrent_sequences =
      static_cast<uint64_t>(std::floor(static_cast<double>(p.paged_blocks) / mean_blocks));
  p.contiguous_max_sequences = p.kv_capacity_tokens / p.max_context_tokens;
  double paged_tokens = mean_blocks * in.block_tokens;
  p.paged_waste_fraction = 1.0 - p.mean_context_tokens / paged_tokens;
  p.contiguous_waste_fraction = 1.0 - p.mean_context_tokens / p.max_context_tokens;
  p.paged_waste_bytes = static_cast<double>(p.max_concurrent_sequences) *
                        (paged_tokens - p.mean_context_tokens) * p.kv_bytes_per_token_per_gpu;
  p.contiguous_waste_bytes = static_cast<double>(p.contiguous_max_sequences) *
                             (p.max_context_tokens - p.mean_context_tokens) *
                             p.kv_bytes_per_token_per_gpu;
  for (uint32_t c : {512u, 1024u, 2048u, 4096u, 8192u}) {
    p.scaling.push_back({c, PagedSequences(p, in.block_tokens, c)});
  }
  return p;
}

}  // namespace gpudoctor::plan
