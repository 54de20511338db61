// gpu.readings_failed: a GPU whose readings fail (nvidia-smi's ERR!) is a finding naming the
// calls and their NVML errors, with its action, and is never shown as ok; in a watch session a
// call that answered before and now says NOT_SUPPORTED counts as failing too.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>

#include "finding_test_util.h"
#include "nvml/sampler.h"
#include "nvml/session.h"
#include "report/gpu_report.h"
#include "rules/engine.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using std::chrono::milliseconds;

std::string Lib(bool minimal) { return testing::FakeNvmlLib(minimal); }

NvmlSampleOptions Options(bool minimal = false) {
  NvmlSampleOptions o;
  o.library_path = Lib(minimal);
  o.window = milliseconds(30);
  o.timeout = milliseconds(3000);
  o.deadline = SteadyClock::now() + std::chrono::seconds(20);
  return o;
}

std::vector<Finding> Judge(const GpuLayerFacts& facts) {
  Snapshot snap;
  snap.gpu = facts;
  std::vector<Finding> out;
  GpuRules(snap, Thresholds(), out);
  return out;
}

const Finding* Find(const std::vector<Finding>& fs, const std::string& id, int gpu) {
  for (const auto& f : fs) {
    if (f.id == id && f.gpu && f.gpu->index == gpu) return &f;
  }
  return nullptr;
}

std::string Evidence(const Finding& f, const std::string& name) {
  for (const auto& e : f.evidence) {
    if (e.name == name) {
      if (auto* s = std::get_if<std::string>(&e.value)) return *s;
      return "(not text)";
    }
  }
  return "";
}

TEST(GpuReadingsTest, FailingReadingsAreAFindingWithTheirCallsAndErrors) {
  for (bool minimal : {false, true}) {
    setenv("FAKE_NVML_SCENARIO", testing::FixturePath("nvml/readings_failed.scenario").c_str(), 1);
    GpuLayerFacts facts = SampleNvml(Options(minimal));
    ASSERT_EQ(facts.gpus.size(), 8u);
    auto findings = Judge(facts);

    const Finding* unknown = Find(findings, "gpu.readings_failed", 2);
    ASSERT_NE(unknown, nullptr) << "minimal=" << minimal;
    EXPECT_EQ(unknown->severity, Severity::kCrit);
    EXPECT_EQ(unknown->action, Action::kDrainReset);
    EXPECT_NE(Evidence(*unknown, "nvmlDeviceGetUtilizationRates").find("Unknown Error"),
              std::string::npos);
    std::string temp_call = minimal ? "nvmlDeviceGetTemperatureV" : "nvmlDeviceGetTemperature";
    if (!minimal) {
      EXPECT_NE(Evidence(*unknown, temp_call).find("NVML_ERROR_UNKNOWN"), std::string::npos);
    }
    EXPECT_EQ(unknown->gpu->serial, "1654922000012");

    const Finding* reset = Find(findings, "gpu.readings_failed", 5);
    ASSERT_NE(reset, nullptr);
    EXPECT_EQ(reset->action, Action::kResetGpu);
    EXPECT_NE(Evidence(*reset, "nvmlDeviceGetUtilizationRates").find("RESET_REQUIRED"),
              std::string::npos);
    // RESET_REQUIRED from a reading is this finding's, not a second gpu.nvml_error.
    EXPECT_EQ(Find(findings, "gpu.nvml_error", 5), nullptr);

    for (int healthy : {0, 1, 3, 4, 6, 7}) {
      EXPECT_EQ(Find(findings, "gpu.readings_failed", healthy), nullptr) << healthy;
    }
    // The GPU table does not show them as ok.
    std::string table = GpuTable(facts, findings);
    for (const char* serial : {"1654922000012", "1654922000015"}) {
      size_t at = table.find(serial);
      ASSERT_NE(at, std::string::npos) << table;
      std::string line = table.substr(at, table.find('\n', at) - at);
      EXPECT_NE(line.find("ERROR"), std::string::npos) << line;
    }
  }
}

TEST(GpuReadingsTest, AReadingThatStopsBeingSupportedInAWatchIsAFinding) {
  testing::TempDir dir;
  std::string path = dir.path() + "/now.scenario";
  std::ofstream(path) << "include=" << testing::FixturePath("nvml/h100_healthy.scenario") << "\n";
  setenv("FAKE_NVML_SCENARIO", path.c_str(), 1);
  NvmlSession session(Options());
  GpuLayerFacts t1 = session.Sample(SteadyClock::now() + std::chrono::seconds(10));
  ASSERT_EQ(t1.gpus.size(), 8u);
  EXPECT_EQ(Find(Judge(t1), "gpu.readings_failed", 1), nullptr);
  // The fake stats its scenario at every call: the grown file is re-read by the next one.
  std::ofstream(path, std::ios::app) << "gpu.1.return.nvmlDeviceGetTemperature=3\n";
  GpuLayerFacts t2 = session.Sample(SteadyClock::now() + std::chrono::seconds(10));
  auto findings = Judge(t2);
  const Finding* f = Find(findings, "gpu.readings_failed", 1);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarn);
  EXPECT_NE(Evidence(*f, "nvmlDeviceGetTemperature").find("after it answered before"),
            std::string::npos);
  // A call that never answered (the fan of an SXM board) is plain absence.
  EXPECT_EQ(Find(findings, "gpu.readings_failed", 0), nullptr);
}

}  // namespace
}  // namespace gpudoctor
