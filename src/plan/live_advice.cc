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

std::vector<std::string> KvAdviceForGpu(const GpuFacts& gpu) {
  std::vector<std::string> out;
  if (!gpu.processes || !gpu.memory_total_bytes || *gpu.memory_total_bytes == 0) return out;
  std::string server, comm;
  for (const auto& p : *gpu.processes) {
    server = InferenceServerName(p.comm);
    if (!server.empty()) {
      comm = p.comm;
      break;
    }
  }
  if (server.empty()) return out;

  const ModelPreset* model = FindModelPreset("llama-3-8b");
  KvPlanInput in;
  in.model = model->shape;
  in.gpu_mem_bytes = *gpu.memory_total_bytes;
  in.contexts = SingleContext(2048);
  auto fp16 = PlanKv(in);
  in.kv_dtype = DType::kFp8;
  auto fp8 = PlanKv(in);
  std::string mem = FormatGiB(static_cast<double>(*gpu.memory_total_bytes));
  std::string gpu_flag = "--gpu " + std::to_string(gpu.index);
  if (fp16.ok() && fp8.ok()) {
    out.push_back(
        Sanitize(comm, 40) + " (" + server + ") serves from this GPU: its KV cache grows with " +
        "every token of every sequence. For example llama-3-8b (bf16 weights, fp16 KV, 10% "
        "reserve) on " +
        mem + " needs " + FormatBytes(static_cast<uint64_t>(fp16->kv_bytes_per_token)) +
        " per token: " + std::to_string(fp16->scaling[0].max_concurrent_sequences) +
        " sequences of 512 tokens fit, only " +
        std::to_string(fp16->scaling[2].max_concurrent_sequences) +
        " of 2048; fp8 KV raises that to " +
        std::to_string(fp8->scaling[2].max_concurrent_sequences) + ".");
  }
  out.push_back("Size the cache for your model: `gpudoctor plan kv --model llama-3-8b " + gpu_flag +
                " --context 2048` (see `gpudoctor plan kv --list-models`, or give "
                "--layers --kv-heads --head-dim --params).");
  out.push_back(
      "Compare static and continuous batching on your traffic: `gpudoctor plan "
      "batching --model llama-3-8b " +
      gpu_flag +
      " --rate 2 --requests 2000` (or "
      "--trace FILE.csv).");
  return out;
}

SawTooth DetectStaticBatchingSawTooth(const std::vector<double>& util) {
  constexpr double kHigh = 70, kLow = 20;
  SawTooth s;
  if (util.empty()) return s;
  int high = 0, low = 0;
  double sum = 0;
  int state = 0;  // 0 unknown, 1 high, -1 low
  int transitions_to_high_after_low = 0;
  bool seen_high = false, seen_low_after_high = false;
  for (double u : util) {
    sum += u;
    int now = 0;
    if (u >= kHigh) {
      ++high;
      now = 1;
    } else if (u <= kLow) {
      ++low;
      now = -1;
    }
    if (now == 0 || now == state) continue;
    if (now == 1) {
      if (seen_high && seen_low_after_high) ++transitions_to_high_after_low;
      seen_high = true;
      seen_low_after_high = false;
    } else if (seen_high) {
      seen_low_after_high = true;
    }
    state = now;
  }
  double n = static_cast<double>(util.size());
  s.cycles = transitions_to_high_after_low;
  s.high_fraction = high / n;
  s.low_fraction = low / n;
  s.mean_util_pct = sum / n;
  double middle = 1.0 - s.high_fraction - s.low_fraction;
  s.detected = util.size() >= 12 && middle < 0.30 && s.high_fraction >= 0.15 &&
               s.low_fraction >= 0.15 && s.cycles >= 3;
  return s;
}

}  // namespace gpudoctor::plan
