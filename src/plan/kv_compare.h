// `gpudoctor plan kv --compare`: the KV memory one sequence takes before and after each lever
// that shrinks it, applied one on top of the other, so an operator sees which combination fits
// prompts twice as long in a third of the memory.
//
// Levers, in this order (all bytes per GPU of the tensor-parallel group; docs/plan.md):
//   baseline   fp16 KV, 16-bit weights, contiguous allocation: every sequence reserves
//              max_context tokens up front (what servers did before paging)
//   paged      blocks of block_tokens: a sequence of c tokens holds ceil(c / block) blocks
//   KV 8-bit   --kv-dtype when it is 8-bit, else fp8: half the bytes per token
//   prefix     a fraction f of every sequence is a prefix shared with others (earlier turns of a
//              conversation, a system prompt) and held once: only whole blocks are shared, so a
//              sequence holds ceil((c - floor(f c / block) x block) / block) blocks of its own.
//              The shared blocks are counted once for many sequences, i.e. as zero per sequence
//              (an upper bound on the saving). Skipped when f = 0.
//   weights    --dtype when it is below 16 bits, else fp8: the KV per sequence does not change,
//              the KV budget grows by the weight bytes saved, so more sequences fit.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "plan/kv_planner.h"

namespace gpudoctor::plan {

struct KvLeverStep {
  std::string lever;                 // "baseline: fp16 KV, bf16 weights, contiguous", ...
  double kv_bytes_per_sequence = 0;  // per GPU, reserved by one sequence at the mean context
  double fraction_of_baseline = 0;   // kv_bytes_per_sequence / the baseline's
  double kv_budget_bytes_per_gpu = 0;
  uint64_t sequences = 0;  // that fit in the budget at the mean context
  // With every context doubled: KV per sequence over the baseline's at the original lengths.
  double doubled_fraction_of_baseline = 0;
};

// A combination reaches the guide's "a third of the memory for prompts twice as long" when its
// doubled_fraction_of_baseline is at most this.
inline constexpr double kThirdOfTheMemory = 1.0 / 3;

struct KvComparison {
  double mean_context_tokens = 0;
  uint32_t max_context_tokens = 0;
  double prefix_share = 0;                // fraction of each sequence shared, [0, 1)
  double contiguous_useful_fraction = 0;  // mean context / max context: tokens in reserved slots
  std::vector<KvLeverStep> steps;         // baseline first; each later step adds one lever
  // The first step whose doubled_fraction_of_baseline is at most kThirdOfTheMemory, -1 if none.
  int first_step_within_a_third = -1;
  // Every lever on, every context doubled (the prompts twice as long of the guide).
  double doubled_kv_bytes_per_sequence = 0;
  double doubled_fraction_of_baseline = 0;  // of the baseline at the original lengths
  uint64_t doubled_sequences = 0;
};

// Errors: those of PlanKv for the baseline; prefix_share outside [0, 1).
Result<KvComparison> CompareKvLevers(const KvPlanInput& in, double prefix_share);

// Blocks of its own that a sequence of `tokens` holds when a fraction `share` of it is a shared
// prefix (whole blocks only).
uint64_t UnsharedBlocks(uint32_t tokens, double share, uint32_t block_tokens);

}  // namespace gpudoctor::plan
