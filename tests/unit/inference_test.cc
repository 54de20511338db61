// Inference servers' own signals: the Prometheus text parser (exposition format 0.0.4), each
// engine's metrics normalised (names and types as the engines document them: vLLM 0.5.3 and
// stable/V1 "Production Metrics", TGI docs/source/reference/metrics.md, SGLang
// docs/references/production_metrics.md, Triton r24.04 docs/user_guide/metrics.md), the window
// with counter resets, [[inference]] validation, and the three inference findings.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "cli/cli_options.h"
#include "config/config.h"
#include "facts/inference_state.h"
#include "finding_test_util.h"
#include "inference/engine_metrics.h"
#include "inference/inference_window.h"
#include "inference/prom_text.h"
#include "rules/engine.h"
#include "rules/thresholds.h"

namespace gpudoctor {
namespace {

using ::testing::HasSubstr;

std::vector<PromTextFamily> Parse(const std::string& text) {
  auto r = ParsePromText(text);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::vector<PromTextFamily>{};
}

TEST(PromTextTest, HelpTypeLabelsEscapesSpecialValuesAndTimestamps) {
  auto f = Parse(
      "# HELP http_requests_total The total number of HTTP requests.\\nSecond line \\\\ x\n"
      "# TYPE http_requests_total counter\n"
      "http_requests_total{method=\"post\",code=\"200\"} 1027 1395066363000\n"
      "http_requests_total{method=\"post\",code=\"400\"}    3 1395066363000\r\n"
      "\n"
      "# A plain comment\n"
      "msdos_file_access_time_seconds{path=\"C:\\\\DIR\\\\FILE.TXT\",error=\"Cannot find file:\\n"
      "\\\"FILE.TXT\\\"\"} 1.458255915e9\n"
      "metric_without_timestamp_and_labels 12.47\n"
      "something_weird{problem=\"division by zero\"} +Inf -3982045\n"
      "nan_value NaN\n"
      "neg -Inf\n"
      "trailing_comma{a=\"1\",} 2\n");
  ASSERT_EQ(f.size(), 7u);
  EXPECT_EQ(f[0].name, "http_requests_total");
  EXPECT_EQ(f[0].type, "counter");
  EXPECT_EQ(f[0].help, "The total number of HTTP requests.\nSecond line \\ x");
  ASSERT_EQ(f[0].samples.size(), 2u);
  EXPECT_EQ(f[0].samples[1].value, 3);
  EXPECT_EQ(*f[0].samples[0].timestamp_ms, 1395066363000);
  EXPECT_EQ(*PromLabel(f[0].samples[0].labels, "code"), "200");
  EXPECT_EQ(f[1].type, "untyped");
  EXPECT_EQ(*PromLabel(f[1].samples[0].labels, "path"), "C:\\DIR\\FILE.TXT");
  EXPECT_EQ(*PromLabel(f[1].samples[0].labels, "error"), "Cannot find file:\n\"FILE.TXT\"");
  EXPECT_DOUBLE_EQ(f[1].samples[0].value, 1.458255915e9);
  EXPECT_TRUE(std::isinf(f[3].samples[0].value));
  EXPECT_EQ(*f[3].samples[0].timestamp_ms, -3982045);
  EXPECT_TRUE(std::isnan(f[4].samples[0].value));
  const PromTextFamily* neg = FindPromFamily(f, "neg");
  ASSERT_NE(neg, nullptr);
  EXPECT_TRUE(std::isinf(neg->samples[0].value) && neg->samples[0].value < 0);
  const PromTextFamily* comma = FindPromFamily(f, "trailing_comma");
  ASSERT_NE(comma, nullptr);
  EXPECT_EQ(*PromLabel(comma->samples[0].labels, "a"), "1");
}

TEST(PromTextTest, HistogramsSummariesAndCountersOwnTheirSuffixedSamples) {
  auto f = Parse(
      "# TYPE rpc histogram\n"
      "rpc_bucket{le=\"0.05\"} 24054\n"
      "rpc_bucket{le=\"0.1\"} 33444\n"
      "rpc_bucket{le=\"+Inf\"} 144320\n"
      "rpc_sum 53423\n"
      "rpc_count 144320\n"
      "# TYPE lat summary\n"
      "lat{quantile=\"0.5\"} 4773\n"
      "lat_sum 1.7560473e+07\n"
      "lat_count 2693\n"
      "# TYPE vllm:num_preemptions counter\n"
      "vllm:num_preemptions_total{model_name=\"m\"} 7\n");
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].samples.size(), 5u);
  EXPECT_EQ(f[1].samples.size(), 3u);
  EXPECT_EQ(f[2].samples.size(), 1u);
  auto h = SumPromHistogram(f[0]);
  ASSERT_TRUE(h);
  ASSERT_EQ(h->buckets.size(), 3u);
  EXPECT_TRUE(std::isinf(h->buckets[2].first));
  EXPECT_EQ(h->count, 144320);
  EXPECT_EQ(h->sum, 53423);
}

TEST(PromTextTest, ErrorsNameTheLineAndWhatWasWrong) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {"ok 1\nbad{a=\"x} 1\n", "line 2: unterminated label value"},
           {"a{b=\"\\q\"} 1\n", "line 1: bad escape"},
           {"a{b=1} 1\n", "needs a quoted value"},
           {"a{1b=\"x\"} 1\n", "bad label name"},
           {"a 1\n\na twelve\n", "line 3: value 'twelve' of a is not a number"},
           {"a 1 12.5\n", "is not a timestamp"},
           {"# TYPE a countr\n", "unknown type 'countr'"},
           {"9a 1\n", "must start with a metric name"},
           {"a{b=\"x\" 1\n", "expected ',' or '}'"},
       }) {
    auto r = ParsePromText(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_THAT(r.status().message(), HasSubstr(c.says)) << c.text;
  }
  PromTextLimits lim;
  lim.max_samples = 2;
  auto r = ParsePromText("a 1\nb 2\nc 3\n", lim);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("more than 2 samples"));
}

TEST(PromTextTest, SelectorsMatchLikePrometheus) {
  auto m = ParsePromSelector("{rank=\"0\", job!=\"eval\"}");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->size(), 2u);
  EXPECT_TRUE(PromMatches({{"rank", "0"}, {"job", "train"}}, *m));
  EXPECT_TRUE(PromMatches({{"rank", "0"}}, *m));  // a missing label reads as ""
  EXPECT_FALSE(PromMatches({{"rank", "0"}, {"job", "eval"}}, *m));
  EXPECT_FALSE(PromMatches({{"rank", "1"}}, *m));
  EXPECT_TRUE(ParsePromSelector("").ok());
  EXPECT_TRUE(ParsePromSelector("rank=\"0\"").ok());
  EXPECT_THAT(ParsePromSelector("{rank=~\"0|1\"}").status().message(), HasSubstr("regex"));
  EXPECT_THAT(ParsePromSelector("{rank=0}").status().message(), HasSubstr("double-quoted"));
  EXPECT_THAT(ParsePromSelector("{rank=\"0\"").status().message(), HasSubstr("missing '}'"));
}

TEST(PromTextTest, HistogramQuantileInterpolatesInsideTheBucket) {
  PromHistogram h;
  h.buckets = {{0.1, 10}, {0.5, 90}, {1.0, 100}, {INFINITY, 100}};
  EXPECT_NEAR(*PromHistogramQuantile(h, 0.5), 0.1 + 0.4 * 40 / 80, 1e-9);
  EXPECT_NEAR(*PromHistogramQuantile(h, 0.95), 0.5 + 0.5 * 5 / 10, 1e-9);
  EXPECT_NEAR(*PromHistogramQuantile(h, 0.05), 0.05, 1e-9);
  h.buckets = {{0.1, 0}, {1.0, 0}, {INFINITY, 4}};  // everything past the last bound
  EXPECT_EQ(*PromHistogramQuantile(h, 0.5), 1.0);
  h.buckets = {{0.1, 0}, {INFINITY, 0}};
  EXPECT_FALSE(PromHistogramQuantile(h, 0.5));
}

// The documented shapes of each engine (values made up; names, types and labels as documented).
std::string VllmV1(double kv, double waiting, double preemptions) {
  std::string m = "{model_name=\"meta-llama/Llama-3.1-8B-Instruct\",engine=\"0\"}";
  return "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
         "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running" +
         m +
         " 4.0\n"
         "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting" +
         m + " " + std::to_string(waiting) +
         "\n"
         "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc" +
         m + " " + std::to_string(kv) +
         "\n"
         "# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total" +
         m + " " + std::to_string(preemptions) +
         "\n"
         "# TYPE vllm:request_prompt_tokens histogram\n"
         "vllm:request_prompt_tokens_bucket{le=\"1000.0\"," +
         m.substr(1) +
         " 1.0\n"
         "vllm:request_prompt_tokens_bucket{le=\"2000.0\"," +
         m.substr(1) +
         " 4.0\n"
         "vllm:request_prompt_tokens_bucket{le=\"+Inf\"," +
         m.substr(1) +
         " 4.0\n"
         "vllm:request_prompt_tokens_count" +
         m + " 4.0\nvllm:request_prompt_tokens_sum" + m + " 6656.0\n";
}

TEST(EngineMetricsTest, VllmV1AndV0NamesNormaliseToTheSameReading) {
  EngineReading r = NormaliseEngine(InferenceEngine::kAuto, Parse(VllmV1(0.97, 3, 12)));
  EXPECT_EQ(r.engine, InferenceEngine::kVllm);
  EXPECT_EQ(r.model, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_DOUBLE_EQ(*r.kv_usage_ratio, 0.97);
  EXPECT_EQ(*r.waiting, 3);
  EXPECT_EQ(*r.running, 4);
  EXPECT_EQ(*r.preemptions, 12);
  ASSERT_TRUE(r.prompt_tokens);
  EXPECT_EQ(r.prompt_tokens->count, 4);
  // v0.5.x: gpu_cache_usage_perc and time_per_output_token_seconds.
  EngineReading v0 = NormaliseEngine(
      InferenceEngine::kVllm,
      Parse("# TYPE vllm:gpu_cache_usage_perc gauge\n"
            "vllm:gpu_cache_usage_perc{model_name=\"m\"} 0.5\n"
            "# TYPE vllm:time_per_output_token_seconds histogram\n"
            "vllm:time_per_output_token_seconds_bucket{le=\"0.1\",model_name=\"m\"} 2.0\n"
            "vllm:time_per_output_token_seconds_bucket{le=\"+Inf\",model_name=\"m\"} 2.0\n"
            "vllm:time_per_output_token_seconds_count{model_name=\"m\"} 2.0\n"
            "vllm:time_per_output_token_seconds_sum{model_name=\"m\"} 0.1\n"));
  EXPECT_DOUBLE_EQ(*v0.kv_usage_ratio, 0.5);
  ASSERT_TRUE(v0.tpot);
  EXPECT_EQ(v0.tpot->count, 2);
}

TEST(EngineMetricsTest, TgiSglangAndTritonAsDocumented) {
  EngineReading tgi =
      NormaliseEngine(InferenceEngine::kAuto,
                      Parse("# TYPE tgi_queue_size gauge\ntgi_queue_size 7\n"
                            "# TYPE tgi_batch_current_size gauge\ntgi_batch_current_size 2\n"
                            "# TYPE tgi_request_success counter\ntgi_request_success 40\n"));
  EXPECT_EQ(tgi.engine, InferenceEngine::kTgi);
  EXPECT_EQ(*tgi.waiting, 7);
  EXPECT_EQ(*tgi.running, 2);
  EXPECT_EQ(*tgi.requests, 40);
  EXPECT_FALSE(tgi.kv_usage_ratio);  // TGI documents no KV metric
  // SGLang's documented example lines (docs/references/production_metrics.md).
  EngineReading sg = NormaliseEngine(
      InferenceEngine::kAuto,
      Parse("# HELP sglang:token_usage The token usage\n# TYPE sglang:token_usage gauge\n"
            "sglang:token_usage{model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 0.28\n"
            "# HELP sglang:num_running_reqs The number of running requests\n"
            "# TYPE sglang:num_running_reqs gauge\n"
            "sglang:num_running_reqs{model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 162.0\n"
            "# HELP sglang:num_queue_reqs The number of requests in the waiting queue\n"
            "# TYPE sglang:num_queue_reqs gauge\n"
            "sglang:num_queue_reqs{model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 2826.0\n"));
  EXPECT_EQ(sg.engine, InferenceEngine::kSglang);
  EXPECT_DOUBLE_EQ(*sg.kv_usage_ratio, 0.28);
  EXPECT_EQ(*sg.waiting, 2826);
  EXPECT_EQ(*sg.running, 162);
  // Triton: the summary example's counter equivalents, two models summed.
  EngineReading tr = NormaliseEngine(
      InferenceEngine::kAuto,
      Parse("# TYPE nv_inference_request_success counter\n"
            "nv_inference_request_success{model=\"my_model\",version=\"1\"} 161\n"
            "nv_inference_request_success{model=\"other\",version=\"1\"} 39\n"
            "# TYPE nv_inference_queue_duration_us counter\n"
            "nv_inference_queue_duration_us{model=\"my_model\",version=\"1\"} 11110\n"
            "# TYPE nv_inference_pending_request_count gauge\n"
            "nv_inference_pending_request_count{model=\"my_model\",version=\"1\"} 3\n"));
  EXPECT_EQ(tr.engine, InferenceEngine::kTriton);
  EXPECT_EQ(*tr.requests, 200);
  EXPECT_EQ(*tr.queue_us, 11110);
  EXPECT_EQ(*tr.waiting, 3);
  EXPECT_EQ(tr.model, "my_model, other");
  // Nothing of the engine's: not `any`.
  EXPECT_FALSE(NormaliseEngine(InferenceEngine::kVllm, Parse("up 1\n")).any);
  EXPECT_EQ(EngineForProcess("text-generation"), InferenceEngine::kTgi);
  EXPECT_EQ(EngineForProcess("tritonserver"), InferenceEngine::kTriton);
  EXPECT_EQ(EngineForProcess("python3"), InferenceEngine::kAuto);
}

TEST(InferenceWindowTest, CounterResetCountsTheNewValueAsTheIncrease) {
  InferenceWindow w(60);
  InferenceFacts f;
  auto read = [](double pre) {
    EngineReading r;
    r.engine = InferenceEngine::kVllm;
    r.preemptions = pre;
    r.kv_usage_ratio = 0.95;
    return r;
  };
  w.Add(read(100), 0, f);
  EXPECT_FALSE(f.preemptions_window);  // the first read gives levels only
  w.Add(read(104), 10, f);
  EXPECT_EQ(*f.preemptions_window, 4);
  // The engine restarted: 104 -> 3 is 3 new preemptions, not -101.
  w.Add(read(3), 20, f);
  EXPECT_EQ(*f.preemptions_window, 7);
  EXPECT_EQ(f.restarts, 1u);
  EXPECT_EQ(f.window_s, 20);
  // Past the window the old increases drop out.
  w.Add(read(3), 75, f);
  w.Add(read(3), 90, f);
  EXPECT_EQ(*f.preemptions_window, 0);
}

TEST(InferenceWindowTest, HistogramPercentilesOverTheWindowSurviveARestart) {
  PromHistogram a, b, c;
  a.buckets = {{0.5, 100}, {1, 100}, {5, 100}, {INFINITY, 100}};
  a.count = 100;
  b.buckets = {{0.5, 100}, {1, 100}, {5, 110}, {INFINITY, 110}};  // 10 slow ones since
  b.count = 110;
  bool reset = false;
  PromHistogram d = HistogramDelta(a, b, &reset);
  EXPECT_FALSE(reset);
  EXPECT_EQ(d.buckets[2].second, 10);
  EXPECT_EQ(d.buckets[0].second, 0);
  c.buckets = {{0.5, 0}, {1, 0}, {5, 2}, {INFINITY, 2}};  // restarted: 2 observations
  c.count = 2;
  d = HistogramDelta(b, c, &reset);
  EXPECT_TRUE(reset);
  EXPECT_EQ(d.count, 2);

  InferenceWindow w(60);
  InferenceFacts f;
  EngineReading r;
  r.engine = InferenceEngine::kVllm;
  r.ttft = a;
  w.Add(r, 0, f);
  r.ttft = b;
  w.Add(r, 5, f);
  EXPECT_EQ(f.ttft.observations, 10);
  EXPECT_GT(*f.ttft.p95_s, 1.0);  // every request of the window took 1-5 s
  EXPECT_LE(*f.ttft.p95_s, 5.0);
}

TEST(InferenceConfigTest, TablesAreValidatedWithFileLineAndKey) {
  Settings s;
  auto ok = ApplyConfigText(
      "[[inference]]\nurl = \"http://127.0.0.1:8000\"\nengine = \"vllm\"\nname = \"chat\"\n"
      "[[inference]]\nurl = \"https://triton.local:8002/metrics\"\n",
      "g.toml", s);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ASSERT_EQ(s.inference.size(), 2u);
  EXPECT_EQ(s.inference[0].engine, "vllm");
  EXPECT_EQ(s.inference[1].engine, "auto");
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {"[[inference]]\nengine = \"vllm\"\n", "g.toml:1: [[inference]] #1 needs url"},
           {"[[inference]]\nurl = \"ftp://x\"\n",
            "g.toml:2: [[inference]] #1 key 'url': must "
            "be an http:// or https:// URL"},
           // The same URL check as every other URL in the config (HttpUrlProblem).
           {"[[inference]]\nurl = \"http://127.0.0.1:99999/metrics\"\n",
            "g.toml:2: [[inference]] #1 key 'url': has a port outside 1-65535"},
           {"[[inference]]\nurl = \"http://bad!host/metrics\"\n", "has an invalid host"},
           {"[[job]]\nname = \"t\"\nprometheus_url = \"http://x:0/metrics\"\nmetric = \"s\"\n",
            "key 'prometheus_url': has a port outside 1-65535"},
           {"[[inference]]\nurl = \"http://x\"\nengine = \"ollama\"\n",
            "key 'engine': must be one of vllm, tgi, sglang, triton, auto"},
           {"[[inference]]\nurl = \"http://x\"\nname = \"a\"\n[[inference]]\nurl = "
            "\"http://y\"\nname = \"a\"\n",
            "already the name of another [[inference]]"},
           {"[[job]]\nname = \"t\"\nprometheus_url = \"http://x/metrics\"\n",
            "key 'prometheus_url': needs the key metric"},
           {"[[job]]\nname = \"t\"\nprometheus_url = \"http://x\"\nmetric = \"a b\"\n",
            "must be a Prometheus metric name"},
           {"[[job]]\nname = \"t\"\nprometheus_url = \"http://x\"\nmetric = \"steps\"\nselector "
            "= \"{rank=~\\\"0\\\"}\"\n",
            "regex matchers"},
       }) {
    Settings t;
    auto r = ApplyConfigText(c.text, "g.toml", t);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_THAT(r.status().message(), HasSubstr(c.says)) << c.text;
  }
}

// Discovery of local servers is switched off on its own, the [[inference]] tables still read.
TEST(InferenceConfigTest, DiscoveryCanBeSwitchedOffWithoutTheTables) {
  Settings defaults;
  EXPECT_TRUE(defaults.inference_discover);
  Settings s;
  auto ok = ApplyConfigText(
      "[inference_discovery]\nenabled = false\n\n[[inference]]\nurl = "
      "\"http://127.0.0.1:8000/metrics\"\n",
      "g.toml", s);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_TRUE(ok->warnings.empty()) << ok->warnings[0];
  EXPECT_FALSE(s.inference_discover);
  ASSERT_EQ(s.inference.size(), 1u);
  Settings t;
  auto bad = ApplyConfigText("[inference_discovery]\nenabled = \"no\"\n", "g.toml", t);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("g.toml:2: key 'inference_discovery.enabled': must be"));
  EXPECT_NE(DefaultConfigText().find("[inference_discovery]\n"), std::string::npos);

  const char* args[] = {"gpudoctor", "check", "--no-inference-discovery"};
  auto o = ParseCommandLine(3, args);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  Settings f;
  for (auto& apply : o->overrides) apply(f);
  EXPECT_FALSE(f.inference_discover);
  EXPECT_TRUE(f.inference.empty());
}

Snapshot WithEngine(const InferenceFacts& f, std::optional<uint32_t> util = std::nullopt) {
  Snapshot snap;
  snap.inference.push_back(f);
  if (util) {
    GpuFacts g;
    g.index = 1;
    g.util_gpu_pct = *util;
    g.processes = std::vector<GpuProcess>{GpuProcess{}};
    g.processes->front().pid = 4242;
    g.processes->front().comm = "python3";
    g.memory_total_bytes = uint64_t{80} << 30;
    g.memory_used_bytes = uint64_t{79} << 30;
    snap.gpu.gpus.push_back(g);
  }
  return snap;
}

InferenceFacts Vllm() {
  InferenceFacts f;
  f.name = "chat";
  f.engine = "vllm";
  f.url = "http://127.0.0.1:8000/metrics";
  f.model = "meta-llama/Llama-3.1-8B-Instruct";
  f.plan_model = "llama-3.1-8b";
  f.plan_kv_bytes_per_token = 131072;
  f.window_s = 60;
  f.pids = {4242};
  f.prompt_tokens_mean = 1664;
  f.prompt_tokens_p95 = 1950;
  f.generation_tokens_mean = 200;
  return f;
}

std::vector<Finding> Judge(const Snapshot& snap, const Thresholds& t = Thresholds()) {
  std::vector<Finding> out;
  InferenceRules(snap, t, out);
  return out;
}

TEST(InferenceRulesTest, KvCacheFullNeedsHighUsageAndGrowingPreemptions) {
  InferenceFacts f = Vllm();
  f.kv_cache_usage = 0.97;
  f.preemptions_window = 12;
  auto out = Judge(WithEngine(f));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, "inference.kv_cache.full");
  EXPECT_EQ(out[0].subject, "chat");
  EXPECT_THAT(out[0].summary, HasSubstr("KV cache 97% full, 12 request(s) preempted"));
  EXPECT_THAT(out[0].next_steps[0],
              HasSubstr("gpudoctor plan kv --model llama-3.1-8b --context 2304"));
  f.preemptions_window = 0;  // full but nobody preempted: the cache is merely used
  EXPECT_TRUE(Judge(WithEngine(f)).empty());
  f.preemptions_window = 5;
  f.kv_cache_usage = 0.6;
  EXPECT_TRUE(Judge(WithEngine(f)).empty());
  ThresholdOverrides o;
  o.Set("inference.kv_cache.full", "usage_pct", 50);
  EXPECT_EQ(Judge(WithEngine(f), Thresholds(o)).size(), 1u);
}

TEST(InferenceRulesTest, QueueWithAnIdleGpuGivesTheBatchingComparison) {
  InferenceFacts f = Vllm();
  f.requests_waiting = 9;
  f.requests_running = 1;
  f.requests_window = 120;
  auto out = Judge(WithEngine(f, 12));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, "inference.queue");
  EXPECT_THAT(out[0].summary, HasSubstr("9 request(s) waiting while GPU 1 is at most 12% busy"));
  EXPECT_THAT(
      out[0].next_steps[0],
      HasSubstr("gpudoctor plan batching --model llama-3.1-8b --gpu 1 --rate 2 --requests 2000"));
  EXPECT_TRUE(Judge(WithEngine(f, 95)).empty());  // busy GPU: the queue is just load
  EXPECT_TRUE(Judge(WithEngine(f)).empty());      // no GPU facts: not judged
  // The state other rules ask: requests waiting now on GPU 1.
  Snapshot snap = WithEngine(f, 12);
  auto waiting = RequestsWaitingNow(snap.inference, snap.gpu.gpus, snap.gpu.gpus[0]);
  ASSERT_EQ(waiting.size(), 1u);
  EXPECT_EQ(waiting[0].waiting, 9);
  EXPECT_TRUE(waiting[0].gpu_known);  // through the engine's pid on the GPU
}

TEST(InferenceRulesTest, LatencyOverThresholdsFromTheWindowsPercentiles) {
  InferenceFacts f = Vllm();
  f.ttft.p95_s = 3.5;
  f.ttft.observations = 40;
  f.tpot.p95_s = 0.05;
  f.tpot.observations = 40;
  auto out = Judge(WithEngine(f));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, "inference.latency");
  EXPECT_THAT(out[0].summary, HasSubstr("p95 time to first token 3.5 s (threshold 2 s)"));
  f.ttft.observations = 2;  // too few to judge
  EXPECT_TRUE(Judge(WithEngine(f)).empty());
  f.tpot.p95_s = 0.3;
  out = Judge(WithEngine(f));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].summary, HasSubstr("p95 time per output token 300 ms"));
}

TEST(InferenceRulesTest, GpuMemoryFullAdviceUsesTheServedModelAndItsContexts) {
  InferenceFacts f = Vllm();
  f.kv_cache_usage = 0.9;
  Snapshot snap = WithEngine(f, 90);
  auto findings = EvaluateRules(snap, Thresholds());
  const Finding* mem = nullptr;
  for (const auto& x : findings) {
    if (x.id == "gpu.memory.full") mem = &x;
  }
  ASSERT_NE(mem, nullptr);
  std::string steps;
  for (const auto& s : mem->next_steps) steps += s + "\n";
  EXPECT_THAT(steps, HasSubstr("chat serves meta-llama/Llama-3.1-8B-Instruct from this GPU"));
  EXPECT_THAT(steps, HasSubstr("prompts of 1664 tokens on average (p95 1950)"));
  EXPECT_THAT(steps, HasSubstr("--model llama-3.1-8b --gpu 1 --context 2304"));
  EXPECT_THAT(steps, ::testing::Not(HasSubstr("llama-3-8b (bf16")));
}

}  // namespace
}  // namespace gpudoctor
