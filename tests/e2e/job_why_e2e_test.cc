// A job's speed end to end: `gpudoctor watch` on the fake NVML tails a job's training log; a
// thermal fault is written into the live scenario while the job's step time grows; `gpudoctor
// why` then names the thermal slowdown first. And the push path: `gpudoctor mark step` into a
// running watch, the series in `history --metric job_step_seconds --job` and in /metrics.
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
#include "test_util.h"

namespace gpudoctor {
namespace {

using std::chrono::milliseconds;
using testing::RunGpudoctor;
using testing::TempDir;
using testing::WriteScenario;  // write-then-rename: the fake NVML never sees half a scenario

using Daemon = testing::ChildProcess;

void StartDaemon(Daemon& d, const std::vector<std::string>& args, const std::string& scenario,
                 const std::string& err) {
  std::vector<std::string> argv = {GPUDOCTOR_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  d.Start(argv, {{"FAKE_NVML_SCENARIO", scenario}}, err);
}

std::string ReadLog(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

using testing::FreePort;

// The stored step-time points of job `job` so far.
size_t StepPoints(const std::string& db, const std::string& job) {
  auto m =
      RunGpudoctor({"history", "--db", db, "--metric", "job_step_seconds", "--job", job, "--json"});
  auto j = nlohmann::json::parse(m.out, nullptr, false);
  if (m.exit_code != 0 || j.is_discarded()) return 0;
  const auto& s = j.is_array() ? (j.empty() ? nlohmann::json() : j[0]) : j;
  return s.is_object() && s.contains("points") ? s["points"].size() : 0;
}

void AppendLine(const std::string& path, const std::string& line) {
  std::ofstream(path, std::ios::app) << line << "\r";  // tqdm redraws with \r
}

std::string Bar(int step, double s_per_it) {
  char buf[160];
  std::snprintf(buf, sizeof buf, " %2d%%|#         | %d/1000 [00:10<20:00, %.2fs/it]", step / 10,
                step, s_per_it);
  return buf;
}

TEST(JobWhyE2eTest, ThermalFaultWhileTheStepTimeGrowsIsNamedFirst) {
  TempDir dir;
  std::string log = dir.path() + "/train.log";
  std::string db = dir.path() + "/history.db";
  std::string err = dir.path() + "/err.log";
  std::string scenario = dir.path() + "/live.scenario";
  dir.Write("gpudoctor.toml",
            "[finding.\"gpu.thermal\"]\nfor_s = 0\n[finding.\"gpu.hw_slowdown\"]\nfor_s = 0\n"
            "[[job]]\nname = \"train\"\nlog = \"" +
                log +
                "\"\npreset = \"tqdm\"\n"
                "baseline_steps = 5\n");
  dir.Write("train.log", "");
  WriteScenario(scenario, "h100_busy.scenario");
  Daemon d;
  StartDaemon(
      d,
      {"watch", "--interval", "0.3", "--db", db, "--nvml-lib", testing::FakeNvmlLib(), "--probes",
       "nvml,cpu,memory,job", "--config", dir.path() + "/gpudoctor.toml", "--listen", "off"},
      scenario, err);
  int step = 0;
  // Healthy: a step a second, for ~30 ticks.
  auto write_steps = [&](double s_per_it, int ticks) {
    for (int i = 0; i < ticks; ++i) {
      AppendLine(log, Bar(++step, s_per_it));
      std::this_thread::sleep_for(milliseconds(300));
    }
  };
  write_steps(1.0, 30);
  EXPECT_TRUE(testing::WaitUntil([&] { return StepPoints(db, "train") >= 10; },
                                 std::chrono::seconds(30), milliseconds(200)))
      << ReadLog(err);
  // GPU 3 overheats: HW thermal slowdown, SM clock down; the job's steps grow x12.
  WriteScenario(scenario, "thermal.scenario", "gpu.3.clock_sm=1275\ngpu.3.clock_gfx=1275\n");
  EXPECT_TRUE(testing::WaitUntil(
      [&] { return ReadLog(err).find("opened gpu.thermal") != std::string::npos; },
      std::chrono::seconds(30), milliseconds(100)))
      << ReadLog(err);
  write_steps(12.0, 30);
  size_t before_stop = StepPoints(db, "train");
  EXPECT_GE(before_stop, 30u);
  EXPECT_EQ(d.Stop(), 0) << ReadLog(err);

  auto r = RunGpudoctor({"why", "--db", db, "--job", "train", "--since", "1h", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // 1: a slowdown was found
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  ASSERT_TRUE(j["onset"].is_object()) << j.dump(2);
  EXPECT_GE(j["onset"]["factor"].get<double>(), 5) << j.dump(2);
  ASSERT_FALSE(j["causes"].empty()) << j.dump(2);
  EXPECT_EQ(j["causes"][0]["id"], "gpu.thermal") << j.dump(2);
  EXPECT_EQ(j["causes"][0]["gpu"], 3) << j.dump(2);
  EXPECT_EQ(j["source"], "job");
  auto text = RunGpudoctor({"why", "--db", db, "--since", "1h"});
  EXPECT_EQ(text.exit_code, 1) << text.err;
  EXPECT_NE(text.out.find("job train: slowdown began"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("1. "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("gpu.thermal"), std::string::npos) << text.out;
  // --at before anything changed: nothing near it ranks, but the command still runs.
  auto bad = RunGpudoctor({"why", "--db", db, "--job", "nope", "--since", "1h"});
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.err.find("stored: train"), std::string::npos) << bad.err;
}

TEST(JobWhyE2eTest, MarkStepPushesIntoHistoryAndMetrics) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  std::string err = dir.path() + "/err.log";
  int port = FreePort();
  std::string url = "http://127.0.0.1:" + std::to_string(port);
  dir.Write("token", "tok-123\n");
  ::chmod((dir.path() + "/token").c_str(), 0600);
  dir.Write("gpudoctor.toml", "[watch]\ntoken_file = \"" + dir.path() + "/token\"\n" +
                                  "[[job]]\nname = \"ft\"\nbaseline_s = 0.5\n");
  std::string scenario = dir.path() + "/live.scenario";
  WriteScenario(scenario, "h100_busy.scenario");
  Daemon d;
  StartDaemon(d,
              {"watch", "--interval", "0.3", "--db", db, "--nvml-lib", testing::FakeNvmlLib(),
               "--probes", "cpu,job", "--config", dir.path() + "/gpudoctor.toml", "--listen",
               "127.0.0.1:" + std::to_string(port)},
              scenario, err);
  ASSERT_TRUE(
      testing::WaitUntil([&] { return ReadLog(err).find("http: listening") != std::string::npos; },
                         std::chrono::seconds(30)))
      << ReadLog(err);
  // Without the token: refused; with it: taken until the history has points.
  auto no_token = RunGpudoctor({"mark", "step", "--job", "ft", "--seconds", "2", "--connect", url});
  EXPECT_EQ(no_token.exit_code, 3);
  EXPECT_NE(no_token.err.find("401"), std::string::npos) << no_token.err;
  std::map<std::string, std::string> env = {{"GPUDOCTOR_TOKEN", "tok-123"}};
  auto unknown = RunGpudoctor({"mark", "step", "--job", "other", "--connect", url},
                              std::chrono::seconds(30), env);
  EXPECT_EQ(unknown.exit_code, 3);
  EXPECT_NE(unknown.err.find("404"), std::string::npos) << unknown.err;
  bool stored = testing::WaitUntil(
      [&] {
        auto m = RunGpudoctor({"mark", "step", "--job", "ft", "--seconds", "2", "--connect", url},
                              std::chrono::seconds(30), env);
        EXPECT_EQ(m.exit_code, 0) << m.err;
        return StepPoints(db, "ft") >= 3;
      },
      std::chrono::seconds(30), milliseconds(100));
  EXPECT_TRUE(stored) << ReadLog(err);
  httplib::Client c("127.0.0.1", port);
  c.set_bearer_token_auth("tok-123");
  auto metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("job=\"ft\"} "), std::string::npos) << metrics->body.substr(0, 2000);
  EXPECT_NE(metrics->body.find("job=\"ft\"} 0.5"), std::string::npos);
  // From a web page (a browser sends Origin with every cross-site POST): refused, token or not,
  // the same POST without them is taken.
  auto forged = c.Post("/api/v1/job/ft/step?seconds=2",
                       httplib::Headers{{"Origin", "http://example.com"}}, "", "text/plain");
  ASSERT_TRUE(forged);
  EXPECT_EQ(forged->status, 403) << forged->body;
  auto fetched = c.Post("/api/v1/job/ft/step?seconds=2",
                        httplib::Headers{{"Sec-Fetch-Site", "cross-site"}}, "", "text/plain");
  ASSERT_TRUE(fetched);
  EXPECT_EQ(fetched->status, 403) << fetched->body;
  auto plain = c.Post("/api/v1/job/ft/step?seconds=2", "", "text/plain");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 202) << plain->body;
  // A GET on the step path is refused; the step path is POST only.
  auto get = c.Get("/api/v1/job/ft/step");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  auto series = c.Get("/api/v1/series");
  ASSERT_TRUE(series);
  EXPECT_NE(series->body.find("gpudoctor_job_step_seconds"), std::string::npos);
  EXPECT_EQ(d.Stop(), 0) << ReadLog(err);
}

}  // namespace
}  // namespace gpudoctor
