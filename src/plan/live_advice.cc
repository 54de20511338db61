#include "plan/live_advice.h"

#include <algorithm>
#include <cctype>

#include "core/strings.h"
#include "plan/kv_planner.h"

namespace gpudoctor::plan {
namespace {

struct ServerPattern {
  std::string_view needle;  // lower-case substring of comm
  std::string_view name;
};

// comm is cut at 15 characters: "text-generation-launcher" reads "text-generation".
constexpr ServerPattern kServers[] = {
    {"vllm", "vLLM"},
    {"text-generation", "TGI (text-generation-inference)"},
    {"text-generat", "TGI (text-generation-inference)"},
    {"sglang", "SGLang"},
    {"tritonserver", "Triton Inference Server"},
    {"llama-server", "llama.cpp"},
    {"llama_server", "llama.cpp"},
    {"llama.cpp", "llama.cpp"},
    {"ollama", "Ollama"},
    {"lmdeploy", "LMDeploy"},
    {"trtllm", "TensorRT-LLM"},
    {"tensorrt_llm", "TensorRT-LLM"},
};

}  // namespace

std::string InferenceServerName(std::string_view comm) {
  std::string lower(comm);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& s : kServers) {
    if (lower.find(s.needle) != std::string::npos) return std::string(s.name);
  }
  return "";
}

std::optional<LiveKvFacts> LiveKvFactsFor(const GpuFacts& gpu) {
  if (!gpu.processes || !gpu.memory_total_bytes || *gpu.memory_total_bytes == 0) {
    return std::nullopt;
  }
  LiveKvFacts kv;
  for (const auto& p : *gpu.processes) {
    kv.server = InferenceServerName(p.comm);
    if (!kv.server.empty()) {
      kv.comm = p.comm;
      break;
    }
  }
  if (kv.server.empty()) return std::nullopt;
  kv.model = "llama-3-8b";
  const ModelPreset* model = FindModelPreset(kv.model);
  KvPlanInput in;
  in.model = model->shape;
  in.gpu_mem_bytes = *gpu.memory_total_bytes;
  // The reserve's non-torch profile by the GPU's PCI device id; unknown: data-centre assumed.
  if (gpu.pci_device_id) in.gpu = FindGpuSpecByPciDeviceId(*gpu.pci_device_id >> 16);
  in.contexts = SingleContext(2048);
  auto fp16 = PlanKv(in);
  in.kv_dtype = DType::kFp8;
  auto fp8 = PlanKv(in);
  if (fp16.ok() && fp8.ok()) {
    kv.sized = true;
    kv.kv_bytes_per_token = static_cast<uint64_t>(fp16->kv_bytes_per_token);
    kv.seqs_512 = fp16->scaling[0].max_concurrent_sequences;
    kv.seqs_2048 = fp16->scaling[2].max_concurrent_sequences;
    kv.seqs_2048_fp8 = fp8->scaling[2].max_concurrent_sequences;
  }
  return kv;
}

}  // namespace gpudoctor::plan
