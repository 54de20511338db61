#include "plan/memory_reserve.h"

#include <algorithm>
#include <cmath>

namespace gpudoctor::plan {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// vLLM PR 10511 (Meta-Llama-3-8B on H100 80GB): non_torch_memory 1.79 GiB at tp 1, 3.58 GiB at
// tp 2; the increase is NCCL's per-peer buffers, counted once per peer.
constexpr NonTorchProfile kDataCentre{
    "NVLink data-centre GPU", 1.79 * kGiB, 1.79 * kGiB,
    "vLLM PR 10511: H100 80GB non_torch_memory 1.79 GiB at tp 1, 3.58 GiB at tp 2"};
// vLLM issue 13061 (2x RTX 4090, tp 2): non_torch_memory 0.25 GiB; no NVLink, NCCL goes through
// host memory, so no per-peer device buffers.
constexpr NonTorchProfile kPcieCard{"PCIe card", 0.25 * kGiB, 0,
                                    "vLLM issue 13061: 2x RTX 4090 tp 2 non_torch_memory 0.25 GiB"};

}  // namespace

const NonTorchProfile& NonTorchProfileFor(const GpuSpec* gpu) {
  if (gpu == nullptr) return kDataCentre;
  for (std::string_view pcie : {"l40s", "l40", "l4", "a10", "rtx-4090", "rtx-3090"}) {
    if (gpu->name == pcie) return kPcieCard;
  }
  return kDataCentre;
}

double NonTorchBytes(const NonTorchProfile& profile, int tp) {
  return profile.base_bytes + profile.per_peer_bytes * std::max(0, tp - 1);
}

ActivationPeak ProfileRunPeak(const ModelShape& m, int tp, uint32_t max_batched_tokens,
                              uint32_t max_seqs) {
  ActivationPeak a;
  double hidden = m.hidden_size, inter = m.intermediate_size, vocab = m.vocab_size;
  if (hidden <= 0 || inter <= 0 || vocab <= 0) {
    // A custom shape: a dense transformer has about 12 x layers x hidden^2 parameters, an MLP
    // about 4 x hidden wide, and a Llama 3 vocabulary.
    a.estimated_shape = true;
    if (hidden <= 0) hidden = std::sqrt(m.active_params / (12.0 * std::max(m.layers, 1)));
    if (inter <= 0) inter = 4 * hidden;
    if (vocab <= 0) vocab = 128256;
  }
  const double gpus = std::max(tp, 1);
  double per_token = 3 * hidden;
  if (m.experts > 0 && m.experts_per_token > 0) {
    per_token += m.experts_per_token * (3 * inter / gpus + hidden);
  } else {
    per_token += 3 * inter / gpus;
  }
  a.forward_bytes =
      static_cast<double>(max_batched_tokens) * per_token * kActivationBytesPerElement;
  a.sampler_bytes = static_cast<double>(max_seqs) * vocab * kSamplerBytesPerLogit;
  a.peak_bytes = std::max(a.forward_bytes, a.sampler_bytes);
  return a;
}

}  // namespace gpudoctor::plan
