// End-to-end: the real gpudoctor binary against the fake NVML library (--nvml-lib) and fixture
// sysfs trees (--path.sysfs).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace gpudoctor {
namespace {

using nlohmann::json;
using testing::FixturePath;
using testing::RunGpudoctor;
using testing::RunResult;
using testing::TempDir;

RunResult Check(const std::string& scenario, const std::string& sysfs,
                std::vector<std::string> extra = {}, const std::string& counts = "") {
  std::vector<std::string> args = {"check",        "--json",
                                   "--probes",     "nvml,pci_gpu",
                                   "--nvml-lib",   testing::FakeNvmlLib(),
                                   "--path.sysfs", FixturePath("sysfs/" + sysfs)};
  args.insert(args.end(), extra.begin(), extra.end());
  std::map<std::string, std::string> env = {
      {"FAKE_NVML_SCENARIO", FixturePath("nvml/" + scenario)}};
  if (!counts.empty()) env["FAKE_NVML_COUNTS"] = counts;
  return RunGpudoctor(args, std::chrono::seconds(30), env);
}

json Parse(const RunResult& r) {
  json j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

const json* FindingById(const json& report, const std::string& id) {
  for (const auto& f : report["findings"]) {
    if (f["id"] == id) return &f;
  }
  return nullptr;
}

// Everything that reads the node's action on a healthy node with one info finding
// (driver.release.old, action fix_config): the text report prints no "action:" line, the exit
// code is 0, and node-problem-detector says ok for every layer.
TEST(GpuE2eTest, HealthyNodeHasNoActionOnlyAnInfoNote) {
  std::map<std::string, std::string> env = {
      {"FAKE_NVML_SCENARIO", FixturePath("nvml/h100_healthy.scenario")}};
  std::vector<std::string> base = {"check",
                                   "--probes",
                                   "nvml,pci_gpu",
                                   "--nvml-lib",
                                   testing::FakeNvmlLib(),
                                   "--path.sysfs",
                                   FixturePath("sysfs/hgx_h100"),
                                   "--color",
                                   "never"};
  RunResult text = RunGpudoctor(base, std::chrono::seconds(30), env);
  EXPECT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_NE(text.out.find("driver.release.old"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("action: fix_config - "), std::string::npos)
      << "an info finding set the node's action:\n"
      << text.out;
  for (const char* layer : {"hardware", "software"}) {
    std::vector<std::string> npd = base;
    npd.insert(npd.end(), {"--npd", "--npd-layer", layer});
    RunResult r = RunGpudoctor(npd, std::chrono::seconds(30), env);
    EXPECT_EQ(r.exit_code, 0) << layer << ": " << r.out << r.err;
  }
}

TEST(GpuE2eTest, HealthyEightGpuNode) {
  TempDir tmp;
  std::string counts = tmp.path() + "/counts";
  RunResult r = Check("h100_healthy.scenario", "hgx_h100", {}, counts);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json j = Parse(r);
  // Healthy: nothing to act on. The one note is that the fake driver (580.95.05) is an older
  // point release of its branch than the release table knows (driver.release.old, info).
  ASSERT_EQ(j["findings"].size(), 1u) << j["findings"].dump(2);
  EXPECT_EQ(j["findings"][0]["id"], "driver.release.old");
  EXPECT_EQ(j["findings"][0]["severity"], "info");
  EXPECT_EQ(j["verdict"], "ok");
  // The info finding's own action stays on the finding; it never becomes the node's action.
  EXPECT_EQ(j["findings"][0]["action"], "fix_config");
  EXPECT_EQ(j["action"], "none");
  ASSERT_EQ(j["gpus"].size(), 8u);
  for (int i = 0; i < 8; ++i) {
    const json& g = j["gpus"][i];
    EXPECT_EQ(g["index"], i);
    EXPECT_TRUE(g.contains("serial"));
    EXPECT_TRUE(g.contains("pci_bus_id"));
    EXPECT_TRUE(g.contains("uuid"));
    EXPECT_EQ(g["name"], "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(g["temp_c"], 33);
    EXPECT_FALSE(g.contains("fan_pct"));  // unknown: absent, not 0
  }
  EXPECT_EQ(j["gpus"][7]["pci_bus_id"], "0000:db:00.0");
  EXPECT_EQ(j["driver"]["driver_version"], "580.95.05");
  EXPECT_EQ(j["driver"]["kernel_module_version"], "580.95.05");
  EXPECT_EQ(j["driver"]["cuda_driver_version"], 13000);
  // The fake's call counter: the cost of one check per GPU.
  std::string text = testing::ReadFileOrDie(counts);
  EXPECT_NE(text.find("gpu0 "), std::string::npos) << text;
  size_t at = text.find("gpu0 ");
  int gpu0 = std::stoi(text.substr(at + 5));
  EXPECT_GT(gpu0, 10);
  EXPECT_LE(gpu0, 30);
}

TEST(GpuE2eTest, TextReportHasOneLinePerGpu) {
  std::vector<std::string> args = {"check",
                                   "--probes",
                                   "nvml,pci_gpu",
                                   "--nvml-lib",
                                   testing::FakeNvmlLib(),
                                   "--path.sysfs",
                                   FixturePath("sysfs/hgx_h100")};
  RunResult r = RunGpudoctor(args, std::chrono::seconds(30),
                             {{"FAKE_NVML_SCENARIO", FixturePath("nvml/h100_busy.scenario")}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("7   NVIDIA H100 80GB HBM3    0000:db:00.0 1654922000017"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("driver 580.95.05, CUDA 13.0"), std::string::npos) << r.out;
}

TEST(GpuE2eTest, HungCallOnGpu2IsReportedOnTime) {
  RunResult r = Check("hang_gpu2.scenario", "hgx_h100", {"--deadline", "4", "--nvml-timeout", "1"});
  EXPECT_LT(r.seconds, 5.0);
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  json j = Parse(r);
  const json* hang = FindingById(j, "driver.nvml_hang");
  ASSERT_NE(hang, nullptr) << j["findings"].dump(2);
  EXPECT_EQ((*hang)["evidence"]["call"], "nvmlDeviceGetTemperature");
  EXPECT_EQ((*hang)["gpu"]["index"], 2);
  EXPECT_EQ((*hang)["gpu"]["serial"], "1654922000012");
  ASSERT_EQ(j["gpus"].size(), 8u);
  EXPECT_EQ(j["gpus"][2]["hung"], true);
  for (int i : {0, 1, 3, 4, 5, 6, 7}) {
    EXPECT_EQ(j["gpus"][i]["temp_c"], 33) << i;
    EXPECT_TRUE(j["gpus"][i].contains("counters_second")) << i;
  }
}

// Issue 8 item 2: the NVML timeout is shortened to fit the check's deadline, so a call that
// outlasts it is reported as the hang it looks like, naming the call, on time.
TEST(GpuE2eTest, SlowHandlesUnderAShortDeadlineAreNamedWithinIt) {
  RunResult r =
      Check("slow_handles.scenario", "hgx_h100", {"--deadline", "1.5", "--nvml-timeout", "5"});
  EXPECT_LT(r.seconds, 3.0);
  json j = Parse(r);
  const json* hang = FindingById(j, "driver.nvml_hang");
  ASSERT_NE(hang, nullptr) << j["findings"].dump(2);
  EXPECT_EQ((*hang)["evidence"]["call"], "nvmlDeviceGetHandleByIndex_v2") << hang->dump();
  EXPECT_EQ(FindingById(j, "gpudoctor.probe.failed"), nullptr) << j["findings"].dump(2);
  ASSERT_EQ(j["gpus"].size(), 8u);
  EXPECT_EQ(j["gpus"][0]["hung"], true);
}

TEST(GpuE2eTest, BlockedInitStillReturnsOnTime) {
  RunResult r = Check("init_hang.scenario", "hgx_h100", {"--deadline", "3", "--nvml-timeout", "1"});
  EXPECT_LT(r.seconds, 4.0);
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  json j = Parse(r);
  const json* hang = FindingById(j, "driver.nvml_hang");
  ASSERT_NE(hang, nullptr) << j["findings"].dump(2);
  EXPECT_EQ((*hang)["evidence"]["call"], "nvmlInit_v2");
}

TEST(GpuE2eTest, MismatchShowsBothVersions) {
  RunResult r = Check("init_mismatch.scenario", "hgx_h100_module_570");
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  json j = Parse(r);
  const json* f = FindingById(j, "driver.mismatch");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_EQ((*f)["evidence"]["kernel_module_version"], "570.124.06");
  EXPECT_EQ((*f)["evidence"]["nvml_return"], 18);
}

TEST(GpuE2eTest, EccErrorNamesCardAndSlot) {
  RunResult r = Check("ecc_dbe.scenario", "hgx_h100");
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  json j = Parse(r);
  const json* f = FindingById(j, "gpu.ecc.dbe");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_EQ((*f)["gpu"]["index"], 1);
  EXPECT_EQ((*f)["gpu"]["serial"], "1654922000011");
  EXPECT_EQ((*f)["gpu"]["pci_bus_id"], "0000:2a:00.0");
  EXPECT_EQ((*f)["evidence"]["dbe_volatile_count"], 2);
}

TEST(GpuE2eTest, MissingCardOnTheBus) {
  RunResult r = Check("gpu_missing.scenario", "hgx_h100");
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  json j = Parse(r);
  const json* f = FindingById(j, "gpu.missing");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_EQ((*f)["gpu"]["pci_bus_id"], "0000:db:00.0");
}

TEST(GpuE2eTest, NoGpuNoDriverIsInfoAndOtherLayersStillRun) {
  RunResult r =
      RunGpudoctor({"check", "--json", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1",
                    "--path.sysfs", FixturePath("sysfs/nogpu"), "--skip-probes", "reachability"},
                   std::chrono::seconds(30));
  ASSERT_GE(r.exit_code, 0) << r.err;
  ASSERT_LE(r.exit_code, 2) << r.err;
  json j = Parse(r);
  const json* f = FindingById(j, "gpu.none");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_EQ((*f)["severity"], "info");
  EXPECT_NE((*f)["summary"].get<std::string>().find("no NVIDIA GPU or driver found"),
            std::string::npos);
  bool cpu_ran = false;
  for (const auto& p : j["probes"]) {
    if (p["name"] == "cpu") cpu_ran = p["status"] == "ok";
    if (p["name"] == "nvml") {
      EXPECT_EQ(p["status"], "skipped");
    }
  }
  EXPECT_TRUE(cpu_ran) << j["probes"].dump();
  EXPECT_TRUE(j["gpus"].empty());
  EXPECT_EQ(j["nvml"]["state"], "library_missing");
}

}  // namespace
}  // namespace gpudoctor
