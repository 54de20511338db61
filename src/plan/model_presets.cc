// Published configs (Hugging Face config.json of each model). KV heads = num_key_value_heads.
#include "plan/model_presets.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace gpudoctor::plan {
namespace {

constexpr double kB = 1e9;

// hidden, intermediate (MLP) and vocab sizes: the activation side of config.json.
struct Act {
  int hidden, intermediate, vocab;
};

ModelShape Dense(int layers, int kv_heads, int head_dim, double params, Act a) {
  ModelShape m;
  m.layers = layers;
  m.kv_heads = kv_heads;
  m.head_dim = head_dim;
  m.params = m.active_params = params;
  m.hidden_size = a.hidden;
  m.intermediate_size = a.intermediate;
  m.vocab_size = a.vocab;
  return m;
}

// A MoE: `a.intermediate` is one expert's (moe_intermediate_size).
ModelShape Moe(int layers, int kv_heads, int head_dim, double params, double active, int experts,
               int per_token, Act a, bool approximate = false) {
  ModelShape m = Dense(layers, kv_heads, head_dim, params, a);
  m.active_params = active;
  m.experts = experts;
  m.experts_per_token = per_token;
  m.approximate = approximate;
  return m;
}

constexpr Act kLlama2_7b{4096, 11008, 32000}, kLlama2_13b{5120, 13824, 32000},
    kLlama2_70b{8192, 28672, 32000}, kLlama3_8b{4096, 14336, 128256},
    kLlama3_70b{8192, 28672, 128256}, kLlama31_405b{16384, 53248, 128256},
    kMistral7b{4096, 14336, 32000}, kQwen25_7b{3584, 18944, 152064},
    kQwen25_14b{5120, 13824, 152064}, kQwen25_72b{8192, 29568, 152064},
    kQwen3_1_7b{2048, 6144, 151936}, kQwen3_8b{4096, 12288, 151936};

}  // namespace

const std::vector<ModelPreset>& ModelPresets() {
  static const std::vector<ModelPreset> presets = {
      {"llama-2-7b", "Llama 2 7B", Dense(32, 32, 128, 6.74 * kB, kLlama2_7b), "MHA: 32 KV heads"},
      {"llama-2-13b", "Llama 2 13B", Dense(40, 40, 128, 13.0 * kB, kLlama2_13b),
       "MHA: 40 KV heads"},
      {"llama-2-70b", "Llama 2 70B", Dense(80, 8, 128, 69.0 * kB, kLlama2_70b),
       "GQA: 64 heads, 8 KV heads"},
      {"llama-3-8b", "Llama 3 8B", Dense(32, 8, 128, 8.03 * kB, kLlama3_8b),
       "GQA: 32 heads, 8 KV heads"},
      {"llama-3-70b", "Llama 3 70B", Dense(80, 8, 128, 70.6 * kB, kLlama3_70b),
       "GQA: 64 heads, 8 KV heads"},
      {"llama-3.1-8b", "Llama 3.1 8B", Dense(32, 8, 128, 8.03 * kB, kLlama3_8b),
       "GQA, 128k context"},
      {"llama-3.1-70b", "Llama 3.1 70B", Dense(80, 8, 128, 70.6 * kB, kLlama3_70b),
       "GQA, 128k context"},
      {"llama-3.1-405b", "Llama 3.1 405B", Dense(126, 8, 128, 405.9 * kB, kLlama31_405b),
       "GQA: 128 heads, 8 KV heads"},
      {"mistral-7b", "Mistral 7B", Dense(32, 8, 128, 7.24 * kB, kMistral7b),
       "GQA: 32 heads, 8 KV heads"},
      {"mixtral-8x7b", "Mixtral 8x7B",
       Moe(32, 8, 128, 46.7 * kB, 12.9 * kB, 8, 2, {4096, 14336, 32000}),
       "MoE: 8 experts stored, 2 routed per token"},
      {"qwen2.5-7b", "Qwen2.5 7B", Dense(28, 4, 128, 7.62 * kB, kQwen25_7b),
       "GQA: 28 heads, 4 KV heads"},
      // DeepSeek-R1-Distill-Qwen-14B has this architecture (its config.json is Qwen2's).
      {"qwen2.5-14b", "Qwen2.5 14B", Dense(48, 8, 128, 14.77 * kB, kQwen25_14b),
       "GQA: 40 heads, 8 KV heads; also DeepSeek-R1-Distill-Qwen-14B"},
      {"qwen2.5-72b", "Qwen2.5 72B", Dense(80, 8, 128, 72.7 * kB, kQwen25_72b),
       "GQA: 64 heads, 8 KV heads"},
      // Qwen3 sets head_dim 128 explicitly (not hidden_size / heads); 1.7B ties its embeddings.
      {"qwen3-1.7b", "Qwen3 1.7B", Dense(28, 8, 128, 2.03 * kB, kQwen3_1_7b),
       "GQA: 16 heads, 8 KV heads, head_dim 128"},
      {"qwen3-8b", "Qwen3 8B", Dense(36, 8, 128, 8.19 * kB, kQwen3_8b),
       "GQA: 32 heads, 8 KV heads"},
      {"qwen3-235b-a22b", "Qwen3 235B-A22B",
       Moe(94, 4, 128, 235.09 * kB, 22.14 * kB, 128, 8, {4096, 1536, 151936}),
       "MoE: 128 experts, 8 routed per token; GQA: 64 heads, 4 KV heads"},
      // MLA caches one latent of kv_lora_rank 512 plus a 64-wide RoPE key per layer and token
      // (576 elements), no separate K and V: 2 x 1 x 288 gives the same element count.
      {"deepseek-v3", "DeepSeek-V3 (MLA)",
       Moe(61, 1, 288, 671 * kB, 37 * kB, 256, 8, {7168, 2048, 129280}, true),
       "MLA: approximate, 576 latent elements per layer and token"},
      {"deepseek-v2-lite", "DeepSeek-V2-Lite (MLA)",
       Moe(27, 1, 288, 15.7 * kB, 2.4 * kB, 64, 6, {2048, 1408, 102400}, true),
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
