// Peak figures from the vendors' data sheets (dense, without sparsity).
#include "plan/cost_model.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace gpudoctor::plan {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

const std::vector<GpuSpec>& GpuSpecs() {
  static const std::vector<GpuSpec> specs = {
      {"h200", "H200", 989e12, 4.8e12, 141e9},  {"h100", "H100", 989e12, 3.35e12, 80e9},
      {"a100", "A100", 312e12, 2.039e12, 80e9}, {"l40s", "L40S", 362e12, 0.864e12, 48e9},
      {"a10", "A10", 125e12, 0.6e12, 24e9},     {"l4", "L4", 121e12, 0.3e12, 24e9},
      {"b200", "B200", 2250e12, 8e12, 192e9},
  };
  return specs;
}

const GpuSpec* FindGpuSpec(std::string_view name_or_product) {
  std::string want = Lower(name_or_product);
  for (const auto& g : GpuSpecs()) {
    if (want == g.name) return &g;
  }
  // Product names: the longest matching token wins ("A100" must not match "A10").
  const GpuSpec* best = nullptr;
  for (const auto& g : GpuSpecs()) {
    if (want.find(Lower(g.match)) == std::string::npos) continue;
    if (best == nullptr || g.match.size() > best->match.size()) best = &g;
  }
  return best;
}

CostModel DeriveCostModel(const ModelShape& model, DType weight_dtype,
                          double kv_bytes_per_token_per_gpu, int tp, const GpuSpec& gpu) {
  double bw = gpu.hbm_bytes_per_s * kBandwidthEfficiency;
  double flops = gpu.dense_bf16_flops * kComputeEfficiency;
  CostModel c;
  double weights_per_gpu = model.params * BytesPerElement(weight_dtype) / std::max(tp, 1);
  c.fixed_s = kStepOverheadS + weights_per_gpu / bw;
  c.token_s = 2.0 * model.active_params / (std::max(tp, 1) * flops);
  c.kv_token_s = kv_bytes_per_token_per_gpu / bw;
  return c;
}

}  // namespace gpudoctor::plan
