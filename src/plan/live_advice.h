// Live advice from the planner for `check` and `watch`: what a nearly full GPU running an
// inference server can hold, in the planner's numbers, and the `gpudoctor plan` command to
// explore further.
//
// Inference servers are recognised by process name only (GpuProcess::comm, /proc/PID/comm, at
// most 15 characters): the command line of a possibly stuck task is never read.
// Pure functions, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "facts/gpu_facts.h"

namespace gpudoctor::plan {

// The server family when `comm` names one (vllm, text-generation-inference, sglang, triton,
// llama.cpp, ollama, lmdeploy, TensorRT-LLM); empty otherwise. Case-insensitive.
std::string InferenceServerName(std::string_view comm);

// The planner's numbers for an inference server among the GPU's processes: nullopt unless one is
// recognised and the GPU's total memory is known. Sizes llama-3-8b (bf16 weights, fp16 KV, 10%
// reserve) on this GPU's memory at 512 and 2048 tokens, and with fp8 KV at 2048.
std::optional<LiveKvFacts> LiveKvFactsFor(const GpuFacts& gpu);

}  // namespace gpudoctor::plan
