// KV-cache planner (`gpudoctor plan kv`): how many sequences fit on one GPU of a tensor-parallel
// group once weights and the memory vLLM keeps for itself are subtracted, with paged blocks
// against contiguous per-request pre-allocation.
//
// Arithmetic (all bytes, per GPU unless named otherwise; docs/plan.md):
//   kv_bytes_per_token        = 2 (K and V) x layers x kv_heads x head_dim x kv_dtype_bytes
//   kv_bytes_per_token_per_gpu = same with ceil(kv_heads / tp) heads (heads replicate past tp)
//   weights_bytes_per_gpu     = params x weight_dtype_bytes / tp
//   reserve (vLLM's accounting, the default; plan/memory_reserve.h):
//               gpu_mem x (1 - memory_fraction) + activation peak + non-torch
//   reserve (flat, --reserve): reserve_bytes, or gpu_mem x reserve_fraction
//   kv_budget_bytes           = gpu_mem - weights_per_gpu - reserve
//   paged_blocks              = floor(kv_budget / (block_tokens x kv_bytes_per_token_per_gpu))
//   kv_capacity_tokens        = paged_blocks x block_tokens (vLLM's "GPU KV cache size")
//   paged:      a sequence of c tokens holds
//               ceil(c / block_tokens) blocks; max sequences = floor(blocks / mean blocks)
//   contiguous: every request reserves max_context tokens up front;
//               max sequences = floor(capacity_tokens / max_context)
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/status.h"
#include "plan/context_dist.h"
#include "plan/cost_model.h"
#include "plan/memory_reserve.h"
#include "plan/model_presets.h"
#include "plan/units.h"

namespace gpudoctor::plan {

struct KvPlanInput {
  ModelShape model;
  DType weight_dtype = DType::kBf16;
  DType kv_dtype = DType::kFp16;
  int tp = 1;                  // tensor-parallel degree, >= 1
  uint64_t gpu_mem_bytes = 0;  // one GPU, as CUDA reports it (vLLM's total_gpu_memory)
  // vLLM's accounting (used unless a flat reserve is given):
  double memory_fraction = kDefaultMemoryFraction;         // gpu_memory_utilization, (0, 1]
  uint32_t max_batched_tokens = kDefaultMaxBatchedTokens;  // the profile run's forward pass
  uint32_t max_seqs = kDefaultMaxSeqs;                     // the profile run's sampler rows
  const GpuSpec* gpu = nullptr;              // non-torch profile; nullptr: data-centre assumed
  std::optional<uint64_t> activation_bytes;  // replaces the modelled activation peak
  std::optional<uint64_t> non_torch_bytes;   // replaces the modelled non-torch memory
  // A flat reserve instead (the whole of what is not weights or KV): bytes, or a fraction of
  // gpu_mem. Either one switches vLLM's accounting off.
  std::optional<uint64_t> reserve_bytes;
  std::optional<double> reserve_fraction;
  uint32_t block_tokens = 16;
  ContextDist contexts = SingleContext(2048);
  std::optional<uint32_t> max_context;  // contiguous reservation; default contexts.MaxTokens()
};

struct ContextCapacity {
  uint32_t context_tokens = 0;
  uint64_t max_concurrent_sequences = 0;  // paged
};

struct KvPlan {
  double kv_bytes_per_token = 0;  // whole model (all TP ranks together)
  double kv_bytes_per_token_per_gpu = 0;
  double kv_bytes_per_sequence = 0;  // whole model, at the mean context
  double weights_bytes_per_gpu = 0;
  uint64_t reserve_bytes = 0;  // everything not weights or KV
  bool flat_reserve = false;   // --reserve: the parts below are 0
  double usable_bytes = 0;     // gpu_mem x memory_fraction
  ActivationPeak activation;   // peak_bytes: the modelled peak or the --activation value
  bool activation_given = false;
  double non_torch_bytes = 0;
  bool non_torch_given = false;
  std::string_view non_torch_profile;  // label of the profile used
  double kv_budget_bytes_per_gpu = 0;
  uint64_t kv_capacity_tokens = 0;  // per TP group (every rank holds its share of each token);
                                    // whole blocks, as vLLM counts them
  uint64_t paged_blocks = 0;
  double mean_context_tokens = 0;
  uint32_t max_context_tokens = 0;
  uint64_t max_concurrent_sequences = 0;  // paged, for the distribution
  uint64_t contiguous_max_sequences = 0;  // every request pre-allocates max_context
  double paged_waste_fraction = 0;        // unused tail of each sequence's last block
  double contiguous_waste_fraction = 0;   // reserved but unused at the distribution's lengths
  // Per GPU, with as many sequences as fit: KV memory reserved but holding no token.
  double paged_waste_bytes = 0, contiguous_waste_bytes = 0;
  std::vector<ContextCapacity> scaling;  // 512, 1024, 2048, 4096, 8192 tokens (paged)
};

// invalid_argument naming the value: zero layers/heads/params, tp < 1, zero memory, block size
// 0, a memory fraction outside (0, 1], zero max batched tokens or sequences, or a model whose
// weights and reserve leave no room for even one block on the GPU.
Result<KvPlan> PlanKv(const KvPlanInput& in);

// Sequences of `context_tokens` that fit, paged; 0 when none.
uint64_t PagedSequences(const KvPlan& plan, uint32_t block_tokens, uint32_t context_tokens);

}  // namespace gpudoctor::plan
