#include "plan/plan_render.h"

#include <cmath>
#include <cstdio>

#include "core/strings.h"

namespace gpudoctor::plan {
namespace {

using nlohmann::ordered_json;

std::string Pad(std::string s, size_t width) {
  if (s.size() < width) s.resize(width, ' ');
  return s;
}
std::string PadLeft(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}
std::string Pct(double f) { return FormatDouble(100 * f, 1) + "%"; }
std::string Num(uint64_t v) { return std::to_string(v); }
std::string Bytes(double b) { return FormatBytes(static_cast<uint64_t>(std::llround(b))); }

std::string ShapeLine(const ModelShape& m, DType kv) {
  return "2 x " + std::to_string(m.layers) + " layers x " + std::to_string(m.kv_heads) +
         " KV heads x " + std::to_string(m.head_dim) + " head dim x " +
         FormatDouble(BytesPerElement(kv), 1) + " B";
}

ordered_json ModelJson(const PlanSubject& s) {
  const ModelShape& m = s.input.model;
  ordered_json j;
  j["name"] = s.model_name;
  j["layers"] = m.layers;
  j["kv_heads"] = m.kv_heads;
  j["head_dim"] = m.head_dim;
  j["params"] = m.params;
  j["active_params"] = m.active_params;
  j["approximate"] = m.approximate;
  if (!s.model_note.empty()) j["note"] = s.model_note;
  return j;
}

std::string Header(const PlanSubject& s) {
  std::string title = s.model_title.empty() ? "" : " (" + s.model_title + ")";
  return s.model_name + title + ", " + DTypeName(s.input.weight_dtype) + " weights, " +
         DTypeName(s.input.kv_dtype) + " KV, tp " + std::to_string(s.input.tp) + "\n";
}

}  // namespace

std::string ModelListText() {
  std::string out = Pad("NAME", 18) + Pad("LAYERS", 8) + Pad("KV_HEADS", 10) + Pad("HEAD_DIM", 10) +
                    Pad("PARAMS", 9) + "KV/TOKEN(fp16)  NOTE\n";
  for (const auto& p : ModelPresets()) {
    const ModelShape& m = p.shape;
    double kv = 2.0 * m.layers * m.kv_heads * m.head_dim * 2;
    out += Pad(std::string(p.name), 18) + Pad(std::to_string(m.layers), 8) +
           Pad(std::to_string(m.kv_heads), 10) + Pad(std::to_string(m.head_dim), 10) +
           Pad(FormatDouble(m.params / 1e9, 1) + "B", 9) + Pad(Bytes(kv), 16) +
           std::string(p.note) + "\n";
  }
  return out;
}

ordered_json ModelListJson() {
  ordered_json arr = ordered_json::array();
  for (const auto& p : ModelPresets()) {
    ordered_json j;
    j["name"] = p.name;
    j["title"] = p.title;
    j["layers"] = p.shape.layers;
    j["kv_heads"] = p.shape.kv_heads;
    j["head_dim"] = p.shape.head_dim;
    j["params"] = p.shape.params;
    j["active_params"] = p.shape.active_params;
    j["approximate"] = p.shape.approximate;
    j["note"] = p.note;
    arr.push_back(j);
  }
  return ordered_json{{"models", arr}};
}

std::string KvPlanText(const PlanSubject& s, const KvPlan& p) {
  const KvPlanInput& in = s.input;
  std::string o = "KV cache plan: " + Header(s);
  if (in.model.approximate) {
    o += "note: " + s.model_note + "; the formula below is an approximation for this model\n";
  }
  auto row = [&](const std::string& k, const std::string& v) { o += "  " + Pad(k, 20) + v + "\n"; };
  row("GPU memory", FormatGiB(in.gpu_mem_bytes) + " (" + s.gpu_mem_source + ")");
  row("weights", FormatGiB(p.weights_bytes_per_gpu) + " per GPU (" +
                     FormatDouble(in.model.params / 1e9, 2) + "B params x " +
                     FormatDouble(BytesPerElement(in.weight_dtype), 1) + " B / tp " +
                     std::to_string(in.tp) + ")");
  if (p.flat_reserve) {
    row("reserve", FormatGiB(p.reserve_bytes) +
                       " (flat, --reserve: activations, CUDA graphs, allocator together)");
  } else {
    row("memory fraction", FormatDouble(in.memory_fraction, 2) + " -> " +
                               FormatGiB(p.usable_bytes) +
                               " for weights, activations and KV (vLLM --gpu-memory-utilization)");
    std::string act = FormatGiB(p.activation.peak_bytes) + " ";
    if (p.activation_given) {
      act += "(--activation)";
    } else {
      act +=
          "(profile run: forward of " + std::to_string(in.max_batched_tokens) + " tokens " +
          FormatGiB(p.activation.forward_bytes) + ", sampler for " + std::to_string(in.max_seqs) +
          " sequences " + FormatGiB(p.activation.sampler_bytes) + "; the larger counts" +
          (p.activation.estimated_shape ? "; sizes estimated from the parameter count" : "") + ")";
    }
    row("activation peak", act);
    row("non-torch", FormatGiB(p.non_torch_bytes) + " " +
                         (p.non_torch_given
                              ? std::string("(--non-torch)")
                              : "(CUDA context, cuBLAS, NCCL: " + std::string(p.non_torch_profile) +
                                    ", tp " + std::to_string(in.tp) +
                                    (s.reserve_gpu.empty() ? "" : "; " + s.reserve_gpu) + ")"));
  }
  row("KV budget", FormatGiB(p.kv_budget_bytes_per_gpu) + " per GPU");
  row("KV per token", Bytes(p.kv_bytes_per_token) + " (" + ShapeLine(in.model, in.kv_dtype) +
                          "); " + Bytes(p.kv_bytes_per_token_per_gpu) + " per GPU");
  row("KV per sequence", Bytes(p.kv_bytes_per_sequence) + " at the mean context of " +
                             FormatDouble(p.mean_context_tokens, 0) + " tokens");
  row("capacity", Num(p.kv_capacity_tokens) + " tokens = " + Num(p.paged_blocks) + " blocks of " +
                      std::to_string(in.block_tokens) + " tokens");
  o += "\nmax concurrent sequences (mean context " + FormatDouble(p.mean_context_tokens, 0) +
       ", longest " + std::to_string(in.contexts.MaxTokens()) + " tokens):\n";
  o += "  " + Pad("paged, " + std::to_string(in.block_tokens) + "-token blocks", 34) +
       PadLeft(Num(p.max_concurrent_sequences), 8) + "   " + Bytes(p.paged_waste_bytes) + " (" +
       Pct(p.paged_waste_fraction) + ") reserved but unused (last block)\n";
  o += "  " + Pad("contiguous, " + std::to_string(p.max_context_tokens) + " tokens each", 34) +
       PadLeft(Num(p.contiguous_max_sequences), 8) + "   " + Bytes(p.contiguous_waste_bytes) +
       " (" + Pct(p.contiguous_waste_fraction) + ") reserved but unused\n";
  o += "\ncontext length -> concurrent sequences (paged):\n";
  for (const auto& c : p.scaling) {
    o += "  " + PadLeft(std::to_string(c.context_tokens), 6) + " tokens  " +
         PadLeft(Num(c.max_concurrent_sequences), 8) + "\n";
  }
  uint64_t at512 = p.scaling[0].max_concurrent_sequences;
  uint64_t at2048 = p.scaling[2].max_concurrent_sequences;
  o += "going from 512 to 2048 tokens per sequence cuts concurrent sequences from " + Num(at512) +
       " to " + Num(at2048);
  if (at2048 > 0) o += " (" + FormatDouble(static_cast<double>(at512) / at2048, 1) + "x fewer)";
  o += "; requests beyond that queue or are preempted\n";
  return o;
}

ordered_json KvPlanJson(const PlanSubject& s, const KvPlan& p) {
  const KvPlanInput& in = s.input;
  ordered_json j;
  j["model"] = ModelJson(s);
  j["weight_dtype"] = DTypeName(in.weight_dtype);
  j["kv_dtype"] = DTypeName(in.kv_dtype);
  j["tp"] = in.tp;
  j["gpu_mem_bytes"] = in.gpu_mem_bytes;
  j["gpu_mem_source"] = s.gpu_mem_source;
  j["kv_bytes_per_token"] = p.kv_bytes_per_token;
  j["kv_bytes_per_token_per_gpu"] = p.kv_bytes_per_token_per_gpu;
  j["kv_bytes_per_sequence"] = p.kv_bytes_per_sequence;
  j["weights_bytes_per_gpu"] = p.weights_bytes_per_gpu;
  j["reserve_bytes"] = p.reserve_bytes;
  j["reserve_model"] = p.flat_reserve ? "flat" : "vllm";
  if (!p.flat_reserve) {
    j["memory_fraction"] = in.memory_fraction;
    j["usable_bytes"] = p.usable_bytes;
    j["max_batched_tokens"] = in.max_batched_tokens;
    j["max_seqs"] = in.max_seqs;
    j["activation_peak_bytes"] = p.activation.peak_bytes;
    j["activation_forward_bytes"] = p.activation.forward_bytes;
    j["activation_sampler_bytes"] = p.activation.sampler_bytes;
    j["non_torch_bytes"] = p.non_torch_bytes;
    j["non_torch_profile"] = p.non_torch_given ? "--non-torch" : std::string(p.non_torch_profile);
  }
  j["kv_budget_bytes_per_gpu"] = p.kv_budget_bytes_per_gpu;
  j["kv_capacity_tokens"] = p.kv_capacity_tokens;
  j["block_tokens"] = in.block_tokens;
  j["paged_blocks"] = p.paged_blocks;
  j["mean_context_tokens"] = p.mean_context_tokens;
  j["max_context_tokens"] = p.max_context_tokens;
  j["max_concurrent_sequences"] = p.max_concurrent_sequences;
  j["contiguous_max_sequences"] = p.contiguous_max_sequences;
  j["paged_waste_fraction"] = p.paged_waste_fraction;
  j["contiguous_waste_fraction"] = p.contiguous_waste_fraction;
  j["paged_waste_bytes"] = p.paged_waste_bytes;
  j["contiguous_waste_bytes"] = p.contiguous_waste_bytes;
  ordered_json scaling = ordered_json::array();
  for (const auto& c : p.scaling) {
    scaling.push_back({{"context_tokens", c.context_tokens},
                       {"max_concurrent_sequences", c.max_concurrent_sequences}});
  }
  j["context_scaling"] = scaling;
  return j;
}

std::string KvCompareText(const KvComparison& c) {
  std::string o = "\nKV memory of one sequence, lever by lever (per GPU; mean context " +
                  FormatDouble(c.mean_context_tokens, 0) + " tokens):\n";
  o += "  " + Pad("lever (each on top of those above)", 60) + PadLeft("per sequence", 14) +
       PadLeft("of baseline", 13) + PadLeft("sequences", 11) + PadLeft("2x prompts", 12) + "\n";
  for (const auto& s : c.steps) {
    o += "  " + Pad(s.lever, 60) + PadLeft(Bytes(s.kv_bytes_per_sequence), 14) +
         PadLeft(Pct(s.fraction_of_baseline), 13) + PadLeft(Num(s.sequences), 11) +
         PadLeft(Pct(s.doubled_fraction_of_baseline), 12) + "\n";
  }
  o += "(2x prompts: KV per sequence with every context doubled, as a share of the baseline's at "
       "the original lengths)\n";
  if (c.first_step_within_a_third >= 0) {
    o += "A third of the memory for prompts twice as long: reached with the levers up to \"" +
         c.steps[c.first_step_within_a_third].lever + "\"\n";
  } else {
    o += "A third of the memory for prompts twice as long: not reached by these levers (" +
         Pct(c.doubled_fraction_of_baseline) + " with all of them)\n";
  }
  o += "Contiguous slots hold " + Pct(c.contiguous_useful_fraction) +
       " useful tokens at these lengths (the vLLM paper measured 20.4-38.2% in earlier servers)";
  o +=
      c.contiguous_useful_fraction >= 0.999
          ? "; with every sequence at the slot size paging gains nothing: give --max-context (what "
            "the server reserves) or --context-dist\n"
          : "\n";
  if (c.prefix_share == 0) o += "No prefix sharing assumed (--prefix-share FRACTION)\n";
  o += "Prompts twice as long (mean " + FormatDouble(2 * c.mean_context_tokens, 0) +
       " tokens) with every lever: " + Bytes(c.doubled_kv_bytes_per_sequence) + " per sequence, " +
       Pct(c.doubled_fraction_of_baseline) + " of the baseline's memory per sequence; " +
       Num(c.doubled_sequences) + " sequences fit\n";
  return o;
}

ordered_json KvCompareJson(const KvComparison& c) {
  ordered_json j;
  j["mean_context_tokens"] = c.mean_context_tokens;
  j["max_context_tokens"] = c.max_context_tokens;
  j["prefix_share_fraction"] = c.prefix_share;
  j["contiguous_useful_fraction"] = c.contiguous_useful_fraction;
  ordered_json steps = ordered_json::array();
  for (const auto& s : c.steps) {
    steps.push_back({{"lever", s.lever},
                     {"kv_bytes_per_sequence", s.kv_bytes_per_sequence},
                     {"fraction_of_baseline", s.fraction_of_baseline},
                     {"kv_budget_bytes_per_gpu", s.kv_budget_bytes_per_gpu},
                     {"max_concurrent_sequences", s.sequences},
                     {"doubled_context_fraction_of_baseline", s.doubled_fraction_of_baseline}});
  }
  j["steps"] = steps;
  if (c.first_step_within_a_third >= 0) {
    j["third_of_the_memory_for_twice_the_context_at"] = c.steps[c.first_step_within_a_third].lever;
  } else {
    j["third_of_the_memory_for_twice_the_context_at"] = nullptr;
  }
  j["doubled_context"] = {{"kv_bytes_per_sequence", c.doubled_kv_bytes_per_sequence},
                          {"fraction_of_baseline", c.doubled_fraction_of_baseline},
                          {"max_concurrent_sequences", c.doubled_sequences}};
  return j;
}

namespace {

// Latency statistics are null when the policy served nothing or is unstable (they would only
// measure the length of the trace).
ordered_json PolicyJson(const PolicyResult& r, const SimConfig& c) {
  const bool latency = r.completed > 0 && r.stable;
  auto stat = [&](double v) { return latency ? ordered_json(v) : ordered_json(nullptr); };
  ordered_json j;
  j["gpu_busy_fraction"] = r.gpu_busy_fraction;
  j["gpu_active_fraction"] = r.gpu_active_fraction;
  j["gpu_time"] = {{"useful_fraction", r.gpu_busy_fraction},
                   {"fill_wait_fraction", r.fill_wait_fraction},
                   {"padding_fraction", r.padding_fraction},
                   {"head_of_line_fraction", r.head_of_line_fraction},
                   {"idle_fraction", r.idle_fraction}};
  j["prefill_fraction"] = r.prefill_fraction;
  j["throughput_tokens_per_s"] = r.throughput_tokens_per_s;
  j["p50_latency_s"] = stat(r.p50_latency_s);
  j["p99_latency_s"] = stat(r.p99_latency_s);
  j["p50_ttft_s"] = stat(r.p50_ttft_s);
  j["p99_ttft_s"] = stat(r.p99_ttft_s);
  j["mean_queue_s"] = stat(r.mean_queue_s);
  j["mean_latency_s"] = stat(r.mean_latency_s);
  j["mean_in_system"] = stat(r.mean_in_system);
  j["completion_rate_per_s"] = r.completion_rate_per_s;
  j["arrival_rate_per_s"] = r.arrival_rate_per_s;
  j["stable"] = r.stable;
  j["overload_factor"] = r.overload_factor;
  j["in_system_at_last_arrival"] = r.in_system_at_last_arrival;
  j["max_queue_len"] = r.max_queue_len;
  j["kv_peak_bytes"] = r.kv_peak_bytes;
  j["kv_capacity_bytes"] = r.kv_capacity_bytes;
  j["batch_slots"] = r.batch_slots;
  j["requests"] = r.requests;
  j["completed"] = r.completed;
  j["rejected"] = r.rejected;
  j["rejected_too_long"] = r.rejected_too_long;
  j["rejected_queue_full"] = r.rejected_queue_full;
  if (r.completed == 0) j["all_rejected_reason"] = AllRejectedReason(r, c);
  j["preemptions"] = r.preemptions;
  j["output_tokens"] = r.output_tokens;
  j["span_s"] = r.span_s;
  return j;
}

std::string Seconds(double s) { return FormatDouble(s, s < 10 ? 3 : 1); }

}  // namespace

std::string AllRejectedReason(const PolicyResult& r, const SimConfig& c) {
  if (r.completed > 0) return "";
  if (r.requests == 0) return "the trace has no requests";
  std::string why;
  if (r.rejected_too_long > 0) {
    if (r.policy == "static" && r.batch_slots == 0) {
      why = "the KV cache (" + Num(c.kv_capacity_tokens) + " tokens) holds no static slot of " +
            std::to_string(c.max_context) + " tokens (--max-context)";
    } else if (r.policy == "static") {
      why = Num(r.rejected_too_long) + " requests are longer than a static slot of " +
            std::to_string(c.max_context) + " tokens (--max-context)";
    } else {
      why = Num(r.rejected_too_long) + " requests need more KV than the whole cache (" +
            Num(c.kv_capacity_tokens) + " tokens)";
    }
  }
  if (r.rejected_queue_full > 0) {
    if (!why.empty()) why += "; ";
    why += Num(r.rejected_queue_full) + " arrived with the queue full (--max-queue " +
           Num(c.max_queue) + ")";
  }
  return "all " + Num(r.requests) + " requests rejected: " + why;
}

namespace {

std::string Times(double x) { return FormatDouble(x, x < 10 ? 2 : 1) + "x"; }

std::string UnstableLine(const PolicyResult& r) {
  return r.policy + " is unstable: arrivals exceed capacity by " + Times(r.overload_factor) + " (" +
         FormatDouble(r.arrival_rate_per_s, 2) + " requests/s arrive, " +
         FormatDouble(r.completion_rate_per_s, 2) + "/s served, " +
         Num(r.in_system_at_last_arrival) +
         " in the system at the last arrival); latency grows without bound, so no latency "
         "percentile is printed: lower the rate or add capacity\n";
}

std::string CostModelText(const CostModel& c) {
  std::string memory = FormatDouble(c.weights_s * 1e3, 2) + " ms weights";
  if (c.experts > 0) {
    memory = FormatDouble(c.weights_s * 1e3, 2) + " ms shared weights + " +
             FormatDouble(c.expert_weights_s * 1e3, 2) + " ms x share of the " +
             std::to_string(c.experts) + " experts touched (" +
             std::to_string(c.experts_per_token) + " per token)";
  }
  return "per iteration " + FormatDouble(c.overhead_s * 1e3, 2) + " ms + max(compute " +
         FormatDouble(c.token_s * 1e6, 2) + " us per token, memory " + memory + " + " +
         FormatDouble(c.kv_token_s * 1e9, 1) + " ns per cached token read)";
}

}  // namespace

std::string BatchingText(const BatchingSubject& s, const BatchingPlan& p) {
  const SimConfig& c = p.config;
  std::string o = "Batching simulation: " + Header(s.plan);
  o += "  GPU              " + FormatGiB(s.plan.input.gpu_mem_bytes) + " (" +
       s.plan.gpu_mem_source + "), cost model of " + s.gpu_type + "\n";
  if (s.gpu != nullptr) {
    double peak = PeakFlops(*s.gpu, s.plan.input.weight_dtype);
    bool fp8 = peak == s.gpu->dense_fp8_flops && s.gpu->dense_fp8_flops > 0;
    o += "  GPU figures      " + std::string(s.gpu->product) + " (" + s.gpu_match +
         "): " + FormatDouble(peak / 1e12, 0) + " TFLOPS dense " + (fp8 ? "fp8" : "bf16") + ", " +
         FormatDouble(s.gpu->hbm_bytes_per_s / 1e12, 2) + " TB/s; " + std::string(s.gpu->source) +
         "\n";
  }
  o += "  trace            " + Num(s.trace_requests) + " requests over " + Seconds(s.trace_span_s) +
       " s (" + s.trace_source + ")\n";
  o += "  cost model       " + CostModelText(c.cost) + "\n";
  o += "  KV capacity      " + Num(c.kv_capacity_tokens) + " tokens (" +
       FormatGiB(p.kv.kv_budget_bytes_per_gpu) + " per GPU); static slots reserve " +
       std::to_string(c.max_context) + " tokens each\n\n";
  const PolicyResult& a = p.static_result;
  const PolicyResult& b = p.continuous_result;
  o += Pad("", 26) + PadLeft("static", 14) + PadLeft("continuous", 14) + "\n";
  auto row = [&](const std::string& k, const std::string& x, const std::string& y) {
    o += Pad(k, 26) + PadLeft(x, 14) + PadLeft(y, 14) + "\n";
  };
  // A latency cell: "unstable" when arrivals outrun the policy, "-" when it served nothing.
  auto lat = [](const PolicyResult& r, double v) {
    if (r.completed == 0) return std::string("-");
    if (!r.stable) return std::string("unstable");
    return Seconds(v);
  };
  row("batch slots", Num(a.batch_slots), Num(b.batch_slots));
  row("GPU busy (useful work)", Pct(a.gpu_busy_fraction), Pct(b.gpu_busy_fraction));
  row("GPU active (incl. padding)", Pct(a.gpu_active_fraction), Pct(b.gpu_active_fraction));
  o += "GPU time lost to:\n";
  row("  waiting for batch fill", Pct(a.fill_wait_fraction), Pct(b.fill_wait_fraction));
  row("  prompt padding", Pct(a.padding_fraction), Pct(b.padding_fraction));
  row("  finished rows held", Pct(a.head_of_line_fraction), Pct(b.head_of_line_fraction));
  row("  idle (nothing queued)", Pct(a.idle_fraction), Pct(b.idle_fraction));
  row("throughput (tokens/s)", FormatDouble(a.throughput_tokens_per_s, 0),
      FormatDouble(b.throughput_tokens_per_s, 0));
  row("p50 latency (s)", lat(a, a.p50_latency_s), lat(b, b.p50_latency_s));
  row("p99 latency (s)", lat(a, a.p99_latency_s), lat(b, b.p99_latency_s));
  row("mean latency (s)", lat(a, a.mean_latency_s), lat(b, b.mean_latency_s));
  row("p50 time to first token", lat(a, a.p50_ttft_s), lat(b, b.p50_ttft_s));
  row("p99 time to first token", lat(a, a.p99_ttft_s), lat(b, b.p99_ttft_s));
  row("mean queue wait (s)", lat(a, a.mean_queue_s), lat(b, b.mean_queue_s));
  row("mean in system", lat(a, a.mean_in_system), lat(b, b.mean_in_system));
  row("arrival / completion rate", a.completed > 0 ? Times(a.overload_factor) : "-",
      b.completed > 0 ? Times(b.overload_factor) : "-");
  row("max queue length", Num(a.max_queue_len), Num(b.max_queue_len));
  row("KV peak", Bytes(static_cast<double>(a.kv_peak_bytes)),
      Bytes(static_cast<double>(b.kv_peak_bytes)));
  row("completed", Num(a.completed), Num(b.completed));
  row("rejected", Num(a.rejected), Num(b.rejected));
  row("preemptions", "-", Num(b.preemptions));
  for (const PolicyResult* r : {&a, &b}) {
    if (r->completed == 0) {
      o += r->policy + ": " + AllRejectedReason(*r, c) + "\n";
    } else if (!r->stable) {
      o += UnstableLine(*r);
    }
  }
  if (p.continuous_prefill_result) {
    const PolicyResult& d = *p.continuous_prefill_result;
    std::string levers;
    if (p.chunked_prefill_tokens > 0) {
      levers = "chunked prefill " + Num(p.chunked_prefill_tokens) + " tokens per iteration";
    }
    if (p.prefix_cache_hit > 0) {
      levers += (levers.empty() ? "" : ", ") + std::string("prefix cache hit ") +
                Pct(p.prefix_cache_hit) + " of each prompt";
    }
    o += "\nprefill scheduling (continuous; after: " + levers + "):\n";
    o += Pad("", 26) + PadLeft("before", 14) + PadLeft("after", 14) + "\n";
    row("p50 time to first token", lat(b, b.p50_ttft_s), lat(d, d.p50_ttft_s));
    row("p99 time to first token", lat(b, b.p99_ttft_s), lat(d, d.p99_ttft_s));
    row("prefill share of GPU time", Pct(b.prefill_fraction), Pct(d.prefill_fraction));
    row("GPU busy", Pct(b.gpu_busy_fraction), Pct(d.gpu_busy_fraction));
    row("throughput (tokens/s)", FormatDouble(b.throughput_tokens_per_s, 0),
        FormatDouble(d.throughput_tokens_per_s, 0));
    row("p99 latency (s)", lat(b, b.p99_latency_s), lat(d, d.p99_latency_s));
    row("preemptions", Num(b.preemptions), Num(d.preemptions));
    if (!d.stable) o += UnstableLine(d);
  }
  if (!p.knobs.empty()) {
    o += "\none knob at a time:\n";
    auto p99 = [](bool stable, double v) { return stable ? Seconds(v) : std::string("unstable"); };
    for (const auto& k : p.knobs) {
      double thr = k.throughput_before > 0
                       ? 100 * (k.throughput_after - k.throughput_before) / k.throughput_before
                       : 0;
      o += "  " + Pad(k.policy + ": " + k.knob + " " + k.from + " -> " + k.to, 52) + "throughput " +
           (thr >= 0 ? "+" : "") + FormatDouble(thr, 1) + "%, p99 " +
           p99(k.stable_before, k.p99_before_s) + " -> " + p99(k.stable_after, k.p99_after_s) +
           (k.stable_before || k.stable_after ? " s" : "") + "\n";
    }
    if (p.most_important_knob == "policy") {
      o += "no single knob moves throughput or p99 latency by " + Pct(kKnobThreshold) +
           ": at this load the policy (static -> continuous) is what matters\n";
    } else {
      o += "the knob that matters most here: " + p.most_important_knob + "\n";
    }
  }
  return o;
}

ordered_json BatchingJson(const BatchingSubject& s, const BatchingPlan& p) {
  ordered_json j;
  j["model"] = ModelJson(s.plan);
  j["weight_dtype"] = DTypeName(s.plan.input.weight_dtype);
  j["kv_dtype"] = DTypeName(s.plan.input.kv_dtype);
  j["tp"] = s.plan.input.tp;
  j["gpu_mem_bytes"] = s.plan.input.gpu_mem_bytes;
  j["gpu_mem_source"] = s.plan.gpu_mem_source;
  j["gpu_type"] = s.gpu_type;
  j["trace"] = {
      {"source", s.trace_source}, {"requests", s.trace_requests}, {"span_s", s.trace_span_s}};
  const CostModel& cost = p.config.cost;
  j["cost_model"] = {{"overhead_s", cost.overhead_s}, {"token_s", cost.token_s},
                     {"weights_s", cost.weights_s},   {"expert_weights_s", cost.expert_weights_s},
                     {"experts", cost.experts},       {"experts_per_token", cost.experts_per_token},
                     {"kv_token_s", cost.kv_token_s}};
  if (s.gpu != nullptr) {
    j["gpu"] = {{"name", s.gpu->name},
                {"product", s.gpu->product},
                {"matched_by", s.gpu_match},
                {"peak_flops", PeakFlops(*s.gpu, s.plan.input.weight_dtype)},
                {"dense_bf16_flops", s.gpu->dense_bf16_flops},
                {"dense_fp8_flops", s.gpu->dense_fp8_flops},
                {"hbm_bytes_per_s", s.gpu->hbm_bytes_per_s},
                {"source", s.gpu->source}};
  }
  j["kv_bytes_per_token"] = p.kv.kv_bytes_per_token;
  j["kv_capacity_tokens"] = p.config.kv_capacity_tokens;
  j["block_tokens"] = p.config.block_tokens;
  j["max_context_tokens"] = p.config.max_context;
  j["static"] = PolicyJson(p.static_result, p.config);
  j["continuous"] = PolicyJson(p.continuous_result, p.config);
  if (p.continuous_prefill_result) {
    ordered_json d = PolicyJson(*p.continuous_prefill_result, p.config);
    d["chunked_prefill_tokens"] = p.chunked_prefill_tokens;
    d["prefix_cache_hit_fraction"] = p.prefix_cache_hit;
    j["continuous_prefill"] = d;
  }
  ordered_json knobs = ordered_json::array();
  for (const auto& k : p.knobs) {
    knobs.push_back({{"knob", k.knob},
                     {"policy", k.policy},
                     {"from", k.from},
                     {"to", k.to},
                     {"throughput_before_tokens_per_s", k.throughput_before},
                     {"throughput_after_tokens_per_s", k.throughput_after},
                     {"p99_before_s", k.p99_before_s},
                     {"p99_after_s", k.p99_after_s},
                     {"gpu_busy_fraction_after", k.busy_after},
                     {"stable_before", k.stable_before},
                     {"stable_after", k.stable_after}});
  }
  j["knobs"] = knobs;
  if (!p.most_important_knob.empty()) j["most_important_knob"] = p.most_important_knob;
  return j;
}

}  // namespace gpudoctor::plan
