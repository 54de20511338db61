// GPU cost model of the batching simulator: the time of one iteration (one forward pass of the
// whole batch on the tensor-parallel group) as
//
//   step_s = fixed_s + token_s x tokens_processed + kv_token_s x kv_tokens_read
//
//   fixed_s    = overhead (1 ms: scheduling, kernel launches) + weight bytes per GPU / (HBM
//                bandwidth x 0.8): every iteration streams all weights once, whatever the batch
//   token_s    = 2 x active params / (tp x dense bf16 FLOP/s x 0.5): compute per token, prefill
//                or decode
//   kv_token_s = KV bytes per token per GPU / (HBM bandwidth x 0.8): attention reads the
//                cached tokens of every decoding sequence
//
// A roofline simplification (compute and memory times add rather than overlap), documented in
// docs/plan.md; each coefficient can be overridden from the command line. Thread-safe data.
#pragma once

#include <string_view>
#include <vector>

#include "plan/model_presets.h"
#include "plan/units.h"

namespace gpudoctor::plan {

struct GpuSpec {
  std::string_view name;        // "h100": what --gpu-type takes
  std::string_view match;       // substring of the NVML product name, "H100"
  double dense_bf16_flops = 0;  // peak dense bf16 FLOP/s
  double hbm_bytes_per_s = 0;   // peak memory bandwidth
  double memory_bytes = 0;
};

const std::vector<GpuSpec>& GpuSpecs();
// By --gpu-type name, or by a substring of an NVML product name ("NVIDIA H100 80GB HBM3").
const GpuSpec* FindGpuSpec(std::string_view name_or_product);

struct CostModel {
  double fixed_s = 0;
  double token_s = 0;
  double kv_token_s = 0;

  double StepSeconds(double tokens, double kv_tokens_read) const {
    return fixed_s + token_s * tokens + kv_token_s * kv_tokens_read;
  }
};

inline constexpr double kStepOverheadS = 0.001;
inline constexpr double kComputeEfficiency = 0.5;
inline constexpr double kBandwidthEfficiency = 0.8;

CostModel DeriveCostModel(const ModelShape& model, DType weight_dtype,
                          double kv_bytes_per_token_per_gpu, int tp, const GpuSpec& gpu);

}  // namespace gpudoctor::plan
