// Inference rules, one finding per engine endpoint (subject = its name):
//  - inference.kv_cache.full: KV usage >= usage_pct and >= min_preemptions preemptions in the
//    window (engines without a KV or preemption metric — TGI, Triton — never raise it);
//  - inference.queue: requests waiting >= min_waiting while every GPU the engine serves from
//    (facts/inference_state.h) is at or below max_gpu_util_pct; without GPU facts, not judged;
//  - inference.latency: the window's p95 TTFT or TPOT over its threshold, with at least
//    min_requests observations.
#include <string>

#include "core/strings.h"
#include "facts/inference_state.h"
#include "rules/engine.h"
#include "rules/make_finding.h"
#include "rules/thresholds.h"

namespace gpudoctor {
namespace {

std::string Who(const InferenceFacts& f) {
  std::string s = f.name;
  if (!f.model.empty()) s += " (" + Sanitize(f.model, 80) + ")";
  return s;
}

// The model name `gpudoctor plan` takes: the matched preset, else a placeholder to fill in.
std::string PlanModel(const InferenceFacts& f) {
  return f.plan_model.empty() ? std::string("MODEL") : f.plan_model;
}

// The context the planner should size for: the p95 prompt plus the mean generation, rounded
// up to 256 tokens; 2048 when the engine reports no lengths.
int64_t PlanContext(const InferenceFacts& f) {
  double c = f.prompt_tokens_p95.value_or(f.prompt_tokens_mean.value_or(0)) +
             f.generation_tokens_mean.value_or(0);
  if (!(c > 0)) return 2048;
  int64_t r = static_cast<int64_t>((c + 255) / 256) * 256;
  return std::clamp<int64_t>(r, 256, 1 << 20);
}

void Base(Finding& f, const InferenceFacts& e) {
  f.subject = e.name;
  f.Add("inference", e.name).Add("engine", e.engine).Add("url", e.url);
  if (!e.model.empty()) f.Add("model", Sanitize(e.model, 200));
  if (!e.plan_model.empty()) f.Add("plan_model", e.plan_model);
}

void KvFullRule(const InferenceFacts& e, const Thresholds& t, std::vector<Finding>& out) {
  const char* id = "inference.kv_cache.full";
  if (!e.kv_cache_usage || !e.preemptions_window) return;
  double pct = 100 * *e.kv_cache_usage;
  if (pct < t.Get(id, "usage_pct") || *e.preemptions_window < t.Get(id, "min_preemptions")) {
    return;
  }
  std::string summary = Who(e) + ": KV cache " + FormatDouble(pct, 1) + "% full, " +
                        FormatDouble(*e.preemptions_window, 0) +
                        " request(s) preempted in the last " + FormatDouble(e.window_s, 0) + " s";
  Finding f = MakeFinding(id, Severity::kWarn, summary);
  Base(f, e);
  f.Add("kv_cache_usage_pct", pct).Add("preemptions_window", *e.preemptions_window);
  f.Add("window_s", e.window_s);
  if (e.requests_waiting) f.Add("requests_waiting", *e.requests_waiting);
  if (e.prompt_tokens_mean) f.Add("prompt_tokens_mean", *e.prompt_tokens_mean);
  if (e.prompt_tokens_p95) f.Add("prompt_tokens_p95", *e.prompt_tokens_p95);
  if (e.restarts) f.Add("restarts", e.restarts);
  std::string ctx = std::to_string(PlanContext(e));
  std::string lengths =
      e.prompt_tokens_mean
          ? "its requests carry " + FormatDouble(*e.prompt_tokens_mean, 0) +
                " prompt tokens on "
                "average" +
                (e.prompt_tokens_p95 ? " (p95 " + FormatDouble(*e.prompt_tokens_p95, 0) + ")" : "")
          : "the engine reports no prompt lengths";
  f.next_steps.insert(f.next_steps.begin(),
                      "Size the cache for what is served: `gpudoctor plan kv --model " +
                          PlanModel(e) + " --context " + ctx + "` (" + lengths + ").");
  out.push_back(std::move(f));
}

void QueueRule(const InferenceFacts& e, const Snapshot& snap, const Thresholds& t,
               std::vector<Finding>& out) {
  const char* id = "inference.queue";
  if (!e.requests_waiting || *e.requests_waiting < t.Get(id, "min_waiting")) return;
  double max_util = t.Get(id, "max_gpu_util_pct");
  std::vector<const GpuFacts*> serving;
  for (const auto& g : snap.gpu.gpus) {
    if (InferenceServesGpu(e, g)) serving.push_back(&g);
  }
  bool known = !serving.empty();
  if (!known) {
    for (const auto& g : snap.gpu.gpus) {
      if (g.processes && !g.processes->empty()) serving.push_back(&g);
    }
  }
  if (serving.empty()) return;
  double util_max = 0;
  std::string gpus;
  for (const GpuFacts* g : serving) {
    if (!g->util_gpu_pct) return;  // not known: not judged
    util_max = std::max<double>(util_max, *g->util_gpu_pct);
    gpus += (gpus.empty() ? "" : ",") + std::to_string(g->index);
  }
  if (util_max > max_util) return;
  std::string summary = Who(e) + ": " + FormatDouble(*e.requests_waiting, 0) +
                        " request(s) waiting while GPU " + gpus + " is at most " +
                        FormatDouble(util_max, 0) + "% busy";
  if (e.requests_running) summary += " (" + FormatDouble(*e.requests_running, 0) + " running)";
  Finding f = MakeFinding(id, Severity::kWarn, summary);
  Base(f, e);
  f.Add("requests_waiting", *e.requests_waiting).Add("gpu_util_max_pct", util_max);
  f.Add("gpus", gpus).AddBool("gpu_attributed", known);
  if (e.requests_running) f.Add("requests_running", *e.requests_running);
  if (e.queue_seconds_mean) f.Add("queue_seconds_mean", *e.queue_seconds_mean);
  double rate = e.requests_window && e.window_s > 0 ? *e.requests_window / e.window_s : 0;
  std::string rate_s = rate > 0 ? FormatDouble(rate, 2) : std::string("2");
  f.next_steps.insert(
      f.next_steps.begin(),
      "Compare batching policies for " +
          (e.model.empty() ? std::string("the served model") : Sanitize(e.model, 80)) +
          " at its measured rate: `gpudoctor plan batching --model " + PlanModel(e) + " --gpu " +
          std::to_string(serving.front()->index) + " --rate " + rate_s + " --requests 2000`.");
  out.push_back(std::move(f));
}

void LatencyRule(const InferenceFacts& e, const Thresholds& t, std::vector<Finding>& out) {
  const char* id = "inference.latency";
  double min_n = t.Get(id, "min_requests");
  double ttft_max = t.Get(id, "ttft_p95_s"), tpot_max = t.Get(id, "tpot_p95_s");
  bool ttft = e.ttft.p95_s && e.ttft.observations >= min_n && *e.ttft.p95_s > ttft_max;
  bool tpot = e.tpot.p95_s && e.tpot.observations >= min_n && *e.tpot.p95_s > tpot_max;
  if (!ttft && !tpot) return;
  std::string what;
  if (ttft) {
    what = "p95 time to first token " + FormatDouble(*e.ttft.p95_s, 2) + " s (threshold " +
           FormatDouble(ttft_max, 2) + " s)";
  }
  if (tpot) {
    what += (what.empty() ? "" : ", ") + std::string("p95 time per output token ") +
            FormatDouble(*e.tpot.p95_s * 1000, 0) + " ms (threshold " +
            FormatDouble(tpot_max * 1000, 0) + " ms)";
  }
  Finding f =
      MakeFinding(id, Severity::kWarn,
                  Who(e) + ": " + what + " over the last " + FormatDouble(e.window_s, 0) + " s");
  Base(f, e);
  if (e.ttft.p95_s) f.Add("ttft_p95_s", *e.ttft.p95_s).Add("ttft_requests", e.ttft.observations);
  if (e.ttft.p50_s) f.Add("ttft_p50_s", *e.ttft.p50_s);
  if (e.tpot.p95_s) f.Add("tpot_p95_s", *e.tpot.p95_s).Add("tpot_requests", e.tpot.observations);
  if (e.tpot.p50_s) f.Add("tpot_p50_s", *e.tpot.p50_s);
  f.Add("window_s", e.window_s);
  out.push_back(std::move(f));
}

}  // namespace

void InferenceRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out) {
  for (const InferenceFacts& e : snap.inference) {
    if (!e.error.empty() && !e.requests_waiting && !e.kv_cache_usage) continue;
    KvFullRule(e, t, out);
    QueueRule(e, snap, t, out);
    LatencyRule(e, t, out);
  }
}

}  // namespace gpudoctor
