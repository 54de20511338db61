// End-to-end: the built binary on each host fixture tree, with the second samples of /proc/stat
// and /proc/vmstat swapped in during the sampling window (tests/host_fixture.h). Checks which
// findings appear with which severity, the exit code, and the probe statuses.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "host_fixture.h"
#include "test_util.h"

namespace gpudoctor::testing {
namespace {

struct CheckRun {
  int exit_code = -1;
  nlohmann::json report;
  std::map<std::string, std::string> severity_by_id;  // worst per id
};

CheckRun Check(const std::string& fixture) {
  HostFixture fx(fixture);
  fx.ArmSecondSamples();
  std::vector<std::string> args = {"check", "--json",   "--sample-ms",
                                   "300",   "--probes", "cpu,memory,pressure,disk,processes"};
  for (const auto& f : fx.PathFlags()) args.push_back(f);
  RunResult r = RunGpudoctor(args, std::chrono::seconds(20));
  CheckRun out;
  out.exit_code = r.exit_code;
  out.report = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  if (out.report.is_discarded()) {
    ADD_FAILURE() << fixture << ": output is not JSON: " << r.out << r.err;
    return out;
  }
  for (const auto& f : out.report["findings"]) {
    std::string id = f["id"], sev = f["severity"];
    auto& cur = out.severity_by_id[id];
    auto rank = [](const std::string& s) { return s == "crit" ? 2 : s == "warn" ? 1 : 0; };
    if (cur.empty() || rank(sev) > rank(cur)) cur = sev;
  }
  for (const auto& p : out.report["probes"]) {
    EXPECT_EQ(p["status"], "ok") << fixture << ": probe " << p["name"];
  }
  return out;
}

TEST(HostFixturesE2eTest, HealthyHostHasNoFindings) {
  CheckRun r = Check("healthy");
  EXPECT_TRUE(r.severity_by_id.empty()) << r.report.dump(2);
  EXPECT_EQ(r.exit_code, 0);
}

TEST(HostFixturesE2eTest, CpuSaturated) {
  CheckRun r = Check("cpu-saturated");
  // check samples the CPU for 250 ms: a busy moment is warn, the PSI averages decide crit.
  EXPECT_EQ(r.severity_by_id["host.cpu.saturated"], "warn");
  EXPECT_EQ(r.severity_by_id["host.pressure.cpu"], "crit");
  EXPECT_EQ(r.severity_by_id["host.load.high"], "warn");
  EXPECT_EQ(r.exit_code, 2);
}

TEST(HostFixturesE2eTest, HeavyIowaitWithoutStuckTasks) {
  CheckRun r = Check("heavy-iowait");
  EXPECT_EQ(r.severity_by_id["host.iowait.high"], "warn");
  EXPECT_EQ(r.severity_by_id["host.pressure.io"], "crit");
  EXPECT_EQ(r.severity_by_id.count("proc.dstate"), 0u) << r.report.dump(2);
  EXPECT_EQ(r.exit_code, 2);
}

TEST(HostFixturesE2eTest, DstateNvidiaSmi) {
  CheckRun r = Check("dstate-nvidia-smi");
  EXPECT_EQ(r.severity_by_id["proc.dstate"], "crit");
  EXPECT_EQ(r.severity_by_id.size(), 1u) << r.report.dump(2);
  EXPECT_EQ(r.exit_code, 2);
  for (const auto& f : r.report["findings"]) {
    if (f["id"] != "proc.dstate") continue;
    EXPECT_EQ(f["evidence"]["task1_comm"], "nvidia-smi");
    EXPECT_EQ(f["evidence"]["stuck_count"], 3);
  }
}

TEST(HostFixturesE2eTest, SwapStorm) {
  CheckRun r = Check("swap-storm");
  EXPECT_EQ(r.severity_by_id["host.memory.low"], "crit");
  EXPECT_EQ(r.severity_by_id["host.swap.active"], "warn");
  EXPECT_EQ(r.severity_by_id["host.pressure.memory"], "crit");
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace gpudoctor::testing
