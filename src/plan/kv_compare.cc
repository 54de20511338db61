#include "plan/kv_compare.h"

#include <cmath>

namespace gpudoctor::plan {
namespace {

bool EightBitOrLess(DType t) { return BytesPerElement(t) <= 1; }

// Weighted mean over the distribution of the blocks a sequence holds itself.
double MeanUnsharedBlocks(const ContextDist& d, double share, uint32_t block) {
  double sum = 0, weight = 0;
  for (const auto& b : d.buckets) {
    sum += b.weight * static_cast<double>(UnsharedBlocks(b.tokens, share, block));
    weight += b.weight;
  }
  return weight > 0 ? sum / weight : 0;
}

ContextDist Doubled(const ContextDist& d) {
  ContextDist out = d;
  for (auto& b : out.buckets) b.tokens *= 2;
  return out;
}

}  // namespace

uint64_t UnsharedBlocks(uint32_t tokens, double share, uint32_t block) {
  uint64_t shared_blocks = static_cast<uint64_t>(std::floor(share * tokens / block));
  uint64_t own = tokens - shared_blocks * block;
  return (own + block - 1) / block;
}

Result<KvComparison> CompareKvLevers(const KvPlanInput& in, double prefix_share) {
  if (!(prefix_share >= 0 && prefix_share < 1)) {
    return InvalidArgument("prefix share must be in [0, 1)");
  }
  if (in.contexts.MaxTokens() > kMaxContextTokens / 2) {
    return InvalidArgument("contexts longer than " + std::to_string(kMaxContextTokens / 2) +
                           " tokens cannot be doubled");
  }
  const DType quant_weights = EightBitOrLess(in.weight_dtype) ? in.weight_dtype : DType::kFp8;
  const DType quant_kv = EightBitOrLess(in.kv_dtype) ? in.kv_dtype : DType::kFp8;
  const DType base_weights = EightBitOrLess(in.weight_dtype) ? DType::kBf16 : in.weight_dtype;

  KvPlanInput base = in;
  base.kv_dtype = DType::kFp16;
  base.weight_dtype = base_weights;
  auto b = PlanKv(base);
  if (!b.ok()) return b.status();
  KvPlanInput kv8 = base;
  kv8.kv_dtype = quant_kv;
  auto k = PlanKv(kv8);
  if (!k.ok()) return k.status();
  KvPlanInput all = kv8;
  all.weight_dtype = quant_weights;
  auto w = PlanKv(all);
  if (!w.ok()) return w.status();

  KvComparison c;
  c.mean_context_tokens = b->mean_context_tokens;
  c.max_context_tokens = b->max_context_tokens;
  c.prefix_share = prefix_share;
  c.contiguous_useful_fraction = b->mean_context_tokens / b->max_context_tokens;
  const uint32_t block = in.block_tokens;
  const ContextDist doubled = Doubled(in.contexts);
  const double base_bytes = b->max_context_tokens * b->kv_bytes_per_token_per_gpu;
  // One step: its plan, the tokens a sequence holds at the original and at doubled lengths, and
  // the tokens of budget it counts (paged: whole blocks only).
  auto add = [&](std::string lever, const KvPlan& p, double tokens, double doubled_tokens,
                 bool paged) {
    KvLeverStep s;
    s.lever = std::move(lever);
    s.kv_bytes_per_sequence = tokens * p.kv_bytes_per_token_per_gpu;
    s.kv_budget_bytes_per_gpu = p.kv_budget_bytes_per_gpu;
    const double capacity =
        static_cast<double>(paged ? p.paged_blocks * block : p.kv_capacity_tokens);
    s.sequences = static_cast<uint64_t>(std::floor(capacity / tokens));
    s.fraction_of_baseline = s.kv_bytes_per_sequence / base_bytes;
    s.doubled_fraction_of_baseline = doubled_tokens * p.kv_bytes_per_token_per_gpu / base_bytes;
    if (c.first_step_within_a_third < 0 && s.doubled_fraction_of_baseline <= kThirdOfTheMemory) {
      c.first_step_within_a_third = static_cast<int>(c.steps.size());
    }
    c.steps.push_back(s);
  };
  const double mean_tokens = in.contexts.MeanBlocks(block) * block;
  const double doubled_tokens = doubled.MeanBlocks(block) * block;
  add(std::string("baseline: fp16 KV, ") + DTypeName(base_weights) + " weights, contiguous " +
          std::to_string(b->max_context_tokens) + "-token slots",
      *b, b->max_context_tokens, 2.0 * b->max_context_tokens, false);
  add("+ paged allocation (" + std::to_string(block) + "-token blocks)", *b, mean_tokens,
      doubled_tokens, true);
  add(std::string("+ KV cache ") + DTypeName(quant_kv), *k, mean_tokens, doubled_tokens, true);
  double own_tokens = mean_tokens, own_doubled = doubled_tokens;
  if (prefix_share > 0) {
    own_tokens = MeanUnsharedBlocks(in.contexts, prefix_share, block) * block;
    own_doubled = MeanUnsharedBlocks(doubled, prefix_share, block) * block;
    add("+ prefix sharing " + std::to_string(static_cast<int>(std::lround(prefix_share * 100))) +
            "% (whole blocks)",
        *k, own_tokens, own_doubled, true);
  }
  add(std::string("+ weights ") + DTypeName(quant_weights), *w, own_tokens, own_doubled, true);

  c.doubled_kv_bytes_per_sequence = own_doubled * w->kv_bytes_per_token_per_gpu;
  c.doubled_fraction_of_baseline = c.doubled_kv_bytes_per_sequence / base_bytes;
  c.doubled_sequences =
      static_cast<uint64_t>(std::floor(static_cast<double>(w->paged_blocks * block) / own_doubled));
  return c;
}

}  // namespace gpudoctor::plan
