// Text and JSON of `gpudoctor plan kv` and `gpudoctor plan batching`. JSON keys carry their
// units (`_bytes`, `_s`, `_tokens`, `_fraction`); the contract keys are kv_bytes_per_token and
// max_concurrent_sequences (kv), and static/continuous objects with gpu_busy_fraction,
// throughput_tokens_per_s, p50_latency_s, p99_latency_s, kv_peak_bytes (batching).
// Pure functions, thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "plan/batching_plan.h"
#include "plan/kv_compare.h"
#include "plan/kv_planner.h"

namespace gpudoctor::plan {

struct PlanSubject {
  std::string model_name;  // preset name or "custom"
  std::string model_title;
  std::string model_note;
  KvPlanInput input;           // shape, dtypes, tp, memory, block size, contexts
  std::string gpu_mem_source;  // "--gpu-mem", "NVML GPU 0 (NVIDIA H100 80GB HBM3)"
  std::string reserve_gpu;     // the GPU whose non-torch profile the reserve uses, and why
};

std::string ModelListText();
nlohmann::ordered_json ModelListJson();

std::string KvPlanText(const PlanSubject& s, const KvPlan& p);
nlohmann::ordered_json KvPlanJson(const PlanSubject& s, const KvPlan& p);

// `plan kv --compare`: the levers' table, appended to KvPlanText; a "levers" object for the JSON.
std::string KvCompareText(const KvComparison& c);
nlohmann::ordered_json KvCompareJson(const KvComparison& c);

struct BatchingSubject {
  PlanSubject plan;
  std::string gpu_type;          // cost model GPU: a GpuSpec name, "h100-sxm (assumed; --gpu-type)"
  const GpuSpec* gpu = nullptr;  // its row of the GPU table
  std::string gpu_match;  // how it was chosen: "--gpu-type", "PCI device id 0x2330 of NVML GPU 0"
  std::string trace_source;  // "generated: rate 20/s, seed 1, ..." or the CSV path
  uint64_t trace_requests = 0;
  double trace_span_s = 0;
};

std::string BatchingText(const BatchingSubject& s, const BatchingPlan& p);
// Why a policy served nothing ("every request needs more than ..."); empty when it served some.
std::string AllRejectedReason(const PolicyResult& r, const SimConfig& c);
nlohmann::ordered_json BatchingJson(const BatchingSubject& s, const BatchingPlan& p);

}  // namespace gpudoctor::plan
