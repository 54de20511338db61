// The batching cost model against hand-computed values (roofline, fp8 peak, MoE expert reads),
// the GPU table's lookups, overload detection and Little's law on the simulator's results.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "plan/batch_sim.h"
#include "plan/batching_plan.h"
#include "plan/cost_model.h"
#include "plan/plan_render.h"

namespace gpudoctor::plan {
namespace {

// Llama-3.1-8B (8.03e9 parameters, 128 KiB of fp16 KV per token) on an H100 SXM (989.4 / 1978.9
// dense TFLOPS bf16 / fp8, 3.35 TB/s), at 50% of peak FLOP/s and 80% of peak bandwidth:
//   bandwidth        3.35e12 x 0.8 = 2.68e12 B/s
//   token_s bf16     2 x 8.03e9 / (989.4e12 x 0.5)  = 32.464 us
//   token_s fp8      2 x 8.03e9 / (1978.9e12 x 0.5) = 16.231 us
//   weights_s bf16   8.03e9 x 2 B / 2.68e12         = 5.9925 ms
//   weights_s fp8    8.03e9 x 1 B / 2.68e12         = 2.9963 ms
//   kv_token_s       131072 B / 2.68e12             = 48.907 ns
TEST(PlanCostTest, Llama8bOnH100Coefficients) {
  const GpuSpec& h100 = *FindGpuSpec("h100-sxm");
  const ModelShape& m = FindModelPreset("llama-3.1-8b")->shape;
  CostModel bf16 = DeriveCostModel(m, DType::kBf16, 131072, 1, h100);
  EXPECT_NEAR(bf16.overhead_s, 1e-3, 1e-15);
  EXPECT_NEAR(bf16.token_s, 32.464e-6, 0.001e-6);
  EXPECT_NEAR(bf16.weights_s, 5.9925e-3, 0.0001e-3);
  EXPECT_NEAR(bf16.kv_token_s, 48.907e-9, 0.001e-9);
  EXPECT_EQ(bf16.expert_weights_s, 0);
  CostModel fp8 = DeriveCostModel(m, DType::kFp8, 131072, 1, h100);
  EXPECT_NEAR(fp8.token_s, 16.231e-6, 0.001e-6);  // the fp8 tensor-core peak
  EXPECT_NEAR(fp8.weights_s, 2.9963e-3, 0.0001e-3);
  EXPECT_NEAR(fp8.kv_token_s, bf16.kv_token_s, 1e-18);  // KV stays fp16
}

// Roofline: overhead + max(compute, memory), never their sum.
//   decode, 64 sequences reading 64,000 cached tokens, fp8:
//     compute 64 x 16.231 us = 1.0388 ms; memory 2.9963 ms + 64000 x 48.907 ns = 6.1263 ms
//     step = 1 + 6.1263 = 7.1263 ms (the additive model said 1 + 1.0388 + 6.1263 = 8.1651 ms)
//   prefill of 2048 tokens, fp8: compute 2048 x 16.231 us = 33.241 ms > memory 2.9963 ms
//     step = 34.241 ms
TEST(PlanCostTest, RooflineTakesTheLargerOfComputeAndMemory) {
  CostModel c = DeriveCostModel(FindModelPreset("llama-3.1-8b")->shape, DType::kFp8, 131072, 1,
                                *FindGpuSpec("h100-sxm"));
  EXPECT_NEAR(c.StepSeconds(64, 64000), 7.1263e-3, 0.0005e-3);
  EXPECT_NEAR(c.StepSeconds(2048, 0), 34.241e-3, 0.002e-3);
  // Batch 1 decode is memory-bound: about the time to read the weights once.
  EXPECT_NEAR(c.StepSeconds(1, 1000), 1e-3 + 2.9963e-3 + 1000 * 48.907e-9, 0.0002e-3);
}

// fp8 weights only speed compute on GPUs with fp8 tensor cores (Hopper, Ada, Blackwell); on an
// A100 they are dequantised to bf16 (weight-only), so compute runs at the bf16 peak.
TEST(PlanCostTest, Fp8PeakOnlyWithFp8TensorCores) {
  EXPECT_DOUBLE_EQ(PeakFlops(*FindGpuSpec("h100-sxm"), DType::kFp8), 1978.9e12);
  EXPECT_DOUBLE_EQ(PeakFlops(*FindGpuSpec("h100-sxm"), DType::kBf16), 989.4e12);
  EXPECT_DOUBLE_EQ(PeakFlops(*FindGpuSpec("l40s"), DType::kFp8), 733e12);
  EXPECT_DOUBLE_EQ(PeakFlops(*FindGpuSpec("a100-sxm-80gb"), DType::kFp8), 312e12);
  EXPECT_DOUBLE_EQ(PeakFlops(*FindGpuSpec("h100-sxm"), DType::kInt4), 989.4e12);
  const ModelShape& m = FindModelPreset("llama-3.1-8b")->shape;
  CostModel a100 = DeriveCostModel(m, DType::kFp8, 131072, 1, *FindGpuSpec("a100-sxm-80gb"));
  EXPECT_NEAR(a100.token_s, 2 * 8.03e9 / (312e12 * 0.5), 1e-12);  // 102.95 us
}

// Mixtral 8x7B (46.7B stored, 12.9B active, 8 experts, 2 per token), bf16, tp 2, H100 SXM:
//   one expert = (46.7 - 12.9) / (8 - 2) = 5.6333B; shared = 12.9 - 2 x 5.6333 = 1.6333B
//   weights_s        1.6333e9 x 2 B / 2 / 2.68e12 = 0.60945 ms
//   expert_weights_s 8 x 5.6333e9 x 2 B / 2 / 2.68e12 = 16.816 ms
//   1 token reads 1 - 0.75 = 25% of the experts: 0.60945 + 4.2040 = 4.8134 ms (= the 12.9B
//   active parameters); 4 tokens 1 - 0.75^4 = 68.36%: 12.105 ms; 64 tokens all: 17.425 ms (the
//   46.7B stored ones)
//   token_s = 2 x 12.9e9 / (2 x 989.4e12 x 0.5) = 26.077 us (active parameters)
TEST(PlanCostTest, MoeReadsTheExpertsItsTokensTouch) {
  const ModelShape& m = FindModelPreset("mixtral-8x7b")->shape;
  CostModel c = DeriveCostModel(m, DType::kBf16, 65536, 2, *FindGpuSpec("h100-sxm"));
  EXPECT_EQ(c.experts, 8);
  EXPECT_EQ(c.experts_per_token, 2);
  EXPECT_NEAR(c.token_s, 26.077e-6, 0.001e-6);
  EXPECT_NEAR(c.weights_s, 0.60945e-3, 0.0001e-3);
  EXPECT_NEAR(c.expert_weights_s, 16.816e-3, 0.001e-3);
  EXPECT_NEAR(c.MemorySeconds(1, 0), 12.9e9 * 2 / 2 / 2.68e12, 1e-9);
  EXPECT_NEAR(c.MemorySeconds(4, 0), 12.105e-3, 0.001e-3);
  EXPECT_NEAR(c.MemorySeconds(64, 0), 46.7e9 * 2 / 2 / 2.68e12, 1e-9);
  EXPECT_DOUBLE_EQ(ExpertsTouchedFraction(0, 8, 2), 0);
  EXPECT_DOUBLE_EQ(ExpertsTouchedFraction(2, 8, 2), 1 - 0.75 * 0.75);
  EXPECT_DOUBLE_EQ(ExpertsTouchedFraction(3, 0, 0), 0);  // dense
  // A dense model with the same active parameters reads those and nothing else.
  ModelShape dense = m;
  dense.params = dense.active_params;
  dense.experts = dense.experts_per_token = 0;
  CostModel d = DeriveCostModel(dense, DType::kBf16, 65536, 2, *FindGpuSpec("h100-sxm"));
  EXPECT_NEAR(d.MemorySeconds(64, 0), c.MemorySeconds(1, 0), 1e-12);
}

TEST(PlanCostTest, GpuTableByPciDeviceId) {
  struct Case {
    uint16_t id;
    const char* name;
  } cases[] = {{0x2330, "h100-sxm"},
               {0x2331, "h100-pcie"},
               {0x2321, "h100-nvl"},
               {0x2335, "h200"},
               {0x20b2, "a100-sxm-80gb"},
               {0x20b0, "a100-sxm-40gb"},
               {0x20b5, "a100-pcie-80gb"},
               {0x20f1, "a100-pcie-40gb"},
               {0x26b5, "l40"},
               {0x26b9, "l40s"},
               {0x27b8, "l4"},
               {0x2236, "a10"},
               {0x2684, "rtx-4090"},
               {0x2204, "rtx-3090"}};
  for (const auto& c : cases) {
    const GpuSpec* g = FindGpuSpecByPciDeviceId(c.id);
    ASSERT_NE(g, nullptr) << std::hex << c.id;
    EXPECT_EQ(g->name, c.name);
  }
  EXPECT_EQ(FindGpuSpecByPciDeviceId(0x1234), nullptr);
  // The figures that substring matching used to get wrong.
  EXPECT_DOUBLE_EQ(FindGpuSpecByPciDeviceId(0x26b5)->hbm_bytes_per_s, 0.864e12);  // L40, not L4
  EXPECT_DOUBLE_EQ(FindGpuSpecByPciDeviceId(0x2331)->dense_bf16_flops, 756e12);
  EXPECT_DOUBLE_EQ(FindGpuSpecByPciDeviceId(0x20f1)->hbm_bytes_per_s, 1.555e12);
}

TEST(PlanCostTest, GpuTableByExactNameOnly) {
  EXPECT_EQ(FindGpuSpec("NVIDIA L40")->name, "l40");
  EXPECT_EQ(FindGpuSpec("nvidia l4")->name, "l4");
  EXPECT_EQ(FindGpuSpec("NVIDIA H100 PCIe")->name, "h100-pcie");
  EXPECT_EQ(FindGpuSpec("NVIDIA H100 80GB HBM3")->name, "h100-sxm");
  EXPECT_EQ(FindGpuSpec("NVIDIA A100-PCIE-40GB")->name, "a100-pcie-40gb");
  EXPECT_EQ(FindGpuSpec("A100 80GB PCIe")->name, "a100-pcie-80gb");
  EXPECT_EQ(FindGpuSpec("h100")->name, "h100-sxm");  // alias
  EXPECT_EQ(FindGpuSpec("L40S")->name, "l40s");
  EXPECT_EQ(FindGpuSpec("NVIDIA H100 80GB HBM3 (engineering sample)"), nullptr);
  EXPECT_EQ(FindGpuSpec("NVIDIA GeForce RTX 5090"), nullptr);
  EXPECT_EQ(FindGpuSpec("H1"), nullptr);
}

TEST(PlanCostTest, EveryRowCitesItsSourceAndIdsAreUnique) {
  std::set<uint16_t> ids;
  std::set<std::string> names;
  for (const auto& g : GpuSpecs()) {
    SCOPED_TRACE(std::string(g.name));
    EXPECT_NE(g.source.find("https://"), std::string_view::npos);
    EXPECT_GT(g.dense_bf16_flops, 0);
    EXPECT_GT(g.hbm_bytes_per_s, 0);
    EXPECT_TRUE(g.dense_fp8_flops == 0 || g.dense_fp8_flops > g.dense_bf16_flops);
    EXPECT_TRUE(names.insert(std::string(g.name)).second);
    for (uint16_t id : g.pci_device_ids) EXPECT_TRUE(ids.insert(id).second) << std::hex << id;
  }
}

// One slot, 10 steps of 10 ms per request: the server completes 10 requests/s.
SimConfig OneSlot() {
  SimConfig c;
  c.cost.overhead_s = 0.01;
  c.kv_bytes_per_token = 1000;
  c.kv_capacity_tokens = 1'000'000;
  c.batch_size = 1;
  c.max_wait_s = 0;
  c.max_context = 100'000;
  c.max_seqs = 1;
  return c;
}

std::vector<Request> Poisson(double rate, uint64_t n) {
  return GenerateTrace(TraceSpec{rate, n, 3, {1, 1}, {10, 10}});
}

TEST(PlanCostTest, BelowCapacityIsStable) {
  for (double rate : {5.0, 9.0}) {
    for (const auto& r : {SimulateStatic(Poisson(rate, 5000), OneSlot()),
                          SimulateContinuous(Poisson(rate, 5000), OneSlot())}) {
      SCOPED_TRACE(r.policy + " at " + std::to_string(rate));
      EXPECT_TRUE(r.stable);
      EXPECT_LT(r.overload_factor, kOverloadFactor);
      EXPECT_NEAR(r.arrival_rate_per_s, rate, 0.05 * rate);
    }
  }
}

TEST(PlanCostTest, AboveCapacityIsUnstableWithTheFactor) {
  for (double rate : {11.0, 20.0}) {
    for (const auto& r : {SimulateStatic(Poisson(rate, 5000), OneSlot()),
                          SimulateContinuous(Poisson(rate, 5000), OneSlot())}) {
      SCOPED_TRACE(r.policy + " at " + std::to_string(rate));
      EXPECT_FALSE(r.stable);
      // Capacity is exactly 10 requests/s: the factor is the arrival rate over 10.
      EXPECT_NEAR(r.overload_factor, r.arrival_rate_per_s / 10, 0.01);
      EXPECT_NEAR(r.overload_factor, rate / 10, 0.05 * rate / 10);
      EXPECT_GT(r.in_system_at_last_arrival, 5000 * (1 - 10 / rate) / 2);
    }
  }
  // A bounded queue keeps the backlog small, but rejecting arrivals is overload too.
  SimConfig c = OneSlot();
  c.max_queue = 5;
  PolicyResult r = SimulateContinuous(Poisson(20, 2000), c);
  EXPECT_GT(r.rejected_queue_full, 0u);
  EXPECT_FALSE(r.stable);
  EXPECT_NEAR(r.overload_factor, 2.0, 0.1);
}

TEST(PlanCostTest, AllRejectedSaysWhy) {
  SimConfig c = OneSlot();
  c.kv_capacity_tokens = 5;  // no request of 11 tokens fits anywhere
  c.max_context = 20;
  std::vector<Request> trace = {{0, 1, 10}, {1, 1, 10}};
  PolicyResult s = SimulateStatic(trace, c), k = SimulateContinuous(trace, c);
  EXPECT_EQ(s.completed, 0u);
  EXPECT_EQ(k.rejected_too_long, 2u);
  EXPECT_EQ(AllRejectedReason(s, c),
            "all 2 requests rejected: the KV cache (5 tokens) holds no static slot of 20 tokens "
            "(--max-context)");
  EXPECT_EQ(AllRejectedReason(k, c),
            "all 2 requests rejected: 2 requests need more KV than the whole cache (5 tokens)");
}

// Little's law, L = lambda W, on the run: the time-average number in the system (swept over
// arrivals and completions) equals the completion rate times the mean latency; and, for an
// M/D/1 queue at rho = 0.5 with D = 0.1 s, both match theory: W = D + rho D / (2 (1 - rho))
// = 0.15 s, L = 5 x 0.15 = 0.75.
TEST(PlanCostTest, LittlesLaw) {
  for (const auto& r : {SimulateStatic(Poisson(5, 100000), OneSlot()),
                        SimulateContinuous(Poisson(5, 100000), OneSlot())}) {
    SCOPED_TRACE(r.policy);
    EXPECT_NEAR(r.mean_in_system, r.completion_rate_per_s * r.mean_latency_s,
                1e-9 * r.mean_in_system);
    EXPECT_NEAR(r.mean_latency_s, 0.15, 0.15 * 0.02);
    EXPECT_NEAR(r.mean_in_system, 0.75, 0.75 * 0.03);
  }
}

}  // namespace
}  // namespace gpudoctor::plan
