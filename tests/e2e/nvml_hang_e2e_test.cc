// Issue 8 item 20: a check whose only problem is a hung GPU says so with its crit verdict
// (exit 2), not "the tool could not run" (exit 3), also with a short --deadline.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace gpudoctor {
namespace {

using testing::FixturePath;
using testing::RunGpudoctor;

TEST(NvmlHangE2eTest, OnlyAHungGpuIsCritNotCouldNotRun) {
  std::string lib = std::string(GPUDOCTOR_BUILD_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1";
  auto r = RunGpudoctor(
      {"check", "--json", "--probes", "nvml", "--nvml-lib", lib, "--deadline", "3"},
      std::chrono::seconds(30), {{"FAKE_NVML_SCENARIO", FixturePath("nvml/hang_gpu2.scenario")}});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["verdict"], "crit");
  bool hang = false;
  for (const auto& f : j["findings"]) hang = hang || f["id"] == "driver.nvml_hang";
  EXPECT_TRUE(hang) << r.out;
}

// A missing library under a very short deadline is "no driver", not an init that did not finish.
TEST(NvmlHangE2eTest, MissingLibraryUnderAShortDeadlineIsNoDriver) {
  auto r =
      RunGpudoctor({"check", "--json", "--probes", "nvml,cpu", "--nvml-lib",
                    "/nonexistent/libnvidia-ml.so.1", "--deadline", "0.35", "--sample-ms", "100"},
                   std::chrono::seconds(10));
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  EXPECT_EQ(j["nvml"]["state"], "library_missing") << j["nvml"].dump();
  for (const auto& f : j["findings"]) EXPECT_NE(f["id"], "driver.nvml_hang") << f.dump();
}

}  // namespace
}  // namespace gpudoctor
