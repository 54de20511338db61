// Live advice from the planner for `check` and `watch`: what a nearly full GPU running an
// inference server can hold, in the planner's numbers, and the `gpudoctor plan` command to
// explore further; and the utilisation pattern of static batching.
//
// Inference servers are recognised by process name only (GpuProcess::comm, /proc/PID/comm, at
// most 15 characters): the command line of a possibly stuck task is never read.
// Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "facts/gpu_facts.h"

namespace gpudoctor::plan {

// The server family when `comm` names one (vllm, text-generation-inference, sglang, triton,
// llama.cpp, ollama, lmdeploy, TensorRT-LLM); empty otherwise. Case-insensitive.
std::string InferenceServerName(std::string_view comm);

// Next-step lines for the gpu.memory.full finding: empty unless an inference server is among the
// GPU's processes and its total memory is known. Quotes llama-3-8b (bf16 weights, fp16 KV, 10%
// reserve) on this GPU's memory at 512 and 2048 tokens, fp8 KV, and the commands to run.
std::vector<std::string> KvAdviceForGpu(const GpuFacts& gpu);

struct SawTooth {
  bool detected = false;
  int cycles = 0;            // complete high -> low -> high alternations
  double high_fraction = 0;  // share of samples at or above the high threshold
  double low_fraction = 0;   // share of samples at or below the low threshold
  double mean_util_pct = 0;
};

// The busy/idle saw-tooth of static batching in a GPU utilisation series (percent, one value per
// sample, oldest first): samples fall into high (>= 70%) or low (<= 20%) with few in between
// (< 30%), each side holds at least 15% of the samples, and there are at least 3 complete
// cycles. A series shorter than 12 samples is never detected. Contract for `watch`: call this on
// each GPU's utilisation window (watch keeps none for its rules yet; not wired).
SawTooth DetectStaticBatchingSawTooth(const std::vector<double>& util_series);

}  // namespace gpudoctor::plan
