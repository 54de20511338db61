// Published configs (Hugging Face config.json of each model). KV heads = num_key_value_heads.
#include "plan/model_presets.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace gpudoctor::plan {
namespace {

constexpr double kB = 1e9;

ModelShape Dense(int layers, int kv_heads, int head_dim, double params) {
  return {layers, kv_heads, head_dim, params, params, false};
}

}  // namespace

const std::vector<ModelPreset>& ModelPresets() {
  static const std::vector<ModelPreset> presets = {
      {"llama-2-7b", "Llama 2 7B", Dense(32, 32, 128, 6.74 * kB), "MHA: 32 KV heads"},
      {"llama-2-13b", "Llama 2 13B", Dense(40, 40, 128, 13.0 * kB), "MHA: 40 KV heads"},
      {"llama-2-70b", "Llama 2 70B", Dense(80, 8, 128, 69.0 * kB), "GQA: 64 heads, 8 KV heads"},
      {"llama-3-8b", "Llama 3 8B", Dense(32, 8, 128, 8.03 * kB), "GQA: 32 heads, 8 KV heads"},
      {"llama-3-70b", "Llama 3 70B", Dense(80, 8, 128, 70.6 * kB), "GQA: 64 heads, 8 KV heads"},
      {"llama-3.1-8b", "Llama 3.1 8B", Dense(32, 8, 128, 8.03 * kB), "GQA, 128k context"},
      {"llama-3.1-70b", "Llama 3.1 70B", Dense(80, 8, 128, 70.6 * kB), "GQA, 128k context"},
      {"llama-3.1-405b", "Llama 3.1 405B", Dense(126, 8, 128, 405.9 * kB),
       "GQA: 128 heads, 8 KV heads"},
      {"mistral-7b", "Mistral 7B", Dense(32, 8, 128, 7.24 * kB), "GQA: 32 heads, 8 KV heads"},
      {"mixtral-8x7b",
       "Mixtral 8x7B",
       {32, 8, 128, 46.7 * kB, 12.9 * kB, false, 8, 2},
       "MoE: 8 experts stored, 2 routed per token"},
      {"qwen2.5-7b", "Qwen2.5 7B", Dense(28, 4, 128, 7.62 * kB), "GQA: 28 heads, 4 KV heads"},
      {"qwen2.5-72b", "Qwen2.5 72B", Dense(80, 8, 128, 72.7 * kB), "GQA: 64 heads, 8 KV heads"},
      // MLA caches one latent of kv_lora_rank 512 plus a 64-wide RoPE key per layer and token
      // (576 elements), no separate K and V: 2 x 1 x 288 gives the same element count.
      {"deepseek-v3",
       "DeepSeek-V3 (MLA)",
       {61, 1, 288, 671 * kB, 37 * kB, true, 256, 8},
       "MLA: approximate, 576 latent elements per layer and token"},
      {"deepseek-v2-lite",
       "DeepSeek-V2-Lite (MLA)",
       {27, 1, 288, 15.7 * kB, 2.4 * kB, true, 64, 6},
       "MLA: approximate, 576 latent elements per layer and token"},
  };
  return presets;
}

const ModelPreset* FindModelPreset(std::string_view name) {
  auto lower = [](std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
  };
  std::string want = lower(name);
  for (const auto& p : ModelPresets()) {
    if (lower(p.name) == want) return &p;
  }
  return nullptr;
}

}  // namespace gpudoctor::plan
