// The inference engines' own Prometheus metrics, normalised to one reading in common units.
// Names and types as each engine documents them (checked 2026-12 against):
//   vLLM: docs.vllm.ai "Production Metrics" (v0.5-v0.8 Metrics class: vllm:gpu_cache_usage_perc,
//     vllm:num_preemptions_total, vllm:time_per_output_token_seconds; v0.9+/V1 stable page:
//     vllm:kv_cache_usage_perc, vllm:inter_token_latency_seconds), label model_name.
//   TGI: huggingface/text-generation-inference docs/source/reference/metrics.md (tgi_queue_size,
//     tgi_batch_current_size, tgi_request_mean_time_per_token_duration, tgi_request_input_length,
//     tgi_request_queue_duration, tgi_request_success); no model label, no KV or TTFT metric.
//   SGLang: docs/references/production_metrics.md (sglang:token_usage, sglang:num_queue_reqs,
//     sglang:num_running_reqs, sglang:time_to_first_token_seconds,
//     sglang:time_per_output_token_seconds; newer: sglang:inter_token_latency_seconds),
//     label model_name.
//   Triton: server docs/user_guide/metrics.md (r24.04; nv_inference_queue_duration_us and
//     nv_inference_request_success counters, nv_inference_pending_request_count gauge), label
//     model; no KV, TTFT or preemption metric.
// Series of several models or engine ranks are summed (counts) or maxed (KV usage). A metric an
// engine does not document, or this endpoint lacks, is absent. Pure; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inference/prom_text.h"

namespace gpudoctor {

enum class InferenceEngine { kAuto, kVllm, kTgi, kSglang, kTriton };

// "vllm", "tgi", "sglang", "triton", "auto"; nullopt otherwise.
std::optional<InferenceEngine> ParseInferenceEngine(std::string_view s);
const char* InferenceEngineName(InferenceEngine e);  // "vllm", ... ("auto" for kAuto)

// The engine whose metric prefix the families carry (vllm:, tgi_, sglang:, nv_inference_);
// kAuto when none.
InferenceEngine DetectInferenceEngine(const std::vector<PromTextFamily>& families);

struct EngineReading {
  InferenceEngine engine = InferenceEngine::kAuto;
  std::string model;                     // served model name(s), ", "-joined; "" unknown
  std::optional<double> kv_usage_ratio;  // KV cache used, 0..1
  std::optional<double> waiting, running;
  std::optional<double> preemptions;  // cumulative counter (vLLM)
  std::optional<double> requests;     // cumulative finished requests (counter)
  std::optional<double> queue_us;     // cumulative queue time, microseconds (Triton counter)
  std::optional<PromHistogram> ttft;  // seconds
  std::optional<PromHistogram> tpot;  // seconds per output token
  std::optional<PromHistogram> prompt_tokens;      // tokens per request
  std::optional<PromHistogram> generation_tokens;  // tokens per request
  std::optional<double> prompt_tokens_total;       // counters (SGLang: the mean from these)
  bool any = false;                                // at least one of the engine's metrics seen
};

EngineReading NormaliseEngine(InferenceEngine engine, const std::vector<PromTextFamily>& families);

// Documented default metrics ports and process names, for discovery of local servers:
// vLLM 8000 (the API server serves /metrics), TGI 80 (container) / 3000 (launcher default) /
// 8080, SGLang 30000, Triton 8002. `comm` is /proc/PID/comm (15 characters) or the exe's base
// name. kAuto when the name is none of them.
InferenceEngine EngineForProcess(std::string_view comm);
std::vector<int> DefaultMetricsPorts(InferenceEngine engine);

}  // namespace gpudoctor
