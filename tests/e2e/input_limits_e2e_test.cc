// End-to-end: every command that reads a user-given input refuses special files at once (a FIFO
// never hangs it), reads outside servers within --deadline and a size cap, and answers
// node-problem-detector with 0/1/2 and one line whatever goes wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bad_server.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using testing::BadServer;
using ::testing::HasSubstr;
using testing::RunGpudoctor;
using testing::RunProgram;
using testing::RunResult;
using testing::TempDir;

std::string Golden(const std::string& name) {
  return testing::ReadFileOrDie(std::string(GPUDOCTOR_SOURCE_DIR) + "/tests/e2e/golden/" + name);
}

// A FIFO with no writer: any reader that opens it blocking hangs forever.
class FifoInputE2eTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_.MakeFifo("in.fifo"); }
  std::string fifo() const { return dir_.path() + "/in.fifo"; }
  RunResult Run(std::vector<std::string> args) {
    return RunGpudoctor(args, std::chrono::seconds(20));
  }
  TempDir dir_;
};

TEST_F(FifoInputE2eTest, FleetReportsRefusesAFifoAndReadsTheRestOfTheDirectory) {
  dir_.MakeDir("reports");
  auto report = nlohmann::json::parse(Golden("check_gpu_thermal.json"));
  report["host"] = "n1";
  report["time"] = "2026-12-01T00:00:00Z";
  dir_.Write("reports/a.json", report.dump());
  dir_.MakeFifo("reports/b.json");
  RunResult r = Run({"fleet", "--json", "--reports", dir_.path() + "/reports"});
  EXPECT_LT(r.seconds, 5.0);
  ASSERT_NE(r.exit_code, 3) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["reports_count"], 1);
  ASSERT_EQ(j["input_problems"].size(), 1u) << r.out;
  EXPECT_THAT(j["input_problems"][0]["message"].get<std::string>(), HasSubstr("a FIFO"));

  RunResult direct = Run({"fleet", "--reports", fifo()});
  EXPECT_LT(direct.seconds, 5.0);
  EXPECT_EQ(direct.exit_code, 3);
  EXPECT_THAT(direct.err, HasSubstr("in.fifo: is a FIFO, not a regular file"));
}

TEST_F(FifoInputE2eTest, DatabasesThatAreFifosAreRefusedAtOnce) {
  RunResult fleet = Run({"fleet", "--db", fifo()});
  EXPECT_LT(fleet.seconds, 5.0);
  EXPECT_EQ(fleet.exit_code, 3);
  EXPECT_THAT(fleet.err, HasSubstr("a FIFO"));

  RunResult history = Run({"history", "--events", "--db", fifo()});
  EXPECT_LT(history.seconds, 5.0);
  EXPECT_EQ(history.exit_code, 3);
  EXPECT_THAT(history.err, HasSubstr("in.fifo: is a FIFO"));

  RunResult ack = Run({"ack", "gpu.xid", "--db", fifo()});
  EXPECT_LT(ack.seconds, 5.0);
  EXPECT_EQ(ack.exit_code, 3);
  EXPECT_THAT(ack.err, HasSubstr("a FIFO"));
}

TEST_F(FifoInputE2eTest, BundleWithAFifoDatabaseIsWrittenAndSaysWhy) {
  std::string out = dir_.path() + "/b.tar.gz";
  dir_.Write("empty.toml", "");
  RunResult r = Run({"bundle", "-o", out, "--db", fifo(), "--probes", "cpu", "--config",
                     dir_.path() + "/empty.toml"});
  EXPECT_LT(r.seconds, 15.0);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto manifest = RunProgram({"/bin/tar", "-xzOf", out, "MANIFEST.txt"});
  EXPECT_THAT(manifest.out, HasSubstr("no history: " + fifo() + ": is a FIFO"));
}

TEST_F(FifoInputE2eTest, PlanCompareAndConfigRefuseAFifo) {
  RunResult plan =
      Run({"plan", "kv", "--model", "llama-2-7b", "--gpu-mem", "80GiB", "--context-dist", fifo()});
  EXPECT_LT(plan.seconds, 5.0);
  EXPECT_EQ(plan.exit_code, 3);
  EXPECT_THAT(plan.err, HasSubstr("a FIFO"));

  RunResult trace =
      Run({"plan", "batching", "--model", "llama-2-7b", "--gpu-mem", "80GiB", "--trace", fifo()});
  EXPECT_LT(trace.seconds, 5.0);
  EXPECT_EQ(trace.exit_code, 3);
  EXPECT_THAT(trace.err, HasSubstr("a FIFO"));

  RunResult cmp = Run({"compare", fifo(), fifo()});
  EXPECT_LT(cmp.seconds, 5.0);
  EXPECT_EQ(cmp.exit_code, 3);
  EXPECT_THAT(cmp.err, HasSubstr("a FIFO"));

  RunResult config = Run({"check", "--probes", "cpu", "--config", fifo()});
  EXPECT_LT(config.seconds, 5.0);
  EXPECT_EQ(config.exit_code, 3);
  EXPECT_THAT(config.err, HasSubstr("a FIFO"));
}

TEST(CompareInputE2eTest, GpusNotAListIsExitThree) {
  TempDir dir;
  auto good = nlohmann::json::parse(Golden("check_gpu_thermal.json"));
  auto bad = good;
  bad["gpus"] = "notalist";
  dir.Write("good.json", good.dump());
  dir.Write("bad.json", bad.dump());
  RunResult r = RunGpudoctor({"compare", dir.path() + "/good.json", dir.path() + "/bad.json"},
                             std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_THAT(r.err, HasSubstr("\"gpus\" is string, expected an array"));
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(FleetPrometheusE2eTest, ATricklingServerEndsAtTheDeadline) {
  BadServer server(BadServer::Mode::kTrickle, "", std::chrono::milliseconds(50));
  RunResult r = RunGpudoctor({"fleet", "--prometheus", server.url(), "--deadline", "2"},
                             std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_GT(r.seconds, 1.5);
  EXPECT_LT(r.seconds, 4.0);
  EXPECT_THAT(r.err, HasSubstr("deadline"));
}

TEST(FleetPrometheusE2eTest, AnEndlessAnswerIsAbortedAtTheCap) {
  BadServer server(BadServer::Mode::kEndless);
  RunResult r = RunGpudoctor({"fleet", "--prometheus", server.url(), "--deadline", "30"},
                             std::chrono::seconds(40));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("larger than 256 MiB"));
  EXPECT_LT(r.seconds, 25.0);
}

// node-problem-detector: exit 0/1/2 and exactly one stdout line, also when gpudoctor fails.
void ExpectNpdUnknown(const RunResult& r, const std::string& why) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_THAT(r.out, ::testing::StartsWith("unknown: gpudoctor could not run: "));
  EXPECT_THAT(r.out, HasSubstr(why));
  EXPECT_THAT(r.err, HasSubstr(why));
}

TEST(NpdContractE2eTest, ToolFailuresAreUnknownWithOneLine) {
  ExpectNpdUnknown(RunGpudoctor({"check", "--npd", "--probes", "cpu", "--bogus-flag"}),
                   "--bogus-flag");
  ExpectNpdUnknown(RunGpudoctor({"check", "--npd", "--probes", "cpu", "--deadline", "zero"}),
                   "--deadline");
  ExpectNpdUnknown(RunGpudoctor({"check", "--npd", "--probes", "cpu", "extra"}),
                   "takes no arguments");
  ExpectNpdUnknown(RunGpudoctor({"check", "--npd", "--slurm", "--probes", "cpu"}),
                   "--npd and --slurm exclude each other");
  ExpectNpdUnknown(RunGpudoctor({"fleet", "--npd", "--probes", "cpu"}),
                   "--npd is not a flag of `fleet` (it is one of: check)");
  ExpectNpdUnknown(RunGpudoctor({"nosuchcommand", "--npd"}), "--npd is a mode of");
  // Without --npd the usual exit 3.
  EXPECT_EQ(RunGpudoctor({"check", "--probes", "cpu", "--bogus-flag"}).exit_code, 3);
}

}  // namespace
}  // namespace gpudoctor
