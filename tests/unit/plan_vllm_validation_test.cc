// The reserve model (plan/memory_reserve.h) against public vLLM logs: each prediction of the KV
// cache within ±10% of what vLLM printed. The points, their sources and the ones that cannot be
// matched (and why) are in docs/plan.md, "Memory reserve: validation"; keep the two in step.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "plan/kv_planner.h"

namespace gpudoctor::plan {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

struct LogPoint {
  std::string source;  // URL of the log
  std::string model;   // preset
  std::string gpu;     // --gpu-type: picks the non-torch profile
  double total_gib;    // vLLM's total_gpu_memory
  double fraction;     // gpu_memory_utilization
  int tp;
  DType weights;
  uint32_t max_batched_tokens;
  uint32_t max_seqs;
  uint64_t observed_tokens;  // "GPU KV cache size" / blocks x 16; 0: not printed
  double observed_kv_gib;    // available KV cache memory; 0: not printed
};

// What each point is and why these inputs: docs/plan.md.
const std::vector<LogPoint>& Points() {
  static const std::vector<LogPoint> points = {
      {"https://github.com/vllm-project/vllm/pull/10511 (tp 1)", "llama-3-8b", "h100-sxm", 79.22,
       0.90, 1, DType::kBf16, 8192, 256, 0, 53.29},
      // The excerpt stops before the value: 71.29 - 7.48 - 3.58 - 1.26 from the same log.
      {"https://github.com/vllm-project/vllm/pull/10511 (tp 2)", "llama-3-8b", "h100-sxm", 79.22,
       0.90, 2, DType::kBf16, 8192, 256, 0, 71.29 - 7.48 - 3.58 - 1.26},
      // 23.08 GiB usable at 0.98: total 23.55 GiB. Max_model_len 131072 > 32K: V0 turned chunked
      // prefill on with 2048 batched tokens. Rank 0 (the sampler) holds the fewest blocks.
      {"https://github.com/vllm-project/vllm/issues/13061", "qwen2.5-14b", "rtx-4090", 23.08 / 0.98,
       0.98, 2, DType::kBf16, 2048, 256, 81536, 0},
      {"https://github.com/vllm-project/vllm/issues/21348", "qwen3-235b-a22b", "h100-sxm", 79.22,
       0.90, 4, DType::kFp8, 8192, 256, 178880, 8.11},
      // vLLM 0.2 (December 2023): max_num_batched_tokens = max_model_len 4096; 7,351 blocks.
      {"https://github.com/vllm-project/vllm/pull/2031", "llama-2-7b", "a100-sxm-80gb", 79.15, 0.90,
       1, DType::kBf16, 4096, 256, 7351 * 16, 0},
      // RTX 3090, Llama-3.1-8B, --max-model-len 20000 and 29000 (no chunked prefill below 32K:
      // the profile runs max_model_len tokens): 1,952 and 1,478 blocks.
      {"https://github.com/vllm-project/vllm/issues/10517 (20k)", "llama-3.1-8b", "rtx-3090", 23.58,
       0.90, 1, DType::kBf16, 20000, 256, 1952 * 16, 3.81},
      {"https://github.com/vllm-project/vllm/issues/10517 (29k)", "llama-3.1-8b", "rtx-3090", 23.58,
       0.90, 1, DType::kBf16, 29000, 256, 1478 * 16, 2.89},
  };
  return points;
}

Result<KvPlan> Predict(const LogPoint& p) {
  KvPlanInput in;
  const ModelPreset* model = FindModelPreset(p.model);
  EXPECT_NE(model, nullptr) << p.model;
  if (model == nullptr) return InvalidArgument("no preset");
  in.model = model->shape;
  in.gpu = FindGpuSpec(p.gpu);
  EXPECT_NE(in.gpu, nullptr) << p.gpu;
  in.gpu_mem_bytes = static_cast<uint64_t>(std::llround(p.total_gib * kGiB));
  in.memory_fraction = p.fraction;
  in.tp = p.tp;
  in.weight_dtype = p.weights;
  in.kv_dtype = DType::kBf16;
  in.max_batched_tokens = p.max_batched_tokens;
  in.max_seqs = p.max_seqs;
  in.contexts = SingleContext(1024);
  return PlanKv(in);
}

TEST(PlanVllmValidationTest, EveryLogWithinTenPercent) {
  for (const auto& p : Points()) {
    SCOPED_TRACE(p.source);
    auto plan = Predict(p);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    if (p.observed_tokens > 0) {
      double err = static_cast<double>(plan->kv_capacity_tokens) / p.observed_tokens - 1;
      EXPECT_LT(std::fabs(err), 0.10)
          << plan->kv_capacity_tokens << " tokens predicted, " << p.observed_tokens << " logged";
    }
    if (p.observed_kv_gib > 0) {
      double err = plan->kv_budget_bytes_per_gpu / kGiB / p.observed_kv_gib - 1;
      EXPECT_LT(std::fabs(err), 0.10) << plan->kv_budget_bytes_per_gpu / kGiB << " GiB predicted, "
                                      << p.observed_kv_gib << " logged";
    }
  }
}

TEST(PlanVllmValidationTest, LoggedReservePartsOfPr10511) {
  // Meta-Llama-3-8B on an H100: weights 14.96 GiB, non-torch 1.79 GiB (tp 1) and 3.58 GiB (tp 2),
  // activation peak 1.26 GiB at both (the sampler's logits do not shrink with tp).
  auto tp1 = Predict(Points()[0]);
  auto tp2 = Predict(Points()[1]);
  ASSERT_TRUE(tp1.ok() && tp2.ok());
  EXPECT_NEAR(tp1->weights_bytes_per_gpu / kGiB, 14.96, 0.01);
  EXPECT_NEAR(tp2->weights_bytes_per_gpu / kGiB, 7.48, 0.01);
  EXPECT_NEAR(tp1->non_torch_bytes / kGiB, 1.79, 0.001);
  EXPECT_NEAR(tp2->non_torch_bytes / kGiB, 3.58, 0.001);
  // 256 x 128256 x 40 B = 1313341440 B = 1.22 GiB; forward 8192 x 2 x (3 x 4096 + 3 x 14336).
  EXPECT_DOUBLE_EQ(tp1->activation.sampler_bytes, 1313341440.0);
  EXPECT_DOUBLE_EQ(tp1->activation.forward_bytes, 8192.0 * 2 * (3 * 4096 + 3 * 14336));
  EXPECT_DOUBLE_EQ(tp1->activation.peak_bytes, tp2->activation.peak_bytes);
  EXPECT_NEAR(tp1->activation.peak_bytes / kGiB, 1.26, 0.05);
}

TEST(PlanVllmValidationTest, KnownMissesAreStillMisses) {
  // docs/plan.md explains both: the logs lack an input the prediction needs. If the model ever
  // matches them, the explanation there is stale.
  // vLLM issue 33263: Qwen3-1.7B, 18.78 GiB = 175,856 tokens on "a 24 GB GPU"; at the default
  // fraction 0.90 even a 23.58 GiB card with no reserve cannot hold that much.
  LogPoint qwen{"33263",      "qwen3-1.7b", "rtx-4090", 23.58,  0.90, 1,
                DType::kBf16, 8192,         1,          175856, 18.78};
  auto q = Predict(qwen);
  ASSERT_TRUE(q.ok());
  EXPECT_GT(std::fabs(static_cast<double>(q->kv_capacity_tokens) / qwen.observed_tokens - 1), 0.10);
  // vLLM PR 17122: Llama-3.1-8B on an L40S (about 44.4 GiB as CUDA reports it), weights
  // 14.99 GiB, 158,656 tokens: at 0.90 that leaves 5.6 GiB unexplained.
  LogPoint l40s{"17122", "llama-3.1-8b", "l40s", 44.4, 0.90, 1, DType::kBf16, 8192, 256, 158656, 0};
  auto l = Predict(l40s);
  ASSERT_TRUE(l.ok());
  EXPECT_GT(static_cast<double>(l->kv_capacity_tokens) / l40s.observed_tokens - 1, 0.10);
}

}  // namespace
}  // namespace gpudoctor::plan
