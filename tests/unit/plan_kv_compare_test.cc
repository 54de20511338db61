// `plan kv --compare`: the KV memory per sequence lever by lever, against hand-computed values.
#include <gtest/gtest.h>

#include "plan/kv_compare.h"

namespace gpudoctor::plan {
namespace {

constexpr double kMiB = 1 << 20;

// Llama-3-8B's shape with 8e9 parameters, one 80 GiB GPU, 10% reserve, 16-token blocks. Half
// the sequences hold 1,000 tokens, half 3,000 (mean 2,000); the contiguous server reserves 4,096.
KvPlanInput Input() {
  KvPlanInput in;
  in.model.layers = 32;
  in.model.kv_heads = 8;
  in.model.head_dim = 128;
  in.model.params = 8e9;
  in.model.active_params = 8e9;
  in.gpu_mem_bytes = 80ull << 30;
  in.contexts.buckets = {{1000, 1}, {3000, 1}};
  in.max_context = 4096;
  in.reserve_fraction = 0.10;  // a flat 8 GiB: the levers below do not touch the reserve
  return in;
}

TEST(PlanKvCompareTest, UnsharedBlocksCountWholeSharedBlocksOnly) {
  // 1,000 tokens half shared: floor(500 / 16) = 31 blocks (496 tokens) shared, 504 own tokens in
  // ceil(504 / 16) = 32 blocks.
  EXPECT_EQ(UnsharedBlocks(1000, 0.5, 16), 32u);
  EXPECT_EQ(UnsharedBlocks(3000, 0.5, 16), 95u);  // 93 shared (1,488), 1,512 own -> 95
  EXPECT_EQ(UnsharedBlocks(1000, 0, 16), 63u);    // ceil(1000 / 16)
  EXPECT_EQ(UnsharedBlocks(10, 0.9, 16), 1u);     // less than a block shared: nothing shared
}

TEST(PlanKvCompareTest, LeversByHand) {
  auto c = CompareKvLevers(Input(), 0.5);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->steps.size(), 5u);
  // KV per token: 2 x 32 x 8 x 128 x 2 B = 128 KiB (fp16), 64 KiB (fp8).
  // Budget: 80 GiB - 16e9 B of bf16 weights - 8 GiB reserve = 61,309,411,328 B
  //   -> 467,753 fp16 tokens, 935,507 fp8 tokens; fp8 weights add 8e9 B -> 1,057,577 fp8 tokens.
  // Baseline, contiguous: 4,096 tokens x 128 KiB = 512 MiB; 467,753 / 4,096 = 114 sequences.
  EXPECT_DOUBLE_EQ(c->steps[0].kv_bytes_per_sequence, 512 * kMiB);
  EXPECT_EQ(c->steps[0].sequences, 114u);
  EXPECT_DOUBLE_EQ(c->contiguous_useful_fraction, 2000.0 / 4096);
  // Paged: (63 + 188) / 2 = 125.5 blocks = 2,008 tokens x 128 KiB = 251 MiB;
  // 29,234 blocks / 125.5 = 232 sequences.
  EXPECT_DOUBLE_EQ(c->steps[1].kv_bytes_per_sequence, 251 * kMiB);
  EXPECT_DOUBLE_EQ(c->steps[1].fraction_of_baseline, 251.0 / 512);
  EXPECT_EQ(c->steps[1].sequences, 232u);
  // KV fp8: 125.5 MiB; 58,469 blocks / 125.5 = 465.
  EXPECT_DOUBLE_EQ(c->steps[2].kv_bytes_per_sequence, 125.5 * kMiB);
  EXPECT_EQ(c->steps[2].sequences, 465u);
  // Prefix sharing 50%: (32 + 95) / 2 = 63.5 blocks = 1,016 tokens x 64 KiB = 63.5 MiB;
  // 58,469 / 63.5 = 920.
  EXPECT_DOUBLE_EQ(c->steps[3].kv_bytes_per_sequence, 63.5 * kMiB);
  EXPECT_EQ(c->steps[3].sequences, 920u);
  // fp8 weights: the same 63.5 MiB, 66,098 blocks / 63.5 = 1,040.
  EXPECT_DOUBLE_EQ(c->steps[4].kv_bytes_per_sequence, 63.5 * kMiB);
  EXPECT_EQ(c->steps[4].sequences, 1040u);
  EXPECT_DOUBLE_EQ(c->steps[4].kv_budget_bytes_per_gpu, 69309411328.0);
  // Contexts doubled (2,000 and 6,000): 63 and 188 own blocks -> 125.5 MiB, 24.5% of the
  // baseline's 512 MiB: prompts twice as long in a quarter of the memory. 66,098 / 125.5 = 526.
  EXPECT_DOUBLE_EQ(c->doubled_kv_bytes_per_sequence, 125.5 * kMiB);
  EXPECT_DOUBLE_EQ(c->doubled_fraction_of_baseline, 125.5 / 512);
  EXPECT_EQ(c->doubled_sequences, 526u);
  // Per step at doubled lengths, over 512 MiB: baseline 2 x 4,096 tokens -> 200%; paged 251 MiB
  // (contexts 2,000 and 6,000: 125 + 375 blocks / 2 = 4,000 tokens x 128 KiB = 500 MiB) ->
  // 97.7%; fp8 250 MiB -> 48.8%; prefix sharing 125.5 MiB -> 24.5%, the first within a third.
  EXPECT_DOUBLE_EQ(c->steps[0].doubled_fraction_of_baseline, 2.0);
  EXPECT_DOUBLE_EQ(c->steps[1].doubled_fraction_of_baseline, 500.0 / 512);
  EXPECT_DOUBLE_EQ(c->steps[2].doubled_fraction_of_baseline, 250.0 / 512);
  EXPECT_DOUBLE_EQ(c->steps[3].doubled_fraction_of_baseline, 125.5 / 512);
  EXPECT_EQ(c->first_step_within_a_third, 3);
}

// The guide's case: contiguous slots a third used (mean 2,048 of 6,144 reserved, inside the vLLM
// paper's 20.4-38.2%). Paging and fp8 KV alone hold prompts twice as long (4,096 tokens,
// 256 blocks x 64 KiB = 256 MiB) in a third of the baseline's 6,144 x 128 KiB = 768 MiB.
TEST(PlanKvCompareTest, PagingAndFp8GiveAThirdOfTheMemoryForTwiceThePrompt) {
  KvPlanInput in = Input();
  in.contexts.buckets = {{2048, 1}};
  in.max_context = 6144;
  auto c = CompareKvLevers(in, 0);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_DOUBLE_EQ(c->steps[0].kv_bytes_per_sequence, 768 * kMiB);
  EXPECT_DOUBLE_EQ(c->steps[2].doubled_fraction_of_baseline, 1.0 / 3);
  EXPECT_EQ(c->first_step_within_a_third, 2);
  EXPECT_EQ(c->steps[2].lever, "+ KV cache fp8");
}

TEST(PlanKvCompareTest, NoPrefixShareSkipsThatLeverAndKeepsUserDtypes) {
  KvPlanInput in = Input();
  in.weight_dtype = DType::kInt4;
  in.kv_dtype = DType::kInt8;
  auto c = CompareKvLevers(in, 0);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->steps.size(), 4u);
  EXPECT_NE(c->steps[0].lever.find("fp16 KV, bf16 weights"), std::string::npos);
  EXPECT_EQ(c->steps[2].lever, "+ KV cache int8");
  EXPECT_EQ(c->steps[3].lever, "+ weights int4");
  // int4 weights: 4e9 B -> budget 73,309,411,328 B -> 1,118,612 int8 tokens, 69,913 blocks,
  // / 125.5 = 557 sequences of 125.5 MiB.
  EXPECT_DOUBLE_EQ(c->steps[3].kv_bytes_per_sequence, 125.5 * kMiB);
  EXPECT_EQ(c->steps[3].sequences, 557u);
  // Doubled without sharing: (125 + 375) / 2 = 250 blocks = 4,000 tokens x 64 KiB = 250 MiB.
  EXPECT_DOUBLE_EQ(c->doubled_kv_bytes_per_sequence, 250 * kMiB);
}

TEST(PlanKvCompareTest, BadInputs) {
  EXPECT_FALSE(CompareKvLevers(Input(), 1.0).ok());
  EXPECT_FALSE(CompareKvLevers(Input(), -0.1).ok());
  KvPlanInput in = Input();
  in.gpu_mem_bytes = 10ull << 30;  // 16e9 B of weights do not fit
  EXPECT_FALSE(CompareKvLevers(in, 0.5).ok());
}

}  // namespace
}  // namespace gpudoctor::plan
