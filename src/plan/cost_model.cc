// GPU figures from NVIDIA's data sheets and architecture white papers. The data sheets print
// tensor throughput "with sparsity"; the dense figure used here is half of it. GeForce cards
// run bf16 with FP32 accumulate at half their FP16-accumulate rate; the figures below are the
// FP32-accumulate ones (what bf16 inference kernels use).
#include "plan/cost_model.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

namespace gpudoctor::plan {
namespace {

constexpr double kT = 1e12;  // FLOP/s or bytes/s
constexpr double kG = 1e9;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "NVIDIA H100 PCIe" and "H100 PCIe" are the same marketing name.
std::string WithoutVendor(std::string_view s) {
  std::string l = Lower(s);
  constexpr std::string_view kVendor = "nvidia ";
  if (l.rfind(kVendor, 0) == 0) l.erase(0, kVendor.size());
  return l;
}

constexpr std::string_view kH100Sheet =
    "NVIDIA H100 Tensor Core GPU datasheet, "
    "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet";
constexpr std::string_view kH200Sheet =
    "NVIDIA H200 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/h200/";
constexpr std::string_view kA100Sheet =
    "NVIDIA A100 Tensor Core GPU datasheet, "
    "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
    "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf";

}  // namespace

const std::vector<GpuSpec>& GpuSpecs() {
  static const std::vector<GpuSpec> specs = {
      {"h100-sxm",
       "h100",
       "NVIDIA H100 80GB HBM3",
       {0x2330},
       989.4 * kT,
       1978.9 * kT,
       3.35 * kT,
       80 * kG,
       kH100Sheet},
      {"h100-pcie",
       "",
       "NVIDIA H100 PCIe",
       {0x2331},
       756 * kT,
       1513 * kT,
       2.0 * kT,
       80 * kG,
       kH100Sheet},
      {"h100-nvl",
       "",
       "NVIDIA H100 NVL",
       {0x2321},
       835.5 * kT,
       1670.5 * kT,
       3.9 * kT,
       94 * kG,
       kH100Sheet},
      {"h200",
       "h200-sxm",
       "NVIDIA H200",
       {0x2335},
       989.4 * kT,
       1978.9 * kT,
       4.8 * kT,
       141 * kG,
       kH200Sheet},
      {"h200-nvl",
       "",
       "NVIDIA H200 NVL",
       {},
       835.5 * kT,
       1670.5 * kT,
       4.8 * kT,
       141 * kG,
       std::string_view("NVIDIA H200 Tensor Core GPU datasheet (H200 NVL column), "
                        "https://www.nvidia.com/en-us/data-center/h200/; PCI device id not "
                        "confirmed, matched by name only")},
      {"b200",
       "",
       "NVIDIA B200",
       {0x2901},
       2250 * kT,
       4500 * kT,
       8.0 * kT,
       180 * kG,
       std::string_view("NVIDIA HGX B200 specifications (per GPU: FP8 9 PFLOPS and BF16 4.5 "
                        "PFLOPS with sparsity, 8 TB/s), https://www.nvidia.com/en-us/data-center/"
                        "hgx/; later B200 sheets differ by a few percent; PCI id from pci.ids, "
                        "unconfirmed")},
      {"a100-sxm-80gb",
       "a100",
       "NVIDIA A100-SXM4-80GB",
       {0x20b2},
       312 * kT,
       0,
       2.039 * kT,
       80 * kG,
       kA100Sheet},
      {"a100-sxm-40gb",
       "",
       "NVIDIA A100-SXM4-40GB",
       {0x20b0},
       312 * kT,
       0,
       1.555 * kT,
       40 * kG,
       kA100Sheet},
      {"a100-pcie-80gb",
       "",
       "NVIDIA A100 80GB PCIe",
       {0x20b5},
       312 * kT,
       0,
       1.935 * kT,
       80 * kG,
       kA100Sheet},
      {"a100-pcie-40gb",
       "",
       "NVIDIA A100-PCIE-40GB",
       {0x20f1, 0x20b1},
       312 * kT,
       0,
       1.555 * kT,
       40 * kG,
       kA100Sheet},
      {"a30",
       "",
       "NVIDIA A30",
       {0x20b7},
       165 * kT,
       0,
       0.933 * kT,
       24 * kG,
       std::string_view("NVIDIA A30 Tensor Core GPU datasheet, "
                        "https://www.nvidia.com/en-us/data-center/products/a30-gpu/")},
      {"l40s",
       "",
       "NVIDIA L40S",
       {0x26b9},
       362.05 * kT,
       733 * kT,
       0.864 * kT,
       48 * kG,
       std::string_view(
           "NVIDIA L40S GPU datasheet, https://www.nvidia.com/en-us/data-center/l40s/")},
      {"l40",
       "",
       "NVIDIA L40",
       {0x26b5},
       181.05 * kT,
       362 * kT,
       0.864 * kT,
       48 * kG,
       std::string_view("NVIDIA L40 GPU datasheet, https://www.nvidia.com/en-us/data-center/l40/")},
      {"l4",
       "",
       "NVIDIA L4",
       {0x27b8},
       121 * kT,
       242.5 * kT,
       0.3 * kT,
       24 * kG,
       std::string_view("NVIDIA L4 Tensor Core GPU datasheet, "
                        "https://www.nvidia.com/en-us/data-center/l4/")},
      {"a10",
       "",
       "NVIDIA A10",
       {0x2236},
       125 * kT,
       0,
       0.6 * kT,
       24 * kG,
       std::string_view("NVIDIA A10 Tensor Core GPU datasheet, "
                        "https://www.nvidia.com/en-us/data-center/products/a10-gpu/")},
      {"rtx-4090",
       "",
       "NVIDIA GeForce RTX 4090",
       {0x2684},
       165.2 * kT,
       330.3 * kT,
       1.008 * kT,
       24 * kG,
       std::string_view("NVIDIA Ada GPU Architecture white paper, appendix A (BF16 and FP8 "
                        "tensor, FP32 accumulate, dense; FP16 accumulate is twice as fast), "
                        "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/"
                        "nvidia-ada-gpu-architecture.pdf")},
      {"rtx-3090",
       "",
       "NVIDIA GeForce RTX 3090",
       {0x2204},
       71 * kT,
       0,
       0.936 * kT,
       24 * kG,
       std::string_view("NVIDIA Ampere GA102 GPU Architecture white paper, appendix A (BF16 "
                        "tensor, FP32 accumulate, dense; FP16 accumulate is 142), "
                        "https://www.nvidia.com/content/PDF/"
                        "nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf")},
  };
  return specs;
}

const GpuSpec* FindGpuSpec(std::string_view name_or_product) {
  std::string want = Lower(name_or_product);
  std::string bare = WithoutVendor(name_or_product);
  for (const auto& g : GpuSpecs()) {
    if (want == g.name || (!g.alias.empty() && want == g.alias)) return &g;
    if (bare == WithoutVendor(g.product)) return &g;
  }
  return nullptr;
}

const GpuSpec* FindGpuSpecByPciDeviceId(uint16_t device_id) {
  for (const auto& g : GpuSpecs()) {
    for (uint16_t id : g.pci_device_ids) {
      if (id == device_id) return &g;
    }
  }
  return nullptr;
}

std::string GpuTypeNames() {
  std::string out;
  for (const auto& g : GpuSpecs()) {
    if (!out.empty()) out += ", ";
    out += g.name;
  }
  return out;
}

double PeakFlops(const GpuSpec& gpu, DType weight_dtype) {
  if (weight_dtype == DType::kFp8 && gpu.dense_fp8_flops > 0) return gpu.dense_fp8_flops;
  return gpu.dense_bf16_flops;
}

double ExpertsTouchedFraction(double tokens, int experts, int experts_per_token) {
  if (experts <= 0 || tokens <= 0) return 0;
  double miss = 1.0 - std::min(1.0, static_cast<double>(experts_per_token) / experts);
  return 1.0 - std::pow(miss, tokens);
}

CostModel DeriveCostModel(const ModelShape& model, DType weight_dtype,
                          double kv_bytes_per_token_per_gpu, int tp, const GpuSpec& gpu) {
  const double gpus = std::max(tp, 1);
  const double bw = gpu.hbm_bytes_per_s * kBandwidthEfficiency;
  const double flops = PeakFlops(gpu, weight_dtype) * kComputeEfficiency;
  const double bytes = BytesPerElement(weight_dtype);
  CostModel c;
  c.overhead_s = kStepOverheadS;
  c.token_s = 2.0 * model.active_params / (gpus * flops);
  c.kv_token_s = kv_bytes_per_token_per_gpu / bw;
  const int e = model.experts, k = model.experts_per_token;
  if (e > 0 && k > 0 && k < e && model.params > model.active_params) {
    // total = dense + E x expert, active = dense + k x expert.
    double expert = (model.params - model.active_params) / (e - k);
    double dense = std::max(0.0, model.active_params - k * expert);
    c.weights_s = dense * bytes / gpus / bw;
    c.expert_weights_s = e * expert * bytes / gpus / bw;
    c.experts = e;
    c.experts_per_token = k;
  } else {
    // Dense, or a MoE whose expert count is unknown: the active parameters are read.
    c.weights_s = model.active_params * bytes / gpus / bw;
  }
  return c;
}

}  // namespace gpudoctor::plan
