// The batching simulator against closed-form cases (one request, an M/D/1 queue, work with a
// token-only cost) and its invariants on generated traces.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "plan/batch_sim.h"
#include "plan/batching_plan.h"

namespace gpudoctor::plan {
namespace {

SimConfig Config(double fixed_s, double token_s, double kv_token_s) {
  SimConfig c;
  c.cost = {fixed_s, token_s, kv_token_s};
  c.kv_bytes_per_token = 1000;
  c.kv_capacity_tokens = 1'000'000;
  c.batch_size = 1;
  c.max_wait_s = 0;
  c.max_context = 100'000;
  return c;
}

TEST(PlanSimTest, OneRequestClosedForm) {
  const double a = 0.005, b = 1.05e-5, k = 1e-7;
  std::vector<Request> trace = {{2.0, 100, 10}};
  // Roofline: step = a + max(b x tokens, k x cached tokens read). Prefill of 100 tokens gives the
  // first token: a + 100 b. Then 9 decode steps; step j reads 100 + (j - 1) cached tokens:
  // compute-bound (b > k (99 + j)) for j = 1..5, memory-bound for j = 6..9:
  // 9 a + 5 b + k (105 + 106 + 107 + 108) = 9 a + 5 b + 426 k.
  double ttft = a + 100 * b;
  double latency = ttft + 9 * a + 5 * b + 426 * k;
  for (const auto& r :
       {SimulateStatic(trace, Config(a, b, k)), SimulateContinuous(trace, Config(a, b, k))}) {
    SCOPED_TRACE(r.policy);
    ASSERT_EQ(r.completed, 1u);
    EXPECT_NEAR(r.outcomes[0].ttft_s, ttft, 1e-12);
    EXPECT_NEAR(r.outcomes[0].latency_s, latency, 1e-12);
    EXPECT_NEAR(r.p99_latency_s, latency, 1e-12);
    EXPECT_DOUBLE_EQ(r.outcomes[0].queue_s, 0);
    EXPECT_NEAR(r.span_s, latency, 1e-12);
    EXPECT_NEAR(r.gpu_busy_fraction, 1.0, 1e-9);  // busy from arrival to the last token
    EXPECT_EQ(r.output_tokens, 10u);
    EXPECT_NEAR(r.throughput_tokens_per_s, 10 / latency, 1e-9);
  }
}

TEST(PlanSimTest, StaticBatchWaitsForTheLongestAndPadsFinishedRows) {
  SimConfig c = Config(0.01, 0, 0);
  c.batch_size = 2;
  c.max_wait_s = 1;
  std::vector<Request> trace = {{0, 10, 2}, {0.5, 10, 10}};
  PolicyResult r = SimulateStatic(trace, c);
  // The batch starts when the second request arrives (0.5 s); 1 prefill + 9 decode steps of
  // 10 ms: both answers at 0.6 s. Row 1 is useful for 1 of the 9 decode steps.
  EXPECT_NEAR(r.outcomes[0].latency_s, 0.6, 1e-12);
  EXPECT_NEAR(r.outcomes[1].latency_s, 0.1, 1e-12);
  EXPECT_NEAR(r.outcomes[0].queue_s, 0.5, 1e-12);
  EXPECT_NEAR(r.active_s, 0.1, 1e-12);
  // Useful: prefill 0.01 + step 1 fully (0.01) + 8 steps half (8 x 0.005) = 0.06 s.
  EXPECT_NEAR(r.busy_s, 0.06, 1e-12);
  // Contiguous slots: 2 x max_context x 1000 B.
  EXPECT_EQ(r.kv_peak_bytes, 2u * 100'000 * 1000);
}

// Where static batching loses GPU time, by hand: 10 ms per step whatever it holds, batches of 2
// waiting up to 1 s. Requests (arrival s, prompt, output): (0, 10, 2), (0.5, 6, 10), (2, 10, 1).
// Batch 1 starts at 0.5 s (0.5 s of fill wait). Prefill pads 6 to 10: 16 of 20 rows are real,
// 8 ms useful, 2 ms padding. Decode steps 1..9: step 1 both rows, steps 2..9 row 0 is done
// (held): 8 x 5 ms useful, 8 x 5 ms head-of-line. Done at 0.6 s, idle until 2 s; request 3 waits
// its full max wait (fill 1 s), prefill 10 ms, done at 3.01 s.
TEST(PlanSimTest, StaticLossesAddUpByHand) {
  SimConfig c = Config(0.01, 0, 0);
  c.batch_size = 2;
  c.max_wait_s = 1;
  std::vector<Request> trace = {{0, 10, 2}, {0.5, 6, 10}, {2, 10, 1}};
  PolicyResult r = SimulateStatic(trace, c);
  ASSERT_EQ(r.completed, 3u);
  EXPECT_NEAR(r.span_s, 3.01, 1e-12);
  EXPECT_NEAR(r.busy_s, 0.008 + 0.01 + 0.04 + 0.01, 1e-12);
  EXPECT_NEAR(r.padding_s, 0.002, 1e-12);
  EXPECT_NEAR(r.head_of_line_s, 0.04, 1e-12);
  EXPECT_NEAR(r.fill_wait_s, 1.5, 1e-12);
  EXPECT_NEAR(r.idle_s, 1.4, 1e-12);
  EXPECT_NEAR(r.gpu_busy_fraction, 0.068 / 3.01, 1e-12);
  EXPECT_NEAR(r.padding_fraction, 0.002 / 3.01, 1e-12);
  EXPECT_NEAR(r.head_of_line_fraction, 0.04 / 3.01, 1e-12);
  EXPECT_NEAR(r.fill_wait_fraction, 1.5 / 3.01, 1e-12);
  EXPECT_NEAR(r.idle_fraction, 1.4 / 3.01, 1e-12);
  EXPECT_NEAR(r.gpu_busy_fraction + r.padding_fraction + r.head_of_line_fraction +
                  r.fill_wait_fraction + r.idle_fraction,
              1.0, 1e-12);
  // Active = useful + padding + head-of-line.
  EXPECT_NEAR(r.active_s, r.busy_s + r.padding_s + r.head_of_line_s, 1e-12);

  // Continuous on the same trace: each request alone. Request 1: 2 steps (0 .. 0.02 s); idle
  // until 0.5 s; request 2: 10 steps (to 0.6 s); idle until 2 s; request 3: 1 step (2.01 s).
  PolicyResult k = SimulateContinuous(trace, c);
  ASSERT_EQ(k.completed, 3u);
  EXPECT_NEAR(k.span_s, 2.01, 1e-12);
  EXPECT_NEAR(k.busy_s, 0.13, 1e-12);
  EXPECT_NEAR(k.idle_s, 0.48 + 1.4, 1e-12);
  EXPECT_DOUBLE_EQ(k.fill_wait_s + k.padding_s + k.head_of_line_s, 0);
  EXPECT_NEAR(k.gpu_busy_fraction + k.idle_fraction, 1.0, 1e-12);
}

// The shares add up to the span on a generated trace, for both policies, under light load and
// under overload.
TEST(PlanSimTest, GpuTimeSharesAddUpToOne) {
  for (double rate : {0.5, 20.0}) {
    TraceSpec spec{rate, 400, 3, {64, 512}, {1, 300}};
    auto trace = GenerateTrace(spec);
    SimConfig c = Config(0.004, 2e-5, 1e-8);
    c.batch_size = 8;
    c.max_wait_s = 0.5;
    c.max_context = 1024;
    c.max_seqs = 16;
    for (const auto& r : {SimulateStatic(trace, c), SimulateContinuous(trace, c)}) {
      SCOPED_TRACE(r.policy + " at " + std::to_string(rate));
      EXPECT_NEAR(r.busy_s + r.padding_s + r.head_of_line_s + r.fill_wait_s + r.idle_s, r.span_s,
                  1e-9 * r.span_s);
      EXPECT_NEAR(r.gpu_busy_fraction + r.padding_fraction + r.head_of_line_fraction +
                      r.fill_wait_fraction + r.idle_fraction,
                  1.0, 1e-9);
      EXPECT_NEAR(r.active_s, r.busy_s + r.padding_s + r.head_of_line_s, 1e-9 * r.span_s);
    }
  }
}

// Prefix cache, by hand: step = a + b x tokens. A 100-token prompt with half of it cached in
// 16-token blocks skips floor(50 / 16) = 3 blocks = 48 tokens: the prefill computes 52 tokens.
TEST(PlanSimTest, PrefixCacheHitSkipsCachedWholeBlocks) {
  const double a = 0.001, b = 0.0001;
  SimConfig c = Config(a, b, 0);
  c.prefix_cache_hit = 0.5;
  std::vector<Request> trace = {{0, 100, 3}};
  PolicyResult r = SimulateContinuous(trace, c);
  ASSERT_EQ(r.completed, 1u);
  EXPECT_NEAR(r.outcomes[0].ttft_s, a + 52 * b, 1e-12);
  EXPECT_NEAR(r.outcomes[0].latency_s, 3 * a + 54 * b, 1e-12);  // + 2 decode steps of 1 token
  EXPECT_NEAR(r.prefill_s, a + 52 * b, 1e-12);
  EXPECT_NEAR(r.prefill_fraction, (a + 52 * b) / (3 * a + 54 * b), 1e-12);
  // Without the cache: all 100 tokens.
  PolicyResult plain = SimulateContinuous(trace, Config(a, b, 0));
  EXPECT_NEAR(plain.outcomes[0].ttft_s, a + 100 * b, 1e-12);
}

// Chunked prefill, by hand: step = a + b x tokens, 40 tokens per iteration, decodes first.
// A (prompt 10, output 5) and B (prompt 100, output 2) arrive together.
//   it 1: A's 10 + B's first 30 prompt tokens (a + 40 b): A's first token.
//   it 2: A decodes, B 39 more (a + 40 b).   it 3: A decodes, B's last 31 (a + 32 b): B's first.
//   it 4: A and B decode (a + 2 b): B done.   it 5: A decodes (a + b): A done.
// Unchunked, both prompts go in one 110-token iteration: A waits for B's prompt.
TEST(PlanSimTest, ChunkedPrefillSplitsLongPromptsAcrossIterations) {
  const double a = 0.001, b = 0.0001;
  SimConfig c = Config(a, b, 0);
  c.chunked_prefill_tokens = 40;
  std::vector<Request> trace = {{0, 10, 5}, {0, 100, 2}};
  PolicyResult r = SimulateContinuous(trace, c);
  ASSERT_EQ(r.completed, 2u);
  EXPECT_NEAR(r.outcomes[0].ttft_s, a + 40 * b, 1e-12);
  EXPECT_NEAR(r.outcomes[1].ttft_s, 3 * a + 112 * b, 1e-12);
  EXPECT_NEAR(r.outcomes[1].latency_s, 4 * a + 114 * b, 1e-12);
  EXPECT_NEAR(r.outcomes[0].latency_s, 5 * a + 115 * b, 1e-12);
  EXPECT_NEAR(r.prefill_s, (a + 40 * b) + (a + 40 * b) * 39 / 40 + (a + 32 * b) * 31 / 32, 1e-12);

  PolicyResult whole = SimulateContinuous(trace, Config(a, b, 0));
  EXPECT_NEAR(whole.outcomes[0].ttft_s, a + 110 * b, 1e-12);
  EXPECT_NEAR(whole.outcomes[1].ttft_s, a + 110 * b, 1e-12);
}

// PlanBatching runs continuous batching again with the prefill levers: a 40% prefix cache hit
// cuts the prefill share of GPU time by about 40% and time to first token with it.
TEST(PlanSimTest, PrefillLeversBeforeAndAfter) {
  BatchingInput in;
  in.kv.model = FindModelPreset("llama-3-8b")->shape;
  in.kv.gpu_mem_bytes = 80ull << 30;
  in.gpu = *FindGpuSpec("h100");
  in.prefix_cache_hit = 0.4;
  TraceSpec spec{2, 2000, 1, *ParseLengthRange("1024:8192"), *ParseLengthRange("exp:256:2048")};
  auto plan = PlanBatching(in, GenerateTrace(spec), /*explore_knobs=*/false);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_TRUE(plan->continuous_prefill_result.has_value());
  const PolicyResult& before = plan->continuous_result;
  const PolicyResult& after = *plan->continuous_prefill_result;
  EXPECT_NEAR(after.prefill_fraction / before.prefill_fraction, 0.6, 0.03);
  EXPECT_LT(after.p50_ttft_s, 0.65 * before.p50_ttft_s);
  EXPECT_NEAR(after.throughput_tokens_per_s, before.throughput_tokens_per_s,
              0.01 * before.throughput_tokens_per_s);

  in.prefix_cache_hit = 1;
  EXPECT_FALSE(PlanBatching(in, GenerateTrace(spec), false).ok());
  in.prefix_cache_hit = 0;
  auto none = PlanBatching(in, GenerateTrace(spec), false);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->continuous_prefill_result.has_value());
}

// Poisson arrivals, deterministic service D, one server: the mean wait in queue is
// rho D / (2 (1 - rho)) (Pollaczek-Khinchine). Here D = 10 steps x 10 ms = 0.1 s at 5 req/s:
// rho = 0.5, W_q = 0.5 x 0.1 / (2 x 0.5) = 0.05 s.
TEST(PlanSimTest, OneSlotIsAnMD1Queue) {
  TraceSpec spec{5, 200000, 7, {1, 1}, {10, 10}};
  auto trace = GenerateTrace(spec);
  SimConfig c = Config(0.01, 0, 0);
  c.max_seqs = 1;
  for (const auto& r : {SimulateStatic(trace, c), SimulateContinuous(trace, c)}) {
    SCOPED_TRACE(r.policy);
    EXPECT_EQ(r.completed, trace.size());
    EXPECT_NEAR(r.mean_queue_s, 0.05, 0.05 * 0.05);
    EXPECT_NEAR(r.gpu_busy_fraction, 0.5, 0.01);
  }
}

std::vector<Request> Busy(uint64_t seed, uint64_t n = 3000) {
  TraceSpec spec;
  spec.rate_per_s = 20;
  spec.requests = n;
  spec.seed = seed;
  spec.prompt = {64, 1024};
  spec.output = *ParseLengthRange("exp:128:1024");
  return GenerateTrace(spec);
}

// Llama-3-8B-like costs; a small KV cache (12000 tokens) so that continuous batching preempts.
SimConfig Tight() {
  SimConfig c = Config(0.007, 3.2e-5, 4.9e-8);
  c.kv_bytes_per_token = 131072;
  c.kv_capacity_tokens = 12000;
  c.batch_size = 16;
  c.max_wait_s = 0.2;
  c.max_context = 2048;
  c.max_seqs = 128;
  return c;
}

TEST(PlanSimTest, InvariantsOnAGeneratedTrace) {
  auto trace = Busy(11);
  SimConfig c = Tight();
  for (const auto& r : {SimulateStatic(trace, c), SimulateContinuous(trace, c)}) {
    SCOPED_TRACE(r.policy);
    EXPECT_EQ(r.completed + r.rejected, trace.size());
    EXPECT_EQ(r.rejected, 0u);
    EXPECT_LE(r.busy_s, r.active_s + 1e-9);
    EXPECT_LE(r.active_s, r.span_s + 1e-9);
    EXPECT_LE(r.kv_peak_bytes, r.kv_capacity_bytes);
    EXPECT_GT(r.kv_peak_bytes, 0u);
    uint64_t out = 0;
    for (size_t i = 0; i < trace.size(); ++i) {
      const RequestOutcome& o = r.outcomes[i];
      ASSERT_TRUE(o.served);
      out += trace[i].output_tokens;
      // Alone on the GPU: prefill, then output - 1 decode steps (without their KV reads).
      double alone = c.cost.StepSeconds(trace[i].prompt_tokens, 0) +
                     (trace[i].output_tokens - 1) * c.cost.StepSeconds(1, 0);
      ASSERT_GE(o.latency_s, alone - 1e-9) << i;
      ASSERT_LE(o.ttft_s, o.latency_s) << i;
      ASSERT_GE(o.queue_s, 0) << i;
      ASSERT_LE(o.queue_s, o.ttft_s) << i;
    }
    EXPECT_EQ(r.output_tokens, out);
    EXPECT_LE(r.p50_latency_s, r.p99_latency_s);
  }
  EXPECT_GT(SimulateContinuous(trace, c).preemptions, 0u);  // the cache is tight on purpose
}

// With a cost of token_s per token and nothing else, the useful work is the same whatever the
// policy: token_s x (every prompt token + every output token but the first, which the prefill
// yields).
TEST(PlanSimTest, WorkIsConserved) {
  auto trace = Busy(5, 2000);
  SimConfig c = Tight();
  c.cost = {0, 1e-4, 0};
  c.kv_capacity_tokens = 10'000'000;  // no preemption: recompute would add work
  double work = 0;
  for (const auto& q : trace) work += 1e-4 * (q.prompt_tokens + q.output_tokens - 1);
  PolicyResult s = SimulateStatic(trace, c);
  PolicyResult k = SimulateContinuous(trace, c);
  EXPECT_EQ(k.preemptions, 0u);
  EXPECT_NEAR(s.busy_s, work, work * 1e-9);
  EXPECT_NEAR(k.busy_s, work, work * 1e-9);
  EXPECT_GT(s.active_s, s.busy_s);  // the padding rows
}

TEST(PlanSimTest, SameSeedSameResult) {
  SimConfig c = Tight();
  PolicyResult a = SimulateContinuous(Busy(3), c), b = SimulateContinuous(Busy(3), c);
  EXPECT_EQ(a.p99_latency_s, b.p99_latency_s);
  EXPECT_EQ(a.busy_s, b.busy_s);
  EXPECT_EQ(a.preemptions, b.preemptions);
  EXPECT_EQ(a.kv_peak_bytes, b.kv_peak_bytes);
  for (size_t i = 0; i < a.outcomes.size(); ++i) {
    ASSERT_EQ(a.outcomes[i].latency_s, b.outcomes[i].latency_s);
  }
  EXPECT_NE(SimulateContinuous(Busy(4), c).p99_latency_s, a.p99_latency_s);
}

TEST(PlanSimTest, RequestsThatCanNeverFitAreRejected) {
  SimConfig c = Tight();
  c.max_context = 1000;
  c.kv_capacity_tokens = 800;
  std::vector<Request> trace = {{0, 100, 100}, {0.1, 700, 200}, {0.2, 100, 50}};
  PolicyResult s = SimulateStatic(trace, c);  // 800 / 1000: not one contiguous slot
  EXPECT_EQ(s.rejected, 3u);
  EXPECT_EQ(s.batch_slots, 0u);
  PolicyResult k = SimulateContinuous(trace, c);  // 900 tokens need 57 blocks of 50 available
  EXPECT_EQ(k.rejected, 1u);
  EXPECT_EQ(k.completed, 2u);
  EXPECT_FALSE(k.outcomes[1].served);
}

TEST(PlanSimTest, QueueLimitRejects) {
  SimConfig c = Config(0.01, 0, 0);
  c.max_queue = 2;
  c.max_seqs = 1;
  std::vector<Request> trace;
  for (int i = 0; i < 10; ++i) trace.push_back({0, 1, 100});  // ten at once, 1 s each
  PolicyResult k = SimulateContinuous(trace, c);
  // The first is admitted when the GPU looks; arrivals are queued first, so 2 wait, 8 go.
  EXPECT_EQ(k.rejected, 8u);
  EXPECT_EQ(k.completed, 2u);
  EXPECT_EQ(k.max_queue_len, 2u);
}

// Idle to death, on llama-3-8b / H100 numbers (docs/plan.md): a static server that waits up to
// 5 s for 16 requests at 0.6 requests/s is 30% usefully busy and continuous batching 68%, but
// both serve the same tokens/s: static loses its GPU time to waiting for the batch to fill (36%)
// and to finished rows held (29%), not to padding (1%); continuous spends more GPU time on the
// same tokens (smaller batches read the weights more often). Its gain here is latency.
TEST(PlanSimTest, IdleToDeathSameTokensContinuousGainsLatency) {
  BatchingInput in;
  in.kv.model = FindModelPreset("llama-3-8b")->shape;
  in.kv.gpu_mem_bytes = 80ull << 30;
  in.gpu = *FindGpuSpec("h100");
  in.batch_size = 16;
  in.max_wait_s = 5;
  TraceSpec spec{0.6, 5000, 1, *ParseLengthRange("256:2048"), *ParseLengthRange("exp:256:2048")};
  auto plan = PlanBatching(in, GenerateTrace(spec), /*explore_knobs=*/true);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const PolicyResult& s = plan->static_result;
  const PolicyResult& c = plan->continuous_result;
  EXPECT_NEAR(s.gpu_busy_fraction, 0.30, 0.02);
  EXPECT_NEAR(s.fill_wait_fraction, 0.36, 0.02);
  EXPECT_NEAR(s.head_of_line_fraction, 0.29, 0.02);
  EXPECT_LT(s.padding_fraction, 0.02);
  EXPECT_NEAR(c.gpu_busy_fraction, 0.68, 0.02);
  EXPECT_NEAR(s.throughput_tokens_per_s, c.throughput_tokens_per_s,
              0.02 * c.throughput_tokens_per_s);
  EXPECT_TRUE(s.stable);
  EXPECT_TRUE(c.stable);
  EXPECT_LT(c.p50_ttft_s, 0.05 * s.p50_ttft_s);
  EXPECT_LT(c.p99_latency_s, 0.6 * s.p99_latency_s);
  EXPECT_EQ(plan->knobs.size(), 4u);
  EXPECT_FALSE(plan->most_important_knob.empty());
}

// Busy to death, the guide's 30% -> 70%+ with the same traffic offered: llama-2-7b (MHA, 512 KiB
// of KV per token) on an H100, 16-request batches, 1,024-4,096-token prompts, 0.9 requests/s.
// Static keeps the GPU 99.5% active but only 32% useful (64% finished rows held), cannot keep up
// and is unstable; continuous serves every token offered, 83% busy.
TEST(PlanSimTest, BusyToDeathStaticCannotServeWhatContinuousDoes) {
  BatchingInput in;
  in.kv.model = FindModelPreset("llama-2-7b")->shape;
  in.kv.gpu_mem_bytes = 80ull << 30;
  in.gpu = *FindGpuSpec("h100");
  in.batch_size = 16;
  in.max_wait_s = 5;
  TraceSpec spec{0.9, 2000, 1, *ParseLengthRange("1024:4096"), *ParseLengthRange("exp:256:2048")};
  auto plan = PlanBatching(in, GenerateTrace(spec), /*explore_knobs=*/false);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const PolicyResult& s = plan->static_result;
  const PolicyResult& c = plan->continuous_result;
  EXPECT_GT(s.gpu_active_fraction, 0.98);
  EXPECT_NEAR(s.gpu_busy_fraction, 0.32, 0.02);
  EXPECT_GT(s.head_of_line_fraction, 0.6);
  EXPECT_LT(s.fill_wait_fraction + s.idle_fraction, 0.01);
  EXPECT_FALSE(s.stable);
  EXPECT_TRUE(c.stable);
  EXPECT_NEAR(c.gpu_busy_fraction, 0.83, 0.03);
  EXPECT_GT(c.throughput_tokens_per_s, 1.05 * s.throughput_tokens_per_s);
}

}  // namespace
}  // namespace gpudoctor::plan
