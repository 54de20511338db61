// The inference servers' own signals end to end, against stand-in servers
// (tests/stand_ins/inference_stand_in.py: Python http.server on 127.0.0.1 serving the metric
// names and types each engine documents: vLLM V1 and 0.5.3, TGI, SGLang, Triton r24.04):
//  - `check --probes inference` reads each engine and reports the normalised facts;
//  - `watch` with an [[inference]] url opens inference.kv_cache.full while the stand-in's KV
//    cache is full and its preemptions grow, survives the engine's restart (its counters reset),
//    and exports gpudoctor_inference_* in /metrics;
//  - a [[job]] read from the job's own Prometheus endpoint (a step-time histogram).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "atomic_file.h"
#include "child_process.h"
#include "net_test_env.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using std::chrono::milliseconds;
using testing::RunGpudoctor;
using testing::TempDir;

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

using testing::WriteAtomically;

using Child = testing::ChildProcess;

// Whether `body` (Prometheus text) has a sample of `name` whose labels contain `labels` and whose
// value is `value` (empty: any).
bool HasSample(const std::string& body, const std::string& name, const std::string& labels,
               const std::string& value = "") {
  size_t pos = 0;
  while ((pos = body.find(name + "{", pos)) != std::string::npos) {
    size_t end = body.find('\n', pos);
    std::string line = body.substr(pos, end == std::string::npos ? end : end - pos);
    pos += name.size();
    if (line.find(labels) == std::string::npos) continue;
    if (value.empty() || line.substr(line.rfind(' ') + 1) == value) return true;
  }
  return false;
}

// One stand-in engine: its state file and the port it bound.
struct StandIn {
  Child child;
  std::string state, port_file;
  int port = 0;
  bool Start(const TempDir& dir, const std::string& engine, const std::string& initial) {
    state = dir.path() + "/" + engine + ".json";
    port_file = dir.path() + "/" + engine + ".port";
    WriteAtomically(state, initial);
    child.Start({"/usr/bin/python3",
                 std::string(GPUDOCTOR_SOURCE_DIR) + "/tests/stand_ins/inference_stand_in.py",
                 "--engine", engine, "--state", state, "--port-file", port_file},
                {}, dir.path() + "/" + engine + ".err");
    // Python starts slowly on a loaded machine: a generous wait, ended as soon as it is up.
    bool up = testing::WaitUntil([&] { return !ReadText(port_file).empty(); },
                                 std::chrono::seconds(90), milliseconds(50));
    if (up) port = std::stoi(ReadText(port_file));
    return up;
  }
  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port); }
};

TEST(InferenceE2eTest, CheckReadsEveryEngineAsDocumented) {
  TempDir dir;
  struct Engine {
    std::string name, config_engine, state;
  };
  std::vector<Engine> engines = {
      {"vllm", "vllm",
       R"({"kv":0.97,"waiting":3,"running":8,"preemptions":12,"prompt_tokens":[1500,1800,2000]})"},
      {"vllm-v0", "auto",
       R"({"kv":0.5,"waiting":1,"running":2,"model":"Qwen/Qwen2.5-7B-Instruct"})"},
      {"tgi", "tgi", R"({"waiting":7,"running":2,"requests":40})"},
      {"sglang", "auto", R"({"kv":0.28,"waiting":2826,"running":162})"},
      {"triton", "triton", R"({"waiting":4,"requests":161,"queue_us":11110,"model":"my_model"})"},
  };
  std::vector<std::unique_ptr<StandIn>> servers;
  std::string config;
  for (const auto& e : engines) {
    servers.push_back(std::make_unique<StandIn>());
    ASSERT_TRUE(servers.back()->Start(dir, e.name, e.state)) << e.name;
    config += "[[inference]]\nname = \"" + e.name + "\"\nurl = \"" + servers.back()->Url() +
              "\"\nengine = \"" + e.config_engine + "\"\n";
  }
  dir.Write("gpudoctor.toml", config);
  auto r = RunGpudoctor(
      {"check", "--probes", "inference", "--config", dir.path() + "/gpudoctor.toml", "--json"},
      std::chrono::seconds(60));
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  ASSERT_TRUE(j.contains("inference")) << j.dump(2);
  std::map<std::string, nlohmann::json> by;
  for (const auto& e : j["inference"]) by[e["name"].get<std::string>()] = e;
  ASSERT_EQ(by.size(), 5u) << j["inference"].dump(2);
  EXPECT_EQ(by["vllm"]["engine"], "vllm");
  EXPECT_EQ(by["vllm"]["model"], "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(by["vllm"]["plan_model"], "llama-3.1-8b");
  EXPECT_DOUBLE_EQ(by["vllm"]["kv_cache_usage"].get<double>(), 0.97);
  EXPECT_EQ(by["vllm"]["requests_waiting"], 3);
  EXPECT_EQ(by["vllm"]["preemptions_total"], 12);
  EXPECT_NEAR(by["vllm"]["prompt_tokens_mean"].get<double>(), 1766.7, 0.1);
  EXPECT_EQ(by["vllm-v0"]["engine"], "vllm");  // detected from vllm: names
  EXPECT_DOUBLE_EQ(by["vllm-v0"]["kv_cache_usage"].get<double>(), 0.5);
  EXPECT_EQ(by["vllm-v0"]["plan_model"], "qwen2.5-7b");
  EXPECT_EQ(by["tgi"]["requests_waiting"], 7);
  EXPECT_EQ(by["tgi"]["requests_running"], 2);
  EXPECT_FALSE(by["tgi"].contains("kv_cache_usage"));
  EXPECT_EQ(by["sglang"]["engine"], "sglang");
  EXPECT_DOUBLE_EQ(by["sglang"]["kv_cache_usage"].get<double>(), 0.28);
  EXPECT_EQ(by["sglang"]["requests_waiting"], 2826);
  EXPECT_EQ(by["triton"]["requests_waiting"], 4);
  EXPECT_EQ(by["triton"]["model"], "my_model");
  for (auto& [name, e] : by) EXPECT_FALSE(e.contains("error")) << name << ": " << e.dump();
}

// Discovery: a process named vllm listening on vLLM's default port (8000) is found and read
// without any [[inference]] table. It runs in a network namespace of its own (loopback only), so
// port 8000 is free whatever the machine runs, and gpudoctor, forked from the same thread, sees
// that namespace's sockets. The stand-in runs as "vllm" through a symlink to python3 (comm is
// the name the program was executed under).
TEST(InferenceE2eTest, DiscoversALocalVllmListenerOnItsDefaultPort) {
  TempDir dir;
  std::string vllm = dir.path() + "/vllm";
  ASSERT_EQ(::symlink("/usr/bin/python3", vllm.c_str()), 0);
  std::string state = dir.path() + "/state.json", port_file = dir.path() + "/port";
  WriteAtomically(state, R"({"kv":0.97,"waiting":3,"running":8,"preemptions":12})");
  dir.Write("empty.toml", "");
  dir.Write("no_discovery.toml", "[inference_discovery]\nenabled = false\n");
  std::string why;
  testing::RunResult r, off_by_config, off_by_flag;
  bool ran = testing::RunInFreshNetns(
      [&] {
        Child server(
            {vllm, std::string(GPUDOCTOR_SOURCE_DIR) + "/tests/stand_ins/inference_stand_in.py",
             "--engine", "vllm", "--state", state, "--port-file", port_file, "--port", "8000"},
            {}, dir.path() + "/server.err");
        if (!testing::WaitUntil([&] { return !ReadText(port_file).empty(); },
                                std::chrono::seconds(90), milliseconds(50))) {
          why = "the stand-in did not start: " + server.Log();
          return;
        }
        r = RunGpudoctor(
            {"check", "--probes", "inference", "--config", dir.path() + "/empty.toml", "--json"},
            std::chrono::seconds(60));
        // The same listener, discovery switched off: nothing is read.
        off_by_config = RunGpudoctor({"check", "--probes", "inference", "--config",
                                      dir.path() + "/no_discovery.toml", "--json"},
                                     std::chrono::seconds(60));
        off_by_flag =
            RunGpudoctor({"check", "--probes", "inference", "--config", dir.path() + "/empty.toml",
                          "--no-inference-discovery", "--json"},
                         std::chrono::seconds(60));
      },
      &why);
  ASSERT_TRUE(ran) << "needs root for a network namespace: " << why;
  ASSERT_TRUE(why.empty()) << why;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  ASSERT_TRUE(j.contains("inference")) << j.dump(2);
  ASSERT_EQ(j["inference"].size(), 1u) << j["inference"].dump(2);
  const auto& e = j["inference"][0];
  EXPECT_EQ(e["name"], "vllm:8000") << e.dump(2);
  EXPECT_EQ(e["source"], "discovered");
  EXPECT_EQ(e["url"], "http://127.0.0.1:8000/metrics");
  EXPECT_EQ(e["engine"], "vllm");
  EXPECT_DOUBLE_EQ(e["kv_cache_usage"].get<double>(), 0.97);
  EXPECT_EQ(e["requests_waiting"], 3);
  EXPECT_FALSE(e.contains("error")) << e.dump(2);
  for (const auto* off : {&off_by_config, &off_by_flag}) {
    auto o = nlohmann::json::parse(off->out, nullptr, false);
    ASSERT_FALSE(o.is_discarded()) << off->out << off->err;
    EXPECT_FALSE(o.contains("inference")) << o.dump(2);
    ASSERT_EQ(o["probes"].size(), 1u) << o.dump(2);
    EXPECT_EQ(o["probes"][0]["status"], "skipped") << o.dump(2);
  }
}

constexpr const char* kChat =
    "inference=\"chat\",engine=\"vllm\",model=\"meta-llama/Llama-3.1-8B-Instruct\"";

TEST(InferenceE2eTest, WatchOpensKvCacheFullAndSurvivesTheEngineRestart) {
  TempDir dir;
  StandIn vllm;
  ASSERT_TRUE(vllm.Start(dir, "vllm", R"({"kv":0.97,"waiting":4,"running":16,"preemptions":0})"));
  uint16_t port = 0;
  ::close(testing::BindLoopback(0, &port));
  dir.Write("gpudoctor.toml",
            "[finding.\"inference.kv_cache.full\"]\nfor_s = 0\n"
            "[[inference]]\nname = \"chat\"\nurl = \"" +
                vllm.Url() + "/metrics\"\nengine = \"vllm\"\n");
  std::string err = dir.path() + "/watch.err";
  Child watch;
  watch.Start({GPUDOCTOR_BIN, "watch", "--interval", "0.3", "--db", dir.path() + "/h.db",
               "--probes", "inference", "--config", dir.path() + "/gpudoctor.toml", "--listen",
               "127.0.0.1:" + std::to_string(port)},
              {}, err);
  // Preemptions grow while the cache is full; then the engine restarts (the counter resets).
  int preemptions = 0;
  bool opened = testing::WaitUntil(
      [&] {
        preemptions += 3;
        WriteAtomically(vllm.state, R"({"kv":0.97,"waiting":4,"running":16,"preemptions":)" +
                                        std::to_string(preemptions) + "}");
        return ReadText(err).find("opened inference.kv_cache.full") != std::string::npos;
      },
      std::chrono::seconds(60), milliseconds(300));
  ASSERT_TRUE(opened) << ReadText(err);
  EXPECT_NE(ReadText(err).find("chat (meta-llama/Llama-3.1-8B-Instruct): KV cache 97% full"),
            std::string::npos)
      << ReadText(err);
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(10);
  bool restarted = testing::WaitUntil(
      [&] {
        WriteAtomically(vllm.state, R"({"kv":0.97,"waiting":4,"running":16,"preemptions":1})");
        auto res = c.Get("/metrics");
        return res && HasSample(res->body, "gpudoctor_inference_restarts_total", kChat, "1");
      },
      std::chrono::seconds(60), milliseconds(300));
  auto res = c.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_TRUE(restarted) << res->body.substr(0, 4000);
  EXPECT_TRUE(HasSample(res->body, "gpudoctor_inference_kv_cache_usage_ratio", kChat, "0.97"));
  EXPECT_TRUE(HasSample(res->body, "gpudoctor_inference_requests_waiting", kChat, "4"));
  EXPECT_EQ(watch.Stop(), 0) << ReadText(err);
  // The history keeps the engine's series.
  auto h = RunGpudoctor({"history", "--db", dir.path() + "/h.db", "--metric",
                         "inference_kv_cache_usage_ratio", "--json"});
  EXPECT_EQ(h.exit_code, 0) << h.out << h.err;
  EXPECT_NE(h.out.find("0.97"), std::string::npos) << h.out;
}

TEST(InferenceE2eTest, JobStepTimeFromItsOwnPrometheusEndpoint) {
  TempDir dir;
  StandIn job;
  ASSERT_TRUE(job.Start(dir, "job", R"({"steps":0,"step_seconds":[]})"));
  dir.Write("gpudoctor.toml", "[[job]]\nname = \"train\"\nprometheus_url = \"" + job.Url() +
                                  "/metrics\"\nmetric = \"train_step_seconds\"\nselector = "
                                  "'{rank=\"0\"}'\nbaseline_s = 1.0\n");
  std::string err = dir.path() + "/watch.err";
  std::string db = dir.path() + "/h.db";
  Child watch;
  watch.Start({GPUDOCTOR_BIN, "watch", "--interval", "0.3", "--db", db, "--probes", "job",
               "--config", dir.path() + "/gpudoctor.toml", "--listen", "off"},
              {}, err);
  std::string obs;
  int n = 0;
  bool stored = testing::WaitUntil(
      [&] {
        // A step of 2.5 s each time: the job runs x2.5 slower than its configured baseline.
        obs += std::string(obs.empty() ? "" : ",") + "2.5";
        ++n;
        WriteAtomically(job.state,
                        R"({"steps":)" + std::to_string(n) + R"(,"step_seconds":[)" + obs + "]}");
        auto m = RunGpudoctor(
            {"history", "--db", db, "--metric", "job_step_seconds", "--job", "train", "--json"});
        return m.exit_code == 0 && m.out.find("2.5") != std::string::npos;
      },
      std::chrono::seconds(60), milliseconds(400));
  EXPECT_TRUE(stored) << ReadText(err);
  EXPECT_EQ(watch.Stop(), 0) << ReadText(err);
}

}  // namespace
}  // namespace gpudoctor
