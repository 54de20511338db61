// `gpudoctor plan kv|batching`: the resource advisor (src/plan). Parses its own flags (plus the
// global ones), resolves the model and the GPU memory (--gpu-mem, or NVML for this node), and
// prints text or --json. Usage errors: exit 3 with one line on stderr naming the value.
#include <cstdio>
#include <optional>

#include "cli/commands.h"
#include "cli/plan_options.h"
#include "core/input_file.h"
#include "core/json_text.h"
#include "core/root_fs.h"
#include "core/strings.h"
#include "nvml/sampler.h"
#include "plan/batching_plan.h"
#include "plan/plan_render.h"

namespace gpudoctor {
namespace {

using plan::PlanOptions;

constexpr size_t kMaxInputBytes = 512u << 20;

void Print(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }

// The model: a preset, optionally with some shape numbers overridden, or a full custom shape.
Status ResolveModel(const PlanOptions& o, plan::PlanSubject& s) {
  if (o.model) {
    const plan::ModelPreset* p = plan::FindModelPreset(*o.model);
    if (p == nullptr) {
      return InvalidArgument("unknown model '" + Sanitize(*o.model, 60) +
                             "' (see gpudoctor plan --list-models, or give --layers --kv-heads "
                             "--head-dim --params)");
    }
    s.model_name = std::string(p->name);
    s.model_title = std::string(p->title);
    s.model_note = std::string(p->note);
    s.input.model = p->shape;
  } else {
    if (!o.layers || !o.kv_heads || !o.head_dim || !o.params) {
      return InvalidArgument(
          "plan needs --model NAME (see --list-models) or all of --layers --kv-heads --head-dim "
          "--params");
    }
    s.model_name = "custom";
  }
  plan::ModelShape& m = s.input.model;
  if (o.layers) m.layers = *o.layers;
  if (o.kv_heads) m.kv_heads = *o.kv_heads;
  if (o.head_dim) m.head_dim = *o.head_dim;
  if (o.params) {
    m.params = m.active_params = *o.params;
    m.experts = m.experts_per_token = 0;
  }
  if (o.active_params) m.active_params = *o.active_params;
  if (o.experts) {
    m.experts = o.experts->first;
    m.experts_per_token = o.experts->second;
  }
  if (m.active_params > m.params) {
    return InvalidArgument("flag --active-params: more active parameters than parameters (" +
                           FormatDouble(m.active_params / 1e9, 2) + "B > " +
                           FormatDouble(m.params / 1e9, 2) + "B)");
  }
  return Status::Ok();
}

// The GPU NVML reported (when plan read it): product name and PCI device id.
struct NvmlGpu {
  std::string product;                    // empty: NVML was not read (--gpu-mem)
  std::optional<uint32_t> pci_device_id;  // device << 16 | vendor
  int index = 0;
};

// GPU memory and product name: --gpu-mem, or NVML GPU --gpu of this node.
Status ResolveGpu(const PlanOptions& o, plan::PlanSubject& s, NvmlGpu* product) {
  if (o.gpu_mem_bytes) {
    s.input.gpu_mem_bytes = *o.gpu_mem_bytes;
    s.gpu_mem_source = "--gpu-mem";
    return Status::Ok();
  }
  auto settings = BuildSettings(o.cli);
  if (!settings.ok()) return settings.status();
  NvmlSampleOptions n;
  n.library_path = (*settings)->nvml_lib;
  n.window = std::chrono::milliseconds(0);
  n.timeout = std::chrono::milliseconds(static_cast<int64_t>((*settings)->nvml_timeout_s * 1000));
  n.deadline = SteadyClock::now() +
               std::chrono::milliseconds(static_cast<int64_t>((*settings)->deadline_s * 1000));
  n.read_events = false;
  GpuLayerFacts facts = SampleNvml(n);
  if (facts.nvml.state != NvmlState::kOk) {
    std::string why = NvmlStateName(facts.nvml.state);
    if (!facts.nvml.error.empty()) why += ": " + facts.nvml.error;
    return InvalidArgument("no GPU memory size from NVML (" + Sanitize(why, 160) +
                           "); pass --gpu-mem SIZE, e.g. --gpu-mem 80GiB");
  }
  for (const auto& g : facts.gpus) {
    if (g.index != o.gpu_index) continue;
    if (!g.memory_total_bytes || *g.memory_total_bytes == 0) {
      return InvalidArgument("NVML GPU " + std::to_string(o.gpu_index) +
                             " reports no memory size; pass --gpu-mem SIZE");
    }
    s.input.gpu_mem_bytes = *g.memory_total_bytes;
    s.gpu_mem_source = "NVML GPU " + std::to_string(g.index) + " " + Sanitize(g.name, 60);
    product->product = g.name;
    product->pci_device_id = g.pci_device_id;
    product->index = g.index;
    return Status::Ok();
  }
  return InvalidArgument("no GPU " + std::to_string(o.gpu_index) + " on this node (NVML sees " +
                         std::to_string(facts.gpus.size()) + "); pass --gpu N or --gpu-mem SIZE");
}

Status FillCommon(const PlanOptions& o, plan::PlanSubject& s, NvmlGpu* product) {
  if (Status st = ResolveModel(o, s); !st.ok()) return st;
  s.input.weight_dtype = o.weight_dtype;
  s.input.kv_dtype = o.kv_dtype;
  s.input.tp = o.tp;
  s.input.block_tokens = o.block_tokens;
  if ((o.reserve_bytes || o.reserve_fraction) &&
      (o.memory_fraction || o.activation_bytes || o.non_torch_bytes)) {
    return InvalidArgument(
        "--reserve is a flat reserve that replaces vLLM's accounting; give it or "
        "--memory-fraction/--activation/--non-torch, not both");
  }
  s.input.reserve_bytes = o.reserve_bytes;
  s.input.reserve_fraction = o.reserve_fraction;
  if (o.memory_fraction) s.input.memory_fraction = *o.memory_fraction;
  s.input.max_batched_tokens = o.max_batched_tokens;
  s.input.max_seqs = o.max_seqs;
  s.input.activation_bytes = o.activation_bytes;
  s.input.non_torch_bytes = o.non_torch_bytes;
  s.input.max_context = o.max_context;
  return ResolveGpu(o, s, product);
}

// The cost model's GPU: --gpu-type, else the NVML GPU by PCI device id, else by its exact
// marketing name; an NVML GPU in neither is an error asking for --gpu-type. Without NVML
// (--gpu-mem) and without --gpu-type, an H100 SXM is assumed and the output says so.
Result<const plan::GpuSpec*> ResolveGpuSpec(const PlanOptions& o, const NvmlGpu& nvml,
                                            std::string* match) {
  if (o.gpu_type) {
    const plan::GpuSpec* g = plan::FindGpuSpec(*o.gpu_type);
    if (g == nullptr) {
      return InvalidArgument("flag --gpu-type: unknown GPU '" + Sanitize(*o.gpu_type, 40) + "' (" +
                             plan::GpuTypeNames() + ", or the exact product name)");
    }
    *match = "--gpu-type";
    return g;
  }
  if (nvml.product.empty()) {
    *match = "assumed: no --gpu-type and no NVML GPU read";
    return plan::FindGpuSpec("h100-sxm");
  }
  std::string gpu = "NVML GPU " + std::to_string(nvml.index);
  char id[16] = "";
  if (nvml.pci_device_id) {
    std::snprintf(id, sizeof(id), "0x%04x", *nvml.pci_device_id >> 16);
    const auto* g =
        plan::FindGpuSpecByPciDeviceId(static_cast<uint16_t>(*nvml.pci_device_id >> 16));
    if (g != nullptr) {
      *match = "PCI device id " + std::string(id) + " of " + gpu;
      return g;
    }
  }
  if (const auto* g = plan::FindGpuSpec(nvml.product); g != nullptr) {
    *match = "product name of " + gpu;
    return g;
  }
  return InvalidArgument(gpu + " '" + Sanitize(nvml.product, 60) + "'" +
                         (id[0] != 0 ? " (PCI device id " + std::string(id) + ")" : "") +
                         " is not in the cost model's GPU table; pass --gpu-type (" +
                         plan::GpuTypeNames() + ")");
}

int RunKv(const PlanOptions& o) {
  plan::PlanSubject s;
  if (o.context && o.context_dist_file) {
    return CouldNotRun("give --context or --context-dist, not both");
  }
  if (o.trace_file) return CouldNotRun("--trace belongs to plan batching, not plan kv");
  if (o.chunked_prefill_tokens > 0 || o.prefix_cache_hit > 0) {
    return CouldNotRun("--chunked-prefill/--prefix-cache-hit belong to plan batching, not plan kv");
  }
  if (o.context_dist_file) {
    auto text = ReadInputFile(*o.context_dist_file, kMaxInputBytes, InputDeadline(o.cli));
    if (!text.ok()) return CouldNotRun("context-dist " + text.status().message());
    auto dist = plan::ParseContextDist(*text);
    if (!dist.ok()) return CouldNotRun(*o.context_dist_file + ": " + dist.status().message());
    s.input.contexts = *dist;
  } else {
    s.input.contexts = plan::SingleContext(o.context.value_or(2048));
  }
  NvmlGpu product;
  if (Status st = FillCommon(o, s, &product); !st.ok()) return CouldNotRun(st.message());
  // The GPU picks the non-torch profile of the reserve; an unknown one is no error here (the KV
  // arithmetic needs only the memory size): the data-centre profile is assumed and said so.
  std::string match;
  auto gpu = ResolveGpuSpec(o, product, &match);
  if (gpu.ok() && (o.gpu_type || !product.product.empty())) {
    s.input.gpu = *gpu;
    s.reserve_gpu = std::string((*gpu)->name) + " (" + match + ")";
  } else {
    s.reserve_gpu = gpu.ok() ? "GPU type unknown: data-centre profile assumed (--gpu-type)"
                             : "GPU not in the table: data-centre profile assumed (--gpu-type)";
  }
  auto kv = plan::PlanKv(s.input);
  if (!kv.ok()) return CouldNotRun(kv.status().message());
  if (o.prefix_share && !o.compare) return CouldNotRun("--prefix-share needs --compare");
  if (!o.compare) {
    Print(o.cli.json ? JsonText(plan::KvPlanJson(s, *kv), 2) + "\n" : plan::KvPlanText(s, *kv));
    return 0;
  }
  auto levers = plan::CompareKvLevers(s.input, o.prefix_share.value_or(0));
  if (!levers.ok()) return CouldNotRun("--compare: " + levers.status().message());
  if (o.cli.json) {
    auto j = plan::KvPlanJson(s, *kv);
    j["levers"] = plan::KvCompareJson(*levers);
    Print(JsonText(j, 2) + "\n");
  } else {
    Print(plan::KvPlanText(s, *kv) + plan::KvCompareText(*levers));
  }
  return 0;
}

int RunBatching(const PlanOptions& o) {
  plan::BatchingSubject b;
  if (o.compare || o.prefix_share) {
    return CouldNotRun("--compare/--prefix-share belong to plan kv, not plan batching");
  }
  if (o.context || o.context_dist_file) {
    return CouldNotRun(
        "--context/--context-dist belong to plan kv; batching takes lengths from "
        "the trace (--prompt-tokens, --output-tokens or --trace)");
  }
  std::vector<plan::Request> trace;
  if (o.trace_file) {
    auto text = ReadInputFile(*o.trace_file, kMaxInputBytes, InputDeadline(o.cli));
    if (!text.ok()) return CouldNotRun("trace " + text.status().message());
    auto parsed = plan::ParseTraceCsv(*text);
    if (!parsed.ok()) return CouldNotRun(*o.trace_file + ": " + parsed.status().message());
    trace = std::move(*parsed);
    b.trace_source = *o.trace_file;
  } else {
    plan::TraceSpec spec{o.rate_per_s, o.requests, o.seed, o.prompt, o.output};
    trace = plan::GenerateTrace(spec);
    b.trace_source = "generated: rate " + FormatDouble(o.rate_per_s, 2) + "/s, seed " +
                     std::to_string(o.seed) + ", prompt " + plan::FormatLengthRange(o.prompt) +
                     ", output " + plan::FormatLengthRange(o.output) + " tokens";
  }
  b.trace_requests = trace.size();
  b.trace_span_s = trace.back().arrival_s - trace.front().arrival_s;

  NvmlGpu product;
  if (Status st = FillCommon(o, b.plan, &product); !st.ok()) return CouldNotRun(st.message());
  auto gpu = ResolveGpuSpec(o, product, &b.gpu_match);
  if (!gpu.ok()) return CouldNotRun(gpu.status().message());
  b.gpu = *gpu;
  b.plan.input.gpu = *gpu;
  b.plan.reserve_gpu = std::string((*gpu)->name) + " (" + b.gpu_match + ")";
  b.gpu_type = std::string((*gpu)->name);
  if (!o.gpu_type && product.product.empty()) b.gpu_type += " (assumed; --gpu-type)";

  plan::BatchingInput in;
  in.kv = b.plan.input;
  in.gpu = **gpu;
  if (o.step_ms) in.overhead_s = *o.step_ms / 1e3;
  if (o.weights_ms) in.weights_s = *o.weights_ms / 1e3;
  if (o.token_us) in.token_s = *o.token_us / 1e6;
  if (o.kv_ns) in.kv_token_s = *o.kv_ns / 1e9;
  in.batch_size = o.batch_size;
  in.max_wait_s = o.max_wait_s;
  in.max_seqs = o.max_seqs;
  in.max_batched_tokens = o.max_batched_tokens;
  in.max_queue = o.max_queue;
  in.max_context = o.max_context;
  in.chunked_prefill_tokens = o.chunked_prefill_tokens;
  in.prefix_cache_hit = o.prefix_cache_hit;
  auto result = plan::PlanBatching(in, trace, !o.no_knobs);
  if (!result.ok()) return CouldNotRun(result.status().message());
  Print(o.cli.json ? JsonText(plan::BatchingJson(b, *result), 2) + "\n"
                   : plan::BatchingText(b, *result));
  // A policy that served nothing has no latency to report: the output says why; exit 1.
  for (const plan::PolicyResult* r : {&result->static_result, &result->continuous_result}) {
    if (r->completed == 0) {
      std::fprintf(stderr, "gpudoctor: %s\n",
                   (r->policy + ": " + plan::AllRejectedReason(*r, result->config)).c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace

bool IsPlanCommand(int argc, const char* const* argv) {
  return plan::IsPlanCommandLine(argc, argv);
}

int PlanMain(int argc, const char* const* argv) {
  auto parsed = plan::ParsePlanCommandLine(argc, argv);
  if (!parsed.ok()) return CouldNotRun(parsed.status().message());
  const PlanOptions& o = *parsed;
  if (o.cli.help) {
    Print(plan::PlanUsageText());
    return 0;
  }
  if (o.cli.positional.empty() && !o.list_models) {
    std::fputs(plan::PlanUsageText().c_str(), stderr);
    return CouldNotRun("plan needs a subcommand: kv or batching");
  }
  if (o.list_models) {
    Print(o.cli.json ? JsonText(plan::ModelListJson(), 2) + "\n" : plan::ModelListText());
    return 0;
  }
  if (o.cli.positional.size() > 1) {
    return CouldNotRun("plan takes one subcommand, got extra '" +
                       Sanitize(o.cli.positional[1], 40) + "'");
  }
  const std::string& sub = o.cli.positional[0];
  if (sub == "kv") return RunKv(o);
  if (sub == "batching") return RunBatching(o);
  return CouldNotRun("unknown plan subcommand '" + Sanitize(sub, 40) + "' (kv or batching)");
}

}  // namespace gpudoctor
