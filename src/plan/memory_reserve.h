// What vLLM keeps out of the KV cache on each GPU besides the weights (vLLM's V0 worker
// determine_num_available_blocks and V1 gpu_worker.determine_available_memory):
//
//   kv_bytes = total_gpu_memory x gpu_memory_utilization - weights - activation peak - non-torch
//
// activation peak: the PyTorch peak of the profile run, a dummy forward pass of
//   max_num_batched_tokens tokens followed by sampling max_num_seqs rows. On the rank that samples
//   (rank 0; vLLM sizes every rank's cache by the smallest) the larger of the two counts:
//     forward = tokens x 2 B x (3 x hidden + 3 x intermediate / tp)        dense MLP
//             = tokens x 2 B x (3 x hidden + k x (3 x expert_intermediate / tp + hidden))   MoE
//     sampler = max_num_seqs x vocab x 40 B  (fp32 logits, sorted copies, indices, probabilities)
// non-torch: memory outside PyTorch's allocator (CUDA context, cuBLAS workspaces, NCCL buffers):
//   base + per_peer x (tp - 1), by GPU class (table in memory_reserve.cc, sources in docs/plan.md).
//
// The coefficients, the public vLLM logs they come from and the ones that check them are in
// docs/plan.md ("Memory reserve"). Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "plan/cost_model.h"
#include "plan/model_presets.h"

namespace gpudoctor::plan {

inline constexpr double kActivationBytesPerElement = 2;  // bf16/fp16 activations
inline constexpr double kSamplerBytesPerLogit = 40;
inline constexpr uint32_t kDefaultMaxBatchedTokens = 8192;
inline constexpr uint32_t kDefaultMaxSeqs = 256;
inline constexpr double kDefaultMemoryFraction = 0.90;  // vLLM's gpu_memory_utilization

struct NonTorchProfile {
  std::string_view label;  // "NVLink data-centre GPU", "PCIe card"
  double base_bytes = 0;   // tp 1
  double per_peer_bytes = 0;
  std::string_view source;
};

// The profile of a GPU of the cost model's table; nullptr (GPU unknown) gets the data-centre
// profile, the larger one.
const NonTorchProfile& NonTorchProfileFor(const GpuSpec* gpu);
double NonTorchBytes(const NonTorchProfile& profile, int tp);

struct ActivationPeak {
  double forward_bytes = 0;
  double sampler_bytes = 0;
  double peak_bytes = 0;         // max(forward, sampler)
  bool estimated_shape = false;  // hidden/intermediate/vocab unknown: estimated (see .cc)
};

ActivationPeak ProfileRunPeak(const ModelShape& model, int tp, uint32_t max_batched_tokens,
                              uint32_t max_seqs);

}  // namespace gpudoctor::plan
