// The KV planner against hand-computed values (the arithmetic is in each test) and its errors.
#include <gtest/gtest.h>

#include "plan/kv_planner.h"

namespace gpudoctor::plan {
namespace {

constexpr uint64_t kGiB = 1024ull * 1024 * 1024;

KvPlanInput Input(std::string_view model, uint64_t gpu_mem, uint32_t context) {
  KvPlanInput in;
  const ModelPreset* p = FindModelPreset(model);
  EXPECT_NE(p, nullptr) << model;
  if (p != nullptr) in.model = p->shape;
  in.gpu_mem_bytes = gpu_mem;
  in.contexts = SingleContext(context);
  in.reserve_fraction = 0.10;  // a flat 10% keeps the arithmetic below short; vLLM's: further down
  return in;
}

TEST(PlanKvTest, Llama3_8bOn80GiB) {
  auto p = PlanKv(Input("llama-3-8b", 80 * kGiB, 2048));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // 2 x 32 layers x 8 KV heads x 128 head dim x 2 B (fp16) = 131072 B = 128 KiB per token.
  EXPECT_EQ(p->kv_bytes_per_token, 131072);
  EXPECT_EQ(p->kv_bytes_per_token_per_gpu, 131072);
  // One sequence of 2048 tokens: 2048 x 131072 = 268435456 B = 256 MiB.
  EXPECT_EQ(p->kv_bytes_per_sequence, 268435456);
  // Weights 8.03e9 x 2 B = 16.06e9 B; reserve 10% of 85899345920 = 8589934592 B.
  EXPECT_DOUBLE_EQ(p->weights_bytes_per_gpu, 16.06e9);
  EXPECT_EQ(p->reserve_bytes, 8589934592u);
  // Budget 85899345920 - 16060000000 - 8589934592 = 61249411328 B; / 131072 = 467295.37.
  EXPECT_DOUBLE_EQ(p->kv_budget_bytes_per_gpu, 61249411328.0);
  // 61249411328 / (16 x 131072) = 29205.5 -> 29205 whole blocks = 467280 tokens.
  EXPECT_EQ(p->kv_capacity_tokens, 467280u);
  // 2048 tokens = 128 blocks -> 29205 / 128 = 228 sequences.
  EXPECT_EQ(p->paged_blocks, 29205u);
  EXPECT_EQ(p->max_concurrent_sequences, 228u);
  EXPECT_EQ(p->contiguous_max_sequences, 228u);  // 467280 / 2048 = 228.2
  // 512 tokens = 32 blocks -> 29205 / 32 = 912; 4x the sequences of 2048 tokens.
  ASSERT_EQ(p->scaling.size(), 5u);
  EXPECT_EQ(p->scaling[0].context_tokens, 512u);
  EXPECT_EQ(p->scaling[0].max_concurrent_sequences, 912u);
  EXPECT_EQ(p->scaling[2].max_concurrent_sequences, 228u);
  EXPECT_EQ(p->scaling[4].max_concurrent_sequences, 57u);  // 8192 = 512 blocks: 29205/512
}

TEST(PlanKvTest, Llama2_7bIsMultiHeadAttention) {
  auto p = PlanKv(Input("llama-2-7b", 80 * kGiB, 4096));
  ASSERT_TRUE(p.ok());
  // MHA: 2 x 32 x 32 KV heads x 128 x 2 B = 524288 B = 512 KiB per token, 4x Llama 3 8B.
  EXPECT_EQ(p->kv_bytes_per_token, 524288);
  // Budget 85899345920 - 13.48e9 - 8589934592 = 63829411328; / (16 x 524288) = 7609.3 blocks
  // = 121744 tokens.
  EXPECT_EQ(p->kv_capacity_tokens, 121744u);
  // 4096 tokens = 256 blocks -> 7609 / 256 = 29 sequences.
  EXPECT_EQ(p->max_concurrent_sequences, 29u);
}

TEST(PlanKvTest, Llama3_70bTensorParallelFp8Cache) {
  KvPlanInput in = Input("llama-3-70b", 80 * kGiB, 8192);
  in.tp = 4;
  in.kv_dtype = DType::kFp8;
  auto p = PlanKv(in);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // Whole model: 2 x 80 x 8 x 128 x 1 B = 163840 B per token; per GPU 8/4 = 2 heads: 40960 B.
  EXPECT_EQ(p->kv_bytes_per_token, 163840);
  EXPECT_EQ(p->kv_bytes_per_token_per_gpu, 40960);
  // Weights 70.6e9 x 2 / 4 = 35.3e9 per GPU; budget 85899345920 - 35.3e9 - 8589934592
  // = 42009411328 B; / (16 x 40960) = 64101.5 -> 64101 blocks = 1025616 tokens; 8192 tokens =
  // 512 blocks.
  EXPECT_DOUBLE_EQ(p->weights_bytes_per_gpu, 35.3e9);
  EXPECT_EQ(p->kv_capacity_tokens, 1025616u);
  EXPECT_EQ(p->max_concurrent_sequences, 125u);  // 64101 / 512 = 125.2
}

TEST(PlanKvTest, KvHeadsReplicateBeyondTensorParallelDegree) {
  KvPlanInput in = Input("qwen2.5-7b", 24 * kGiB, 1024);
  in.tp = 8;  // 4 KV heads on 8 GPUs: each GPU keeps ceil(4/8) = 1 head
  auto p = PlanKv(in);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kv_bytes_per_token, 2.0 * 28 * 4 * 128 * 2);          // 57344 B
  EXPECT_EQ(p->kv_bytes_per_token_per_gpu, 2.0 * 28 * 1 * 128 * 2);  // 14336 B
}

TEST(PlanKvTest, Int4WeightsAndExplicitReserve) {
  KvPlanInput in = Input("mistral-7b", 24 * kGiB, 2048);
  in.weight_dtype = DType::kInt4;
  in.reserve_fraction.reset();
  in.reserve_bytes = 2 * kGiB;
  auto p = PlanKv(in);
  ASSERT_TRUE(p.ok());
  // 7.24e9 x 0.5 B = 3.62e9; budget 25769803776 - 3.62e9 - 2147483648 = 20002320128 B;
  // / (16 x 131072 B) = 9537.8 -> 9537 blocks = 152592 tokens.
  EXPECT_DOUBLE_EQ(p->weights_bytes_per_gpu, 3.62e9);
  EXPECT_EQ(p->kv_capacity_tokens, 152592u);
}

TEST(PlanKvTest, MlaModelIsMarkedApproximate) {
  const ModelPreset* p = FindModelPreset("DeepSeek-V3");  // case-insensitive
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->shape.approximate);
  KvPlanInput in = Input("deepseek-v3", 141 * kGiB, 4096);
  in.tp = 8;
  in.weight_dtype = DType::kFp8;
  auto plan = PlanKv(in);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  // 61 layers x 576 latent elements x 2 B = 70272 B per token (2 x 1 x 288 is the same count).
  EXPECT_EQ(plan->kv_bytes_per_token, 70272);
  // One latent "head": every rank keeps the whole latent.
  EXPECT_EQ(plan->kv_bytes_per_token_per_gpu, 70272);
}

TEST(PlanKvTest, DistributionPagedAgainstContiguous) {
  KvPlanInput in = Input("llama-3-8b", 80 * kGiB, 2048);
  in.contexts = ContextDist{{{512, 1}, {2048, 1}}};
  auto p = PlanKv(in);
  ASSERT_TRUE(p.ok());
  // Mean blocks (32 + 128) / 2 = 80: 29205 / 80 = 365 paged sequences; contiguous reserves the
  // longest (2048) for everyone: 467280 / 2048 = 228, and wastes 1 - 1280/2048 = 37.5%.
  EXPECT_EQ(p->max_concurrent_sequences, 365u);
  EXPECT_EQ(p->contiguous_max_sequences, 228u);
  EXPECT_DOUBLE_EQ(p->mean_context_tokens, 1280);
  EXPECT_DOUBLE_EQ(p->contiguous_waste_fraction, 0.375);
  EXPECT_DOUBLE_EQ(p->paged_waste_fraction, 0);  // both lengths are whole blocks
  EXPECT_DOUBLE_EQ(p->paged_waste_bytes, 0);
  // 228 contiguous slots each reserve 2048 - 1280 = 768 tokens too many on average:
  // 228 x 768 x 131072 B = 22951231488 B (21.4 GiB).
  EXPECT_DOUBLE_EQ(p->contiguous_waste_bytes, 22951231488.0);
}

TEST(PlanKvTest, PagedWasteIsTheLastBlocksTail) {
  KvPlanInput in = Input("llama-3-8b", 80 * kGiB, 1000);
  in.max_context = 4096;
  auto p = PlanKv(in);
  ASSERT_TRUE(p.ok());
  // 1000 tokens take 63 blocks = 1008 slots: 8 / 1008 unused. Contiguous: 1 - 1000/4096.
  EXPECT_NEAR(p->paged_waste_fraction, 8.0 / 1008, 1e-12);
  EXPECT_DOUBLE_EQ(p->contiguous_waste_fraction, 1 - 1000.0 / 4096);
  EXPECT_EQ(p->contiguous_max_sequences, 467280u / 4096);
}

TEST(PlanKvTest, ModelLargerThanTheGpuNamesTheSizes) {
  auto p = PlanKv(Input("llama-3-70b", 80 * kGiB, 2048));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("does not fit"), std::string::npos);
  EXPECT_NE(p.status().message().find("131.5 GiB"), std::string::npos)  // 141.2e9 B
      << p.status().message();
}

TEST(PlanKvTest, ImpossibleInputsAreErrors) {
  KvPlanInput in = Input("llama-3-8b", 0, 2048);
  EXPECT_NE(PlanKv(in).status().message().find("GPU memory"), std::string::npos);
  in = Input("llama-3-8b", 80 * kGiB, 2048);
  in.model.layers = 0;
  EXPECT_NE(PlanKv(in).status().message().find("layers"), std::string::npos);
  in = Input("llama-3-8b", 80 * kGiB, 2048);
  in.tp = 0;
  EXPECT_FALSE(PlanKv(in).ok());
  in = Input("llama-3-8b", 80 * kGiB, 2048);
  in.max_context = 1024;  // below the longest context
  EXPECT_NE(PlanKv(in).status().message().find("max-context"), std::string::npos);
}

TEST(PlanKvTest, PresetsCoverTheIssueList) {
  for (const char* name :
       {"llama-2-7b", "llama-2-70b", "llama-3-8b", "llama-3-70b", "llama-3.1-405b", "mistral-7b",
        "mixtral-8x7b", "qwen2.5-7b", "qwen2.5-14b", "qwen2.5-72b", "qwen3-1.7b", "qwen3-8b",
        "qwen3-235b-a22b"}) {
    const ModelPreset* p = FindModelPreset(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_GT(p->shape.layers, 0);
    EXPECT_GT(p->shape.params, 1e9);
    EXPECT_LE(p->shape.active_params, p->shape.params);
    EXPECT_GT(p->shape.hidden_size, 0) << name;  // the reserve model needs the activation sizes
    EXPECT_GT(p->shape.intermediate_size, 0) << name;
    EXPECT_GT(p->shape.vocab_size, 0) << name;
  }
  EXPECT_EQ(FindModelPreset("gpt-5"), nullptr);
}

// vLLM's accounting (the default): usable = total x 0.9; the activation peak is the larger of the
// profile run's forward pass and its sampler; non-torch by GPU class and tp.
TEST(PlanKvTest, VllmReserveOnAnUnknownGpu) {
  KvPlanInput in = Input("llama-3-8b", 80 * kGiB, 2048);
  in.reserve_fraction.reset();
  auto p = PlanKv(in);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(p->flat_reserve);
  EXPECT_DOUBLE_EQ(p->usable_bytes, 0.9 * 85899345920.0);  // 77309411328
  // Forward 8192 x 2 B x (3 x 4096 + 3 x 14336) = 905969664; sampler 256 x 128256 x 40 B =
  // 1313341440: the sampler is the peak.
  EXPECT_DOUBLE_EQ(p->activation.forward_bytes, 905969664.0);
  EXPECT_DOUBLE_EQ(p->activation.sampler_bytes, 1313341440.0);
  EXPECT_DOUBLE_EQ(p->activation.peak_bytes, 1313341440.0);
  // No GPU given: the data-centre profile, 1.79 GiB at tp 1.
  EXPECT_EQ(p->non_torch_profile, "NVLink data-centre GPU");
  EXPECT_DOUBLE_EQ(p->non_torch_bytes, 1.79 * kGiB);
  // Reserve 8589934592 + 1313341440 + 1921997864.96 = 11825273897 (rounded); budget
  // 85899345920 - 16.06e9 - 11825273897 = 58014072023 B; / 2097152 B per block = 27663.2.
  EXPECT_EQ(p->reserve_bytes, 11825273897u);
  EXPECT_EQ(p->paged_blocks, 27663u);
  EXPECT_EQ(p->kv_capacity_tokens, 27663u * 16);
}

TEST(PlanKvTest, VllmReserveGrowsWithTheBatchAndTheGroup) {
  KvPlanInput in = Input("llama-3-8b", 80 * kGiB, 2048);
  in.reserve_fraction.reset();
  in.max_batched_tokens = 32768;  // forward 32768 x 2 x 55296 = 3623878656 > the sampler
  auto p = PlanKv(in);
  ASSERT_TRUE(p.ok());
  EXPECT_DOUBLE_EQ(p->activation.peak_bytes, 3623878656.0);
  // tp 4 on a data-centre GPU: 1.79 GiB + 3 peers x 1.79 GiB; the MLP share of the forward
  // pass splits (3 x 14336 / 4), the hidden-size share does not.
  in.tp = 4;
  p = PlanKv(in);
  ASSERT_TRUE(p.ok());
  EXPECT_DOUBLE_EQ(p->non_torch_bytes, 4 * 1.79 * kGiB);
  EXPECT_DOUBLE_EQ(p->activation.forward_bytes, 32768.0 * 2 * (3 * 4096 + 3 * 14336 / 4.0));
  // A PCIe card: 0.25 GiB whatever the tp.
  in.gpu = FindGpuSpec("rtx-4090");
  p = PlanKv(in);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->non_torch_profile, "PCIe card");
  EXPECT_DOUBLE_EQ(p->non_torch_bytes, 0.25 * kGiB);
}

TEST(PlanKvTest, VllmReserveOverridesAndMoe) {
  KvPlanInput in = Input("qwen3-235b-a22b", 80 * kGiB, 2048);
  in.reserve_fraction.reset();
  in.tp = 4;
  in.weight_dtype = DType::kFp8;
  auto p = PlanKv(in);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // MoE forward: 8192 x 2 x (3 x 4096 + 8 routed x (3 x 1536 / 4 + 4096)) = 889192448 B;
  // sampler 256 x 151936 x 40 = 1555824640 B, the peak.
  EXPECT_DOUBLE_EQ(p->activation.forward_bytes, 889192448.0);
  EXPECT_DOUBLE_EQ(p->activation.sampler_bytes, 1555824640.0);
  EXPECT_DOUBLE_EQ(p->activation.peak_bytes, 1555824640.0);
  in.activation_bytes = kGiB;
  in.non_torch_bytes = 2 * kGiB;
  in.memory_fraction = 0.95;
  p = PlanKv(in);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->activation_given);
  EXPECT_TRUE(p->non_torch_given);
  // 5% of 80 GiB + 1 GiB + 2 GiB = 7 GiB.
  EXPECT_EQ(p->reserve_bytes, 7 * kGiB);
}

TEST(PlanKvTest, CustomShapeEstimatesTheActivationSizes) {
  KvPlanInput in;
  in.model.layers = 32;
  in.model.kv_heads = 8;
  in.model.head_dim = 128;
  in.model.params = in.model.active_params = 8.03e9;
  in.gpu_mem_bytes = 80 * kGiB;
  auto p = PlanKv(in);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->activation.estimated_shape);
  // hidden = sqrt(8.03e9 / (12 x 32)) = 4572.9; vocab 128256: the sampler's 1.22 GiB again.
  EXPECT_DOUBLE_EQ(p->activation.sampler_bytes, 1313341440.0);
  EXPECT_NEAR(p->activation.forward_bytes, 8192 * 2 * (3 + 12) * 4572.9, 8192 * 2 * 15 * 0.1);
}

TEST(PlanKvTest, VllmReserveRejectsBadKnobs) {
  KvPlanInput in = Input("llama-3-8b", 80 * kGiB, 2048);
  in.reserve_fraction.reset();
  in.memory_fraction = 0;
  EXPECT_NE(PlanKv(in).status().message().find("memory fraction"), std::string::npos);
  in.memory_fraction = 1.2;
  EXPECT_FALSE(PlanKv(in).ok());
  in.memory_fraction = 0.9;
  in.max_batched_tokens = 0;
  EXPECT_NE(PlanKv(in).status().message().find("batched tokens"), std::string::npos);
  in.max_batched_tokens = 8192;
  in.max_seqs = 0;
  EXPECT_NE(PlanKv(in).status().message().find("sequences"), std::string::npos);
  // Too little memory for weights plus reserve: the error names the reserve.
  in.max_seqs = 256;
  in.memory_fraction = 0.2;
  auto p = PlanKv(in);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("plus a reserve of"), std::string::npos);
}

}  // namespace
}  // namespace gpudoctor::plan
