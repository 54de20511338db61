// Catalogue section: the inference servers' own signals (vLLM, TGI, SGLang, Triton metrics read by
// the inference probe: [[inference]] tables and local listeners of known engines).
#include "rules/catalogue.h"

namespace gpudoctor {

const std::vector<CatalogueEntry>& InferenceCatalogue() {
  static const std::vector<CatalogueEntry> entries = {
      {"inference.kv_cache.full",
       Layer::kResources,
       Severity::kWarn,
       Action::kFixConfig,
       "Inference server's KV cache full: requests preempted",
       "The inference engine reports its KV cache nearly full and it preempted running requests "
       "in the last window (vLLM's num_preemptions counter grew): the sequences it holds no "
       "longer fit, so it evicts some and recomputes them later. Throughput drops and latency "
       "jumps, typically after prompts grew (512 to 2048 tokens quadruples the cache each "
       "sequence needs) or concurrency rose. The engine's own numbers, not a guess from GPU "
       "memory: vLLM allocates its cache up front, so GPU memory looks full even when the "
       "cache is not.",
       {"Size the cache for the served model and the real context lengths: `gpudoctor plan kv "
        "--model MODEL --context N` (the finding gives MODEL and the p95 prompt length).",
        "Lower concurrency or context: `--max-num-seqs`, `--max-model-len` (vLLM), "
        "`--max-running-requests`, `--context-length` (SGLang).",
        "Give the cache more room: raise `--gpu-memory-utilization` if other memory allows, use "
        "fp8 KV (`--kv-cache-dtype fp8`), or shard the model over more GPUs (tensor parallel)."},
       {{"usage_pct", 90, "KV cache usage (percent) at or above which the cache counts as full"},
        {"min_preemptions", 1, "preemptions in the window that make a full cache a finding"}},
       {.pace = Pace::kSustained}},
      {"inference.queue",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kFixConfig,
       "Requests wait while the GPU is not busy",
       "The inference engine has requests waiting in its queue while the GPUs it serves from "
       "are mostly idle. The GPU is not the limit: the scheduler is (a batch size or token "
       "budget too small, static batching that waits for a full batch, a single-request "
       "backend, a CPU-bound tokenizer or pre-processing step, or a rate limit in front of it).",
       {"Compare static and continuous batching for the served model on this GPU: `gpudoctor "
        "plan batching --model MODEL --gpu N --rate R` (the finding gives MODEL, N and R).",
        "Raise the engine's batch limits: `--max-num-seqs` / `--max-num-batched-tokens` (vLLM), "
        "`--max-batch-total-tokens` / `--max-concurrent-requests` (TGI), "
        "`--max-running-requests` (SGLang), `dynamic_batching` and `max_batch_size` in the "
        "model's config.pbtxt (Triton).",
        "Check the host side: a saturated CPU core (tokenizer, Python front end) shows in this "
        "report's CPU findings."},
       {{"min_waiting", 1, "requests waiting at or above which the queue counts"},
        {"max_gpu_util_pct", 50, "GPU utilisation at or below which the GPU counts as not busy"}},
       {.pace = Pace::kSustained}},
      {"inference.latency",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kWatch,
       "Inference latency over its threshold",
       "The time to first token (TTFT) or the time per output token (TPOT, inter-token latency) "
       "of the requests finished in the last window is over its threshold at the 95th "
       "percentile, from the engine's own histograms (the difference of two reads, so old "
       "requests do not count). A long TTFT is queueing or long prefills (prompts); a long TPOT "
       "is a large or starved decode batch, preemptions, or a slowed GPU.",
       {"Read the other findings of this report: a full KV cache (inference.kv_cache.full), "
        "requests queueing (inference.queue), a throttled GPU (gpu.clocks.*, gpu.thermal).",
        "TTFT: check the queue and prompt lengths; enable chunked prefill or prefix caching.",
        "TPOT: lower the batch size or concurrency, or add GPUs; `gpudoctor why` ranks what "
        "changed when it became slow."},
       {{"ttft_p95_s", 2, "p95 time to first token (seconds) above which latency is a finding"},
        {"tpot_p95_s", 0.2, "p95 time per output token (seconds) above which it is a finding"},
        {"min_requests", 5, "observations a window needs before its percentiles are judged"}},
       {.pace = Pace::kSustained}},
  };
  return entries;
}

}  // namespace gpudoctor
