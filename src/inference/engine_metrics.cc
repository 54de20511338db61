#include "inference/engine_metrics.h"

#include <algorithm>
#include <set>

namespace gpudoctor {
namespace {

using Families = std::vector<PromTextFamily>;

// The first of `names` present.
const PromTextFamily* First(const Families& f, std::initializer_list<std::string_view> names) {
  for (auto n : names) {
    if (const PromTextFamily* p = FindPromFamily(f, n)) return p;
  }
  return nullptr;
}

// Sum of the family's plain samples (the family's name, or name_total for counters).
std::optional<double> Sum(const PromTextFamily* f) {
  if (f == nullptr) return std::nullopt;
  std::optional<double> out;
  for (const auto& s : f->samples) {
    if (s.name != f->name && s.name != f->name + "_total") continue;
    out = out.value_or(0) + s.value;
  }
  return out;
}

std::optional<double> Max(const PromTextFamily* f) {
  if (f == nullptr) return std::nullopt;
  std::optional<double> out;
  for (const auto& s : f->samples) {
    if (s.name != f->name) continue;
    out = std::max(out.value_or(s.value), s.value);
  }
  return out;
}

std::optional<PromHistogram> Hist(const PromTextFamily* f, double scale = 1) {
  if (f == nullptr) return std::nullopt;
  auto h = SumPromHistogram(*f);
  if (h && scale != 1) {
    for (auto& b : h->buckets) b.first *= scale;
    h->sum *= scale;
  }
  return h;
}

void CollectModels(const Families& fams, std::string_view prefix, std::string_view label,
                   std::set<std::string>& out) {
  for (const auto& f : fams) {
    if (f.name.rfind(prefix, 0) != 0) continue;
    for (const auto& s : f.samples) {
      if (const std::string* m = PromLabel(s.labels, label); m && !m->empty()) out.insert(*m);
      if (out.size() >= 8) return;
    }
  }
}

std::string Join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& m : s) out += (out.empty() ? "" : ", ") + m;
  return out;
}

bool AnyPrefix(const Families& f, std::string_view prefix) {
  return std::any_of(f.begin(), f.end(),
                     [&](const PromTextFamily& x) { return x.name.rfind(prefix, 0) == 0; });
}

}  // namespace

std::optional<InferenceEngine> ParseInferenceEngine(std::string_view s) {
  if (s == "auto") return InferenceEngine::kAuto;
  if (s == "vllm") return InferenceEngine::kVllm;
  if (s == "tgi") return InferenceEngine::kTgi;
  if (s == "sglang") return InferenceEngine::kSglang;
  if (s == "triton") return InferenceEngine::kTriton;
  return std::nullopt;
}

const char* InferenceEngineName(InferenceEngine e) {
  switch (e) {
    case InferenceEngine::kVllm:
      return "vllm";
    case InferenceEngine::kTgi:
      return "tgi";
    case InferenceEngine::kSglang:
      return "sglang";
    case InferenceEngine::kTriton:
      return "triton";
    case InferenceEngine::kAuto:
      break;
  }
  return "auto";
}

InferenceEngine DetectInferenceEngine(const Families& f) {
  if (AnyPrefix(f, "vllm:")) return InferenceEngine::kVllm;
  if (AnyPrefix(f, "sglang:")) return InferenceEngine::kSglang;
  if (AnyPrefix(f, "tgi_")) return InferenceEngine::kTgi;
  if (AnyPrefix(f, "nv_inference_")) return InferenceEngine::kTriton;
  return InferenceEngine::kAuto;
}

EngineReading NormaliseEngine(InferenceEngine engine, const Families& f) {
  if (engine == InferenceEngine::kAuto) engine = DetectInferenceEngine(f);
  EngineReading r;
  r.engine = engine;
  std::set<std::string> models;
  switch (engine) {
    case InferenceEngine::kVllm:
      r.any = AnyPrefix(f, "vllm:");
      CollectModels(f, "vllm:", "model_name", models);
      // V1 renamed gpu_cache_usage_perc to kv_cache_usage_perc (both 0..1, "1 means 100
      // percent usage").
      r.kv_usage_ratio = Max(First(f, {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"}));
      r.waiting = Sum(First(f, {"vllm:num_requests_waiting"}));
      r.running = Sum(First(f, {"vllm:num_requests_running"}));
      r.preemptions = Sum(First(f, {"vllm:num_preemptions_total", "vllm:num_preemptions"}));
      r.requests = Sum(First(f, {"vllm:request_success_total", "vllm:request_success"}));
      r.ttft = Hist(First(f, {"vllm:time_to_first_token_seconds"}));
      r.tpot =
          Hist(First(f, {"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds",
                         "vllm:request_time_per_output_token_seconds"}));
      r.prompt_tokens = Hist(First(f, {"vllm:request_prompt_tokens"}));
      r.generation_tokens = Hist(First(f, {"vllm:request_generation_tokens"}));
      break;
    case InferenceEngine::kTgi:
      r.any = AnyPrefix(f, "tgi_");
      r.waiting = Sum(First(f, {"tgi_queue_size"}));
      r.running = Sum(First(f, {"tgi_batch_current_size"}));
      r.requests = Sum(First(f, {"tgi_request_success"}));
      r.tpot = Hist(First(f, {"tgi_request_mean_time_per_token_duration"}));
      r.prompt_tokens = Hist(First(f, {"tgi_request_input_length"}));
      r.generation_tokens = Hist(First(f, {"tgi_request_generated_tokens"}));
      break;
    case InferenceEngine::kSglang:
      r.any = AnyPrefix(f, "sglang:");
      CollectModels(f, "sglang:", "model_name", models);
      r.kv_usage_ratio = Max(First(f, {"sglang:token_usage"}));
      r.waiting = Sum(First(f, {"sglang:num_queue_reqs"}));
      r.running = Sum(First(f, {"sglang:num_running_reqs"}));
      r.requests = Sum(First(f, {"sglang:num_requests_total", "sglang:num_requests"}));
      r.ttft = Hist(First(f, {"sglang:time_to_first_token_seconds"}));
      r.tpot = Hist(
          First(f, {"sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds"}));
      r.prompt_tokens_total = Sum(First(f, {"sglang:prompt_tokens_total", "sglang:prompt_tokens"}));
      break;
    case InferenceEngine::kTriton:
      r.any = AnyPrefix(f, "nv_inference_");
      CollectModels(f, "nv_inference_", "model", models);
      r.waiting = Sum(First(f, {"nv_inference_pending_request_count"}));
      r.requests = Sum(First(f, {"nv_inference_request_success"}));
      r.queue_us = Sum(First(f, {"nv_inference_queue_duration_us"}));
      break;
    case InferenceEngine::kAuto:
      break;
  }
  r.model = Join(models);
  return r;
}

InferenceEngine EngineForProcess(std::string_view comm) {
  std::string lower(comm);
  for (auto& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (lower.find("vllm") != std::string::npos) return InferenceEngine::kVllm;
  // comm is cut at 15 characters: "text-generation-launcher" reads "text-generation".
  if (lower.find("text-generat") != std::string::npos) return InferenceEngine::kTgi;
  if (lower.find("sglang") != std::string::npos) return InferenceEngine::kSglang;
  if (lower.find("tritonserver") != std::string::npos) return InferenceEngine::kTriton;
  return InferenceEngine::kAuto;
}

std::vector<int> DefaultMetricsPorts(InferenceEngine engine) {
  switch (engine) {
    case InferenceEngine::kVllm:
      return {8000};
    case InferenceEngine::kTgi:
      return {80, 3000, 8080};
    case InferenceEngine::kSglang:
      return {30000};
    case InferenceEngine::kTriton:
      return {8002};
    case InferenceEngine::kAuto:
      break;
  }
  return {};
}

}  // namespace gpudoctor
