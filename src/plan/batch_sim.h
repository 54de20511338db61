// Discrete-event simulation of an LLM server over a request trace (`gpudoctor plan batching`),
// one GPU group (a tensor-parallel set) under two scheduling policies:
//
// static     (SimulateStatic) wait until batch_size requests are queued or the oldest has waited
//            max_wait_s; prefill the batch padded to its longest prompt, decode until its longest
//            output is done (finished rows stay in the batch as padding); every request gets its
//            answer when the batch ends. Each slot pre-allocates max_context tokens of KV, so the
//            batch is also capped at kv_capacity_tokens / max_context.
// continuous (SimulateContinuous) iteration-level scheduling with a paged KV cache (vLLM-like):
//            every iteration admits queued requests first come first served while a sequence
//            slot (max_seqs), blocks for the prompt and the prefill token budget allow; every
//            running sequence then decodes one token; a sequence that needs a block when none is
//            free preempts the youngest running one (recomputed later).
//
// Time of each iteration: CostModel (cost_model.h). The first output token comes out of the
// prefill iteration. "Busy" counts iteration time spent on real requests; the padding rows of a
// static batch are "active" (the GPU runs kernels, nvidia-smi shows it busy) but not busy.
// Pure functions, deterministic, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/cost_model.h"
#include "plan/trace.h"

namespace gpudoctor::plan {

struct SimConfig {
  CostModel cost;
  double kv_bytes_per_token = 0;    // per GPU (kv_bytes_per_token_per_gpu of the plan)
  uint64_t kv_capacity_tokens = 0;  // KV budget of the group, in tokens
  uint64_t max_queue = 100000;      // arrivals beyond this many waiting are rejected
  // static
  uint32_t batch_size = 8;
  double max_wait_s = 0.05;
  uint32_t max_context = 4096;  // tokens reserved per slot (prompt + output)
  // continuous
  uint32_t max_seqs = 256;
  uint32_t block_tokens = 16;
  uint32_t max_batched_tokens = 8192;  // prefill tokens per iteration (one prompt always fits)
  // Chunked prefill (vLLM --enable-chunked-prefill): tokens per iteration, decodes first, the
  // rest to prompt chunks (a prompt spans iterations); 0: whole prompts, max_batched_tokens.
  uint32_t chunked_prefill_tokens = 0;
  // Prefix cache: fraction of each prompt found cached (whole blocks, never the last token), not
  // recomputed at prefill; its blocks are still counted in the sequence's KV. 0: none.
  double prefix_cache_hit = 0;
};

struct RequestOutcome {
  double arrival_s = 0;  // from the trace (set for every request, served or not)
  bool served = false;
  double latency_s = 0;  // arrival to last token
  double ttft_s = 0;     // arrival to first token
  double queue_s = 0;    // arrival to first scheduled
};

struct PolicyResult {
  std::string policy;  // "static", "continuous"
  uint64_t requests = 0, completed = 0, rejected = 0, preemptions = 0;
  // rejected = rejected_too_long (can never fit: longer than a static slot, or than the whole
  // paged cache) + rejected_queue_full (arrived with max_queue already waiting).
  uint64_t rejected_too_long = 0, rejected_queue_full = 0;
  uint64_t prompt_tokens = 0, output_tokens = 0;  // of completed requests
  uint32_t batch_slots = 0;  // static: effective batch size; continuous: max_seqs
  double span_s = 0;         // first arrival to last completion (or last arrival)
  double busy_s = 0, active_s = 0;
  // Where the span goes, seconds; with busy_s they add up to span_s. fill_wait_s: the GPU idle
  // while requests are queued, waiting for a static batch to fill (or for max_wait_s).
  // padding_s: prefill rows padded to the longest prompt of a static batch. head_of_line_s:
  // decode rows of a static batch that finished but stay until its longest output is done.
  // idle_s: the GPU idle with nothing queued. A step's time is shared among its rows in
  // proportion (a padded row costs what a real one does). Continuous batching has no fill wait,
  // padding or head-of-line: only busy_s and idle_s.
  double fill_wait_s = 0, padding_s = 0, head_of_line_s = 0, idle_s = 0;
  // Seconds of iterations spent on prefill (padding included): a step's time shared between its
  // prefill and decode tokens in proportion. prefill_fraction = prefill_s / span_s.
  double prefill_s = 0, prefill_fraction = 0;
  // The same as fractions of span_s (gpu_busy_fraction is the useful share).
  double fill_wait_fraction = 0, padding_fraction = 0, head_of_line_fraction = 0;
  double idle_fraction = 0;
  double gpu_busy_fraction = 0, gpu_active_fraction = 0;
  double throughput_tokens_per_s = 0;  // output tokens of completed requests / span
  double p50_latency_s = 0, p99_latency_s = 0, p50_ttft_s = 0, p99_ttft_s = 0;
  double mean_queue_s = 0;
  double mean_latency_s = 0;  // W: mean arrival-to-last-token of completed requests
  // L: time average over the span of the number of requests in the system (queued or running),
  // integrated from the arrival and completion times. Little's law: L = completion rate x W.
  double mean_in_system = 0;
  double completion_rate_per_s = 0;  // completed / span
  uint64_t max_queue_len = 0;
  uint64_t kv_peak_bytes = 0, kv_capacity_bytes = 0;

  // Stability. arrival_rate_per_s: requests that fit / (last arrival - first arrival), 0 when
  // they all arrive at once. overload_factor: arrival rate / completion rate (about 1 when
  // the server keeps up; the factor by which arrivals exceed capacity when it does not).
  // in_system_at_last_arrival: requests queued or running when the last one arrives. Unstable
  // when overload_factor >= kOverloadFactor and either the queue limit rejected arrivals or the
  // backlog at the last arrival is at least half of what a server that far behind accumulates
  // (and at least kMinBacklog): latency then grows with the length of the trace.
  double arrival_rate_per_s = 0;
  double overload_factor = 0;
  uint64_t in_system_at_last_arrival = 0;
  bool stable = true;

  std::vector<RequestOutcome> outcomes;  // one per request of the trace, same order
};

inline constexpr double kOverloadFactor = 1.05;
inline constexpr uint64_t kMinBacklog = 20;

PolicyResult SimulateStatic(const std::vector<Request>& trace, const SimConfig& config);
PolicyResult SimulateContinuous(const std::vector<Request>& trace, const SimConfig& config);

// Fills the percentiles, means, fractions, Little's-law terms and stability of `r` from its
// outcomes and totals.
void Summarise(PolicyResult& r);

}  // namespace gpudoctor::plan
