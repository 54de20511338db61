#include "cli/plan_options.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/arg_walker.h"
#include "core/strings.h"
#include "plan/context_dist.h"

namespace gpudoctor::plan {
namespace {

std::string Got(std::string_view v) { return ", got '" + Sanitize(v, 40) + "'"; }

Result<int64_t> IntIn(std::string_view v, int64_t lo, int64_t hi, std::string_view what) {
  auto n = ParseInt64(v);
  if (!n || *n < lo || *n > hi) {
    return InvalidArgument("expected " + std::string(what) + " in [" + std::to_string(lo) + ", " +
                           std::to_string(hi) + "]" + Got(v));
  }
  return *n;
}

Result<double> DoubleIn(std::string_view v, double lo, double hi, std::string_view what) {
  auto d = ParseDouble(v);
  if (!d || *d < lo || *d > hi) {
    return InvalidArgument("expected " + std::string(what) + " in [" + FormatDouble(lo, 3) + ", " +
                           FormatDouble(hi, 0) + "]" + Got(v));
  }
  return *d;
}

// "8e9", "8030000000", "8B", "70b", "405B", "350M".
Result<double> ParseParams(std::string_view v) {
  std::string_view t = Trim(v);
  double mult = 1;
  if (!t.empty() && (t.back() == 'B' || t.back() == 'b')) {
    mult = 1e9;
    t.remove_suffix(1);
  } else if (!t.empty() && (t.back() == 'M' || t.back() == 'm')) {
    mult = 1e6;
    t.remove_suffix(1);
  }
  auto d = ParseDouble(t);
  if (!d || !(*d * mult >= 1e6) || *d * mult > 1e14) {
    return InvalidArgument("expected a parameter count like 8B, 70b or 8.03e9 (at least 1M)" +
                           Got(v));
  }
  return *d * mult;
}

template <typename T, typename F>
Status Set(Result<T> r, F&& store) {
  if (!r.ok()) return r.status();
  store(*r);
  return Status::Ok();
}

// vLLM rejects 0 and anything above 1.
Status SetMemoryFraction(std::string_view v, PlanOptions& o) {
  auto d = DoubleIn(v, 0, 1, "memory fraction");
  if (d.ok() && *d == 0) return InvalidArgument("memory fraction must be above 0" + Got(v));
  return Set(d, [&](double f) { o.memory_fraction = f; });
}

}  // namespace

const std::vector<PlanFlag>& PlanFlagTable() {
  static const std::vector<PlanFlag> flags = {
      {"--model", "NAME", "model preset (see --list-models)",
       [](std::string_view v, PlanOptions& o) -> Status {
         if (v.empty()) return InvalidArgument("model name must not be empty");
         o.model = std::string(v);
         return Status::Ok();
       }},
      {"--list-models", "", "print the model presets",
       [](std::string_view v, PlanOptions& o) -> Status {
         o.list_models = true;
         return Status::Ok();
       }},
      {"--layers", "N", "transformer layers (any model not in the presets)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(IntIn(v, 1, 10000, "layers"),
                    [&](int64_t n) { o.layers = static_cast<int>(n); });
       }},
      {"--kv-heads", "N", "key/value heads (GQA/MQA: fewer than attention heads)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(IntIn(v, 1, 10000, "KV heads"),
                    [&](int64_t n) { o.kv_heads = static_cast<int>(n); });
       }},
      {"--head-dim", "N", "elements per attention head",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(IntIn(v, 1, 100000, "head dim"),
                    [&](int64_t n) { o.head_dim = static_cast<int>(n); });
       }},
      {"--params", "COUNT", "parameters: 8B, 70b, 8.03e9",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(ParseParams(v), [&](double p) { o.params = p; });
       }},
      {"--active-params", "COUNT", "parameters used per token (MoE; default: --params)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(ParseParams(v), [&](double p) { o.active_params = p; });
       }},
      {"--experts", "E:K", "MoE routing: E routed experts, K per token (e.g. 8:2)",
       [](std::string_view v, PlanOptions& o) -> Status {
         size_t colon = v.find(':');
         auto e = ParseInt64(v.substr(0, colon));
         auto k = colon == std::string_view::npos ? std::nullopt : ParseInt64(v.substr(colon + 1));
         if (!e || !k || *k < 1 || *e <= *k || *e > 100000) {
           return InvalidArgument("expected E:K with 1 <= K < E <= 100000, like 8:2" + Got(v));
         }
         o.experts = std::pair<int, int>(static_cast<int>(*e), static_cast<int>(*k));
         return Status::Ok();
       }},
      {"--dtype", "TYPE", "weights: fp16, bf16 (default), fp8, int8, int4",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(ParseDType(v), [&](DType t) { o.weight_dtype = t; });
       }},
      {"--kv-dtype", "TYPE", "KV cache: fp16 (default), bf16, fp8, int8",
       [](std::string_view v, PlanOptions& o) -> Status {
         auto t = ParseDType(v);
         if (t.ok() && *t == DType::kInt4) return InvalidArgument("int4 is for weights, not KV");
         return Set(t, [&](DType d) { o.kv_dtype = d; });
       }},
      {"--tp", "N", "tensor-parallel degree (default 1)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(IntIn(v, 1, 1024, "tensor-parallel degree"),
                    [&](int64_t n) { o.tp = static_cast<int>(n); });
       }},
      {"--gpu-mem", "SIZE", "memory of one GPU: 80GiB, 141GB (default: NVML, this node)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(ParseByteSize(v), [&](uint64_t b) { o.gpu_mem_bytes = b; });
       }},
      {"--gpu", "N", "NVML index of the GPU to read memory and type from (default 0)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(IntIn(v, 0, 1023, "GPU index"),
                    [&](int64_t n) { o.gpu_index = static_cast<int>(n); });
       }},
      {"--memory-fraction", "F",
       "share of GPU memory the server may use, vLLM --gpu-memory-utilization (default 0.90)",
       [](std::string_view v, PlanOptions& o) -> Status { return SetMemoryFraction(v, o); }},
      {"--gpu-memory-utilization", "F", "the same as --memory-fraction (vLLM's name)",
       [](std::string_view v, PlanOptions& o) -> Status { return SetMemoryFraction(v, o); }},
      {"--max-batched-tokens", "N",
       "tokens of one iteration: the profile run's forward pass (kv reserve) and batching's "
       "prefill budget (default 8192)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(IntIn(v, 1, 10'000'000, "tokens"),
                    [&](int64_t n) { o.max_batched_tokens = static_cast<uint32_t>(n); });
       }},
      {"--activation", "SIZE", "activation peak per GPU instead of the model's (vLLM's log)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(ParseByteSize(v), [&](uint64_t b) { o.activation_bytes = b; });
       }},
      {"--non-torch", "SIZE", "non-torch memory per GPU instead of the model's (vLLM's log)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(ParseByteSize(v), [&](uint64_t b) { o.non_torch_bytes = b; });
       }},
      {"--reserve", "SIZE|PCT",
       "a flat reserve instead of vLLM's accounting: 8GiB or 10% of the GPU",
       [](std::string_view v, PlanOptions& o) -> Status {
         std::string_view t = Trim(v);
         if (!t.empty() && t.back() == '%') {
           return Set(DoubleIn(t.substr(0, t.size() - 1), 0, 99, "reserve percent"),
                      [&](double p) { o.reserve_fraction = p / 100; });
         }
         return Set(ParseByteSize(v), [&](uint64_t b) { o.reserve_bytes = b; });
       }},
      {"--block-size", "TOKENS", "paged KV block (default 16)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(IntIn(v, 1, 4096, "block tokens"),
                    [&](int64_t n) { o.block_tokens = static_cast<uint32_t>(n); });
       }},
      {"--context", "TOKENS", "kv: sequence length, prompt + output (default 2048)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(IntIn(v, 1, kMaxContextTokens, "context tokens"),
                    [&](int64_t n) { o.context = static_cast<uint32_t>(n); });
       }},
      {"--context-dist", "FILE", "kv: TOKENS[,WEIGHT] lines, a length distribution",
       [](std::string_view v, PlanOptions& o) -> Status {
         if (v.empty()) return InvalidArgument("file name must not be empty");
         o.context_dist_file = std::string(v);
         return Status::Ok();
       }},
      {"--max-context", "TOKENS", "tokens a contiguous allocator reserves per request",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(IntIn(v, 1, kMaxContextTokens, "max context tokens"),
                    [&](int64_t n) { o.max_context = static_cast<uint32_t>(n); });
       }},
      {"--compare", "", "kv: KV per sequence before and after each lever (paging, fp8, ...)",
       [](std::string_view v, PlanOptions& o) -> Status {
         o.compare = true;
         return Status::Ok();
       }},
      {"--prefix-share", "FRACTION",
       "kv --compare: share of each sequence that is a prefix shared with others, [0, 1)",
       [](std::string_view v, PlanOptions& o) -> Status {
         auto d = ParseDouble(v);
         if (!d || !(*d >= 0 && *d < 1)) {
           return InvalidArgument("expected a fraction in [0, 1), like 0.5" + Got(v));
         }
         o.prefix_share = *d;
         return Status::Ok();
       }},
      {"--gpu-type", "NAME",
       "batching cost model GPU: h100-sxm, h100-pcie, a100-pcie-40gb, l40s, ... (default: NVML)",
       [](std::string_view v, PlanOptions& o) -> Status {
         if (v.empty()) return InvalidArgument("GPU type must not be empty");
         o.gpu_type = std::string(v);
         return Status::Ok();
       }},
      {"--trace", "FILE.csv", "batching: requests (arrival_s,prompt_tokens,output_tokens)",
       [](std::string_view v, PlanOptions& o) -> Status {
         if (v.empty()) return InvalidArgument("file name must not be empty");
         o.trace_file = std::string(v);
         return Status::Ok();
       }},
      {"--rate", "R", "batching: generated arrivals per second (default 2)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(DoubleIn(v, 1e-6, 1e6, "requests per second"),
                    [&](double r) { o.rate_per_s = r; });
       }},
      {"--requests", "N", "batching: generated requests (default 2000)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(IntIn(v, 1, 10'000'000, "requests"), [&](int64_t n) { o.requests = n; });
       }},
      {"--seed", "S", "batching: seed of the generated trace (default 1)",
       [](std::string_view v, PlanOptions& o) -> Status {
         auto s = ParseUint64(v);
         if (!s) return InvalidArgument("expected a non-negative integer" + Got(v));
         o.seed = *s;
         return Status::Ok();
       }},
      {"--prompt-tokens", "N|LO:HI",
       "batching: prompt lengths, LO:HI uniform or exp:MEAN:MAX (default 256:2048)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(ParseLengthRange(v), [&](LengthRange r) { o.prompt = r; });
       }},
      {"--output-tokens", "N|LO:HI",
       "batching: output lengths, LO:HI or exp:MEAN:MAX (default exp:256:2048)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(ParseLengthRange(v), [&](LengthRange r) { o.output = r; });
       }},
      {"--batch-size", "N", "batching: static batch size (default 16)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(IntIn(v, 1, 65536, "batch size"),
                    [&](int64_t n) { o.batch_size = static_cast<uint32_t>(n); });
       }},
      {"--max-wait", "SECONDS", "batching: static batch assembly wait (default 0.05)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(DoubleIn(v, 0, 3600, "seconds"), [&](double s) { o.max_wait_s = s; });
       }},
      {"--max-seqs", "N",
       "sequences of one iteration: the profile run's sampler (kv reserve) and batching's "
       "continuous slots (default 256)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(IntIn(v, 1, 65536, "sequences"),
                    [&](int64_t n) { o.max_seqs = static_cast<uint32_t>(n); });
       }},
      {"--max-queue", "N", "batching: waiting requests before rejecting (default 100000)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(IntIn(v, 0, 100'000'000, "queue length"), [&](int64_t n) { o.max_queue = n; });
       }},
      {"--step-ms", "MS", "batching cost model: overhead per iteration, outside the roofline",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(DoubleIn(v, 0, 60000, "milliseconds"), [&](double d) { o.step_ms = d; });
       }},
      {"--weights-ms", "MS", "batching cost model: time to read the weights once",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(DoubleIn(v, 0, 60000, "milliseconds"), [&](double d) { o.weights_ms = d; });
       }},
      {"--token-us", "US", "batching cost model: compute per token processed",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(DoubleIn(v, 0, 1e6, "microseconds"), [&](double d) { o.token_us = d; });
       }},
      {"--kv-ns", "NS", "batching cost model: per cached token read per decode step",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(DoubleIn(v, 0, 1e6, "nanoseconds"), [&](double d) { o.kv_ns = d; });
       }},
      {"--chunked-prefill", "TOKENS",
       "batching: continuous also with chunked prefill, TOKENS per iteration (before/after)",
       [](std::string_view v, PlanOptions& o) -> Status {
         return Set(IntIn(v, 1, 1'000'000, "tokens per iteration"),
                    [&](int64_t n) { o.chunked_prefill_tokens = static_cast<uint32_t>(n); });
       }},
      {"--prefix-cache-hit", "FRACTION",
       "batching: continuous also with this share of each prompt cached, [0, 1) (before/after)",
       [](std::string_view v, PlanOptions& o) -> Status {
         auto d = ParseDouble(v);
         if (!d || !(*d >= 0 && *d < 1)) {
           return InvalidArgument("expected a fraction in [0, 1), like 0.4" + Got(v));
         }
         o.prefix_cache_hit = *d;
         return Status::Ok();
       }},
      {"--no-knobs", "", "batching: skip the one-knob-at-a-time comparison",
       [](std::string_view v, PlanOptions& o) -> Status {
         o.no_knobs = true;
         return Status::Ok();
       }},
  };
  return flags;
}

namespace {

const PlanFlag* FindPlanFlag(std::string_view name) {
  for (const auto& f : PlanFlagTable()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const FlagSpec* FindGlobalFlag(std::string_view name) {
  for (const auto& f : FlagTable()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

}  // namespace

bool IsPlanCommandLine(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") return i + 1 < argc && std::string_view(argv[i + 1]) == "plan";
    if (arg.empty() || arg[0] != '-' || arg == "-") return arg == "plan";
    if (arg.find('=') != std::string_view::npos) continue;
    bool takes_value = false;
    if (const PlanFlag* p = FindPlanFlag(arg)) takes_value = !p->value_name.empty();
    if (const FlagSpec* g = FindGlobalFlag(arg)) takes_value = !g->value_name.empty();
    if (takes_value) ++i;
  }
  return false;
}

Result<PlanOptions> ParsePlanCommandLine(int argc, const char* const* argv) {
  PlanOptions o;
  ArgHandlers h;
  h.positional = [&](std::string_view arg) {
    if (o.cli.command.empty()) {
      o.cli.command = std::string(arg);
    } else {
      o.cli.positional.emplace_back(arg);
    }
  };
  h.value_name_of = [&](std::string_view name) -> std::optional<std::string_view> {
    if (const PlanFlag* p = FindPlanFlag(name)) return p->value_name;
    if (const FlagSpec* g = FindGlobalFlag(name)) return g->value_name;
    return std::nullopt;
  };
  h.flag = [&](std::string_view name, std::optional<std::string_view> value) {
    if (const PlanFlag* p = FindPlanFlag(name)) return p->apply(value.value_or(""), o);
    if (!value) o.cli.switches.emplace_back(name);
    return FindGlobalFlag(name)->apply(value.value_or(""), o.cli);
  };
  if (Status s = WalkArgs(argc, argv, h, "see gpudoctor plan --help"); !s.ok()) return s;
  return o;
}

std::string PlanUsageText() {
  std::string u =
      "usage: gpudoctor plan kv|batching [flags]\n"
      "\n"
      "  plan kv         KV-cache size per token and sequence, concurrent sequences that fit,\n"
      "                  paged blocks against contiguous pre-allocation, 512 -> 8192 tokens\n"
      "  plan batching   simulate static against continuous batching over a request trace\n"
      "\n"
      "plan flags:\n";
  for (const auto& f : PlanFlagTable()) {
    std::string left = "  ";
    left += f.name;
    if (!f.value_name.empty()) {
      left += ' ';
      left += f.value_name;
    }
    if (left.size() < 30) {
      left.resize(30, ' ');
    } else {
      left += "  ";
    }
    u += left;
    u += f.help;
    u += '\n';
  }
  u +=
      "\nglobal flags that apply: --json, --nvml-lib PATH, --nvml-timeout SECONDS, --config FILE\n";
  return u;
}

}  // namespace gpudoctor::plan
