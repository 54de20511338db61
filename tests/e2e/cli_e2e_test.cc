// End-to-end: the built binary's command-line contract (exit codes, errors, explain, config).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace gpudoctor {
namespace {

using ::testing::HasSubstr;
using testing::RunGpudoctor;
using testing::TempDir;

// `--version` names the revision the binary was built from: a commit re-runs the configure step
// (CMakeLists.txt watches HEAD and its branch), so a build after a commit no longer keeps the
// revision of the last manual `cmake` run.
TEST(CliE2eTest, VersionNamesTheCheckedOutRevision) {
  auto head = testing::RunProgram(
      {"/usr/bin/git", "-C", GPUDOCTOR_SOURCE_DIR, "rev-parse", "--short=12", "HEAD"},
      std::chrono::seconds(20));
  if (head.exit_code != 0 || head.out.size() < 12) GTEST_SKIP() << "not a git checkout";
  auto v = RunGpudoctor({"--version"});
  ASSERT_EQ(v.exit_code, 0) << v.err;
  EXPECT_THAT(v.out, HasSubstr("(" + head.out.substr(0, 12) + ")"));
}

TEST(CliE2eTest, BadFlagExitsThreeWithOneLine) {
  auto r = RunGpudoctor({"check", "--probes", "cpu", "--bogus-flag"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("--bogus-flag"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  EXPECT_TRUE(r.out.empty());
}

TEST(CliE2eTest, UnknownCommandAndNoCommandExitThree) {
  EXPECT_EQ(RunGpudoctor({"frobnicate"}).exit_code, 3);
  EXPECT_EQ(RunGpudoctor({}).exit_code, 3);
  EXPECT_EQ(RunGpudoctor({"--help"}).exit_code, 0);
}

TEST(CliE2eTest, InvalidConfigValueExitsThreeNamingKeyAndLine) {
  TempDir dir;
  dir.Write("bad.toml",
            "[check]\nsample_ms = 10\n\n[finding.\"host.disk.full\"]\nwarn_used_pct = -5\n");
  auto r = RunGpudoctor({"check", "--config", dir.path() + "/bad.toml"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("bad.toml:5"));
  EXPECT_THAT(r.err, HasSubstr("finding.\"host.disk.full\".warn_used_pct"));
}

TEST(CliE2eTest, UnreadableOrMissingConfigExitsThree) {
  auto r = RunGpudoctor({"check", "--config", "/nonexistent/gpudoctor.toml"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/gpudoctor.toml"));
  TempDir dir;
  dir.Write("syntax.toml", "[check\n");
  auto s = RunGpudoctor({"check", "--config", dir.path() + "/syntax.toml"});
  EXPECT_EQ(s.exit_code, 3);
  EXPECT_THAT(s.err, HasSubstr("syntax.toml:1"));
}

TEST(CliE2eTest, UnknownConfigKeyWarnsButRuns) {
  TempDir dir;
  dir.Write("warn.toml", "[check]\nsample_ms = 20\ncolour = 1\n");
  auto r =
      RunGpudoctor({"check", "--json", "--config", dir.path() + "/warn.toml", "--probes", "cpu"});
  EXPECT_NE(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("unknown key 'check.colour'"));
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["probes"].size(), 1u);
}

TEST(CliE2eTest, UnknownProbeNameExitsThree) {
  auto r = RunGpudoctor({"check", "--probes", "cpu,warp_drive"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("warp_drive"));
}

// A probe whose file blocks forever (a FIFO without writer) is abandoned at the deadline; the
// check still returns on time and reports the probe as timed out.
TEST(CliE2eTest, BlockingProbeFileTimesOutAndCheckReturnsOnTime) {
  TempDir dir;
  dir.MakeFifo("proc/stat");
  dir.Write("proc/loadavg", "0.10 0.20 0.30 1/100 1234\n");
  dir.MakeDir("sys");  // a --path.* directory that does not exist is exit 3
  auto r = RunGpudoctor({"check", "--json", "--deadline", "1", "--sample-ms", "10", "--path.procfs",
                         dir.path() + "/proc", "--path.sysfs", dir.path() + "/sys", "--path.rootfs",
                         dir.path(), "--probes", "cpu,processes"},
                        std::chrono::seconds(10));
  EXPECT_LT(r.seconds, 2.0) << "check must return within deadline + 1 s";
  ASSERT_EQ(r.exit_code, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["probes"].size(), 2u);
  std::map<std::string, std::string> status;
  for (const auto& p : j["probes"]) status[p["name"]] = p["status"];
  EXPECT_EQ(status["cpu"], "timeout");
  EXPECT_EQ(status["processes"], "ok");
  bool found = false;
  for (const auto& f : j["findings"]) {
    if (f["id"] == "gpudoctor.probe.timeout") {
      found = true;
      EXPECT_EQ(f["evidence"]["probe"], "cpu");
    }
  }
  EXPECT_TRUE(found);
}

TEST(CliE2eTest, ExplainPrintsEntryAndRejectsUnknownId) {
  auto r = RunGpudoctor({"explain", "proc.dstate"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("uninterruptible"));
  EXPECT_THAT(r.out, HasSubstr("min_stuck_s"));
  auto dbe = RunGpudoctor({"explain", "gpu.ecc.dbe"});
  EXPECT_EQ(dbe.exit_code, 0);
  EXPECT_THAT(dbe.out, HasSubstr("action: drain_reset ("));
  EXPECT_THAT(dbe.out, HasSubstr("takes the node out of service"));
  auto cpu = RunGpudoctor({"explain", "host.cpu.saturated"});
  EXPECT_THAT(cpu.out, HasSubstr("action: watch ("));
  EXPECT_THAT(cpu.out, ::testing::Not(HasSubstr("takes the node out of service")));
  auto bad = RunGpudoctor({"explain", "no.such.id"});
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_THAT(bad.err, HasSubstr("no.such.id"));
}

TEST(CliE2eTest, DefaultConfigIsAValidConfig) {
  auto r = RunGpudoctor({"config", "--default"});
  ASSERT_EQ(r.exit_code, 0);
  TempDir dir;
  dir.Write("default.toml", r.out);
  auto v = RunGpudoctor({"config", "--config", dir.path() + "/default.toml"});
  EXPECT_EQ(v.exit_code, 0) << v.err;
  EXPECT_TRUE(v.err.empty()) << v.err;
}

}  // namespace
}  // namespace gpudoctor

namespace gpudoctor {
namespace {

// A config file on a hung filesystem (here: a FIFO without writer) must not hang the check.
TEST(CliE2eTest, ConfigFileThatBlocksIsAnErrorNotAHang) {
  TempDir dir;
  dir.MakeFifo("hung.toml");
  auto r = RunGpudoctor(
      {"check", "--probes", "cpu", "--deadline", "1", "--config", dir.path() + "/hung.toml"},
      std::chrono::seconds(10));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_LT(r.seconds, 2.0);
  EXPECT_THAT(r.err, HasSubstr("hung.toml: is a FIFO, not a regular file"));
}

TEST(CliE2eTest, FailedProbesAreFindingsAndNothingMeasuredIsExitThree) {
  TempDir dir;
  dir.Write("proc/stat", "garbage without a cpu line\n");
  dir.Write("proc/meminfo", "MemTotal: 100 kB\n");
  auto r = RunGpudoctor({"check", "--json", "--probes", "cpu", "--sample-ms", "10", "--path.procfs",
                         dir.path() + "/proc"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("no probe could measure"));
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["findings"].size(), 1u);
  EXPECT_EQ(j["findings"][0]["id"], "gpudoctor.probe.failed");
  EXPECT_EQ(j["findings"][0]["evidence"]["probe"], "cpu");
}

TEST(CliE2eTest, SampleWindowMustFitTheDeadline) {
  auto r = RunGpudoctor({"check", "--probes", "cpu", "--sample-ms", "20000", "--deadline", "2"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("--sample-ms"));
  EXPECT_THAT(r.err, HasSubstr("--deadline"));
}

// Issue 8 item 21: a mount point moved to a directory that is not there is exit 3 before any
// probe runs (no mix of fixture failures and live-host data).
TEST(CliE2eTest, MissingPathFlagDirectoryExitsThree) {
  for (const char* flag : {"--path.procfs", "--path.sysfs", "--path.rootfs"}) {
    auto r = RunGpudoctor({"check", "--json", "--probes", "cpu,nvml", flag, "/nonexistent/xyz"});
    EXPECT_EQ(r.exit_code, 3) << flag << ": " << r.out;
    EXPECT_THAT(r.err, HasSubstr("/nonexistent/xyz")) << flag;
    EXPECT_THAT(r.err, HasSubstr(flag)) << flag;
    EXPECT_TRUE(r.out.empty()) << flag;
  }
}

TEST(CliE2eTest, ConfigOverOneMebibyteIsRefusedNotTruncated) {
  TempDir dir;
  // Valid TOML, and still valid when cut at 1 MiB (inside the comment): a truncating reader
  // would accept it silently and lose the key after it.
  std::string text = "[check]\n#" + std::string(1 << 20, 'x') + "\nsample_ms = 300\n";
  dir.Write("big.toml", text);
  auto r = RunGpudoctor({"config", "--config", dir.path() + "/big.toml"});
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_THAT(r.err, HasSubstr("larger than 1 MiB"));
}

// Issue 8 item 17: symptoms map to the findings and commands that decide them.
TEST(CliE2eTest, ExplainSymptom) {
  auto r = RunGpudoctor({"explain", "--symptom", "nvidia-smi hangs"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("driver.nvml_hang"));
  EXPECT_THAT(r.out, HasSubstr("proc.dstate"));
  EXPECT_THAT(r.out, HasSubstr("dmesg"));
  auto list = RunGpudoctor({"explain", "--symptoms"});
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_THAT(list.out, HasSubstr("server-hot"));
  EXPECT_THAT(list.out, HasSubstr("vram-full"));
  auto runbook = RunGpudoctor({"explain", "--runbook"});  // item 18
  EXPECT_EQ(runbook.exit_code, 0);
  EXPECT_THAT(runbook.out, HasSubstr("gpu.lost"));
  EXPECT_THAT(runbook.out, HasSubstr("RMA"));
  auto none = RunGpudoctor({"explain", "--symptom", "the coffee is cold"});
  EXPECT_EQ(none.exit_code, 3);
  EXPECT_THAT(none.err, HasSubstr("--symptoms"));
}

}  // namespace
}  // namespace gpudoctor
