// Model presets for the planner (`gpudoctor plan`): the shape numbers that size a KV cache, taken
// from each model's published config.json (num_hidden_layers, num_key_value_heads, head_dim or
// hidden_size / num_attention_heads), the activation sizes (hidden_size, intermediate_size,
// vocab_size) and its parameter count. Data only, in model_presets.cc.
// Thread-safe (immutable static data).
#pragma once

#include <string_view>
#include <vector>

namespace gpudoctor::plan {

struct ModelShape {
  int layers = 0;
  int kv_heads = 0;          // key/value heads: = attention heads for MHA, fewer for GQA/MQA
  int head_dim = 0;          // elements per head
  double params = 0;         // all parameters (every expert of a MoE), as a count
  double active_params = 0;  // parameters used per token (MoE: routed experts only); = params
  // The KV formula 2 x layers x kv_heads x head_dim does not describe the model exactly (MLA
  // caches a compressed latent): the numbers are an approximation, and output says so.
  bool approximate = false;
  // MoE routing: routed experts per MoE layer and experts each token is routed to (0 and 0 for a
  // dense model). Shared experts count as dense parameters.
  int experts = 0;
  int experts_per_token = 0;
  // Sizes of the activations of a forward pass (config.json hidden_size, intermediate_size or,
  // for a MoE, moe_intermediate_size of one expert, vocab_size); 0 when unknown (a custom shape):
  // the reserve model then estimates them from the parameter count and says so.
  int hidden_size = 0;
  int intermediate_size = 0;
  int vocab_size = 0;
};

struct ModelPreset {
  std::string_view name;  // "llama-3-8b": what --model takes
  std::string_view title;
  ModelShape shape;
  std::string_view note;  // where the numbers come from, caveats
};

const std::vector<ModelPreset>& ModelPresets();
// Case-insensitive; nullptr when unknown.
const ModelPreset* FindModelPreset(std::string_view name);

}  // namespace gpudoctor::plan
