// Facts about the inference servers on this node: what their own Prometheus metrics say
// ([[inference]] tables and local listeners of known engines; probes/inference_probe.cc).
// Units: ratios 0..1, request counts, seconds, tokens. Absent (nullopt) when the engine does not
// expose the metric (TGI and Triton have no KV-cache usage, TGI no TTFT) or nothing was observed
// in the window.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpudoctor {

// Percentiles of a latency histogram over the window (the difference of two reads).
struct LatencyWindow {
  std::optional<double> p50_s, p95_s, p99_s;
  double observations = 0;  // in the window
};

struct InferenceFacts {
  std::string name;       // the [[inference]] name, else "<engine>:<port>"
  std::string engine;     // "vllm", "tgi", "sglang", "triton" ("auto" until detected)
  std::string url;        // the metrics URL read (no userinfo)
  std::string source;     // "config" or "discovered"
  std::vector<int> pids;  // discovered: the processes listening on the port
  std::string error;      // why the read failed this tick; "" when fine
  std::string model;      // served model name(s) from the metrics' labels; "" unknown
  // The planner's preset matching the served model ("llama-3.1-8b"), its KV bytes per token
  // (fp16 KV); empty/0 when no preset matches.
  std::string plan_model;
  uint64_t plan_kv_bytes_per_token = 0;

  std::optional<double> kv_cache_usage;  // 0..1
  std::optional<double> requests_waiting, requests_running;
  std::optional<double> preemptions_total;  // the engine's counter as read now
  // Preemptions in the window, restarts counted from zero (a counter that went down restarted).
  std::optional<double> preemptions_window;
  std::optional<double> requests_window;     // finished requests in the window
  std::optional<double> queue_seconds_mean;  // Triton: queue time per request in the window
  double window_s = 0;                       // the span the *_window values cover
  LatencyWindow ttft, tpot;
  // Context lengths the engine reports (over its lifetime): prompt tokens per request.
  std::optional<double> prompt_tokens_mean, prompt_tokens_p95;
  std::optional<double> generation_tokens_mean;
  uint64_t restarts = 0;  // counter resets seen since watch started
};

}  // namespace gpudoctor
