// GPU cost model of the batching simulator: the time of one iteration (one forward pass of the
// whole batch on the tensor-parallel group) as a roofline, compute and memory traffic
// overlapping:
//
//   step_s = overhead_s + max(compute_s, memory_s)
//   compute_s = token_s x tokens_processed
//   memory_s  = weights_s + expert_weights_s x ExpertsTouchedFraction(tokens)
//             + kv_token_s x kv_tokens_read
//
//   overhead_s = 1 ms: scheduling, kernel launches, sampling (does not overlap the kernels)
//   token_s    = 2 x active params / (tp x peak dense FLOP/s x 0.5); the fp8 peak when the
//                weights are fp8 and the GPU has fp8 tensor cores, else the bf16 peak
//   weights_s  = bytes of the weights every token uses (dense layers, attention, shared
//                experts) per GPU / (HBM bandwidth x 0.8)
//   expert_weights_s = bytes of all routed experts per GPU / (HBM bandwidth x 0.8); a MoE step
//                reads only the experts its tokens are routed to (1 - (1 - k/E)^tokens of them
//                for E experts, k per token, uniform routing); 0 for a dense model
//   kv_token_s = KV bytes per token per GPU / (HBM bandwidth x 0.8): attention reads the
//                cached tokens of every decoding sequence
//
// Sources and assumptions: docs/plan.md. Each coefficient can be overridden from the command line.
// Thread-safe data and pure functions.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "plan/model_presets.h"
#include "plan/units.h"

namespace gpudoctor::plan {

struct GpuSpec {
  std::string_view name;     // "h100-sxm": what --gpu-type takes
  std::string_view alias;    // a shorter --gpu-type ("h100"), or empty
  std::string_view product;  // the exact marketing name NVML reports, "NVIDIA H100 80GB HBM3"
  std::vector<uint16_t> pci_device_ids;  // PCI device ids (vendor 0x10de); may be empty
  double dense_bf16_flops = 0;  // peak dense (no sparsity) bf16 tensor FLOP/s, FP32 accumulate
  double dense_fp8_flops = 0;   // peak dense fp8 tensor FLOP/s; 0: no fp8 tensor cores
  double hbm_bytes_per_s = 0;   // peak memory bandwidth, bytes/s
  double memory_bytes = 0;      // memory of one GPU, bytes (as sold, 10^9)
  std::string_view source;      // data sheet and URL the row comes from, with caveats
};

const std::vector<GpuSpec>& GpuSpecs();
// By --gpu-type name or alias, or by the exact marketing name (case-insensitive, "NVIDIA "
// optional). No substring matching: nullptr when unknown.
const GpuSpec* FindGpuSpec(std::string_view name_or_product);
// By PCI device id (the upper 16 bits of NVML's pciDeviceId, e.g. 0x2330); nullptr when unknown.
const GpuSpec* FindGpuSpecByPciDeviceId(uint16_t device_id);
// "h100-sxm, h100-pcie, ...": every --gpu-type name, for error messages.
std::string GpuTypeNames();

// Peak dense FLOP/s the model's matrix multiplications run at: fp8 when the weights are fp8 and
// the GPU has fp8 tensor cores; otherwise bf16 (int8/int4 and fp8 on older GPUs are weight-only
// quantisation: dequantised to bf16 before the multiply).
double PeakFlops(const GpuSpec& gpu, DType weight_dtype);

// Expected fraction of E routed experts that `tokens` tokens touch when each picks k of them
// uniformly: 1 - (1 - k/E)^tokens. 1 for tokens >= 1 when k >= E; 0 for no tokens.
double ExpertsTouchedFraction(double tokens, int experts, int experts_per_token);

struct CostModel {
  double overhead_s = 0;        // per iteration, outside the roofline
  double token_s = 0;           // compute seconds per token processed
  double kv_token_s = 0;        // memory seconds per cached token read
  double weights_s = 0;         // memory seconds to read the weights every token uses
  double expert_weights_s = 0;  // memory seconds to read every routed expert once
  int experts = 0;              // routed experts E (0: dense)
  int experts_per_token = 0;    // routed experts per token k

  double ComputeSeconds(double tokens) const { return token_s * tokens; }
  double MemorySeconds(double tokens, double kv_tokens_read) const {
    return weights_s +
           expert_weights_s * ExpertsTouchedFraction(tokens, experts, experts_per_token) +
           kv_token_s * kv_tokens_read;
  }
  double StepSeconds(double tokens, double kv_tokens_read) const {
    double c = ComputeSeconds(tokens), m = MemorySeconds(tokens, kv_tokens_read);
    return overhead_s + (c > m ? c : m);
  }
};

inline constexpr double kStepOverheadS = 0.001;
inline constexpr double kComputeEfficiency = 0.5;
inline constexpr double kBandwidthEfficiency = 0.8;

CostModel DeriveCostModel(const ModelShape& model, DType weight_dtype,
                          double kv_bytes_per_token_per_gpu, int tp, const GpuSpec& gpu);

}  // namespace gpudoctor::plan
