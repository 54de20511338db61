// `gpudoctor compare` end to end: a report from a healthy day against a check run now on a node
// whose GPU 1 dropped to PCIe x8 (fake NVML), and bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace gpudoctor {
namespace {

using testing::FixturePath;
using testing::RunGpudoctor;
using testing::TempDir;

std::vector<std::string> CheckArgs() {
  return {"--probes",     "nvml,pci_gpu",
          "--nvml-lib",   std::string(GPUDOCTOR_BUILD_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1",
          "--path.sysfs", FixturePath("sysfs/hgx_h100")};
}

TEST(CompareE2eTest, GoodDayAgainstNowShowsTheDegradedLink) {
  TempDir dir;
  std::vector<std::string> args = {"check", "--json"};
  for (auto& a : CheckArgs()) args.push_back(a);
  auto good = RunGpudoctor(args, std::chrono::seconds(30),
                           {{"FAKE_NVML_SCENARIO", FixturePath("nvml/h100_busy.scenario")}});
  ASSERT_EQ(good.exit_code, 0) << good.err;
  dir.Write("good.json", good.out);

  std::vector<std::string> cmp = {"compare", dir.path() + "/good.json", "--json"};
  for (auto& a : CheckArgs()) cmp.push_back(a);
  auto r = RunGpudoctor(cmp, std::chrono::seconds(30),
                        {{"FAKE_NVML_SCENARIO", FixturePath("nvml/pcie_degraded.scenario")}});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  bool width = false;
  for (const auto& g : j["gpus"]) {
    for (const auto& c : g["changes"])
      width = width || (c["field"] == "pcie_width" && c["after"] == 8);
  }
  EXPECT_TRUE(width) << j.dump(2);

  // The same report twice: nothing differs, exit 0.
  auto same = RunGpudoctor({"compare", dir.path() + "/good.json", dir.path() + "/good.json"},
                           std::chrono::seconds(10));
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("No differences"), std::string::npos) << same.out;
}

TEST(CompareE2eTest, UnreadableOrInvalidReportsExit3NamingTheFile) {
  TempDir dir;
  dir.Write("bad.json", "{\"verdict\": ");
  auto r = RunGpudoctor({"compare", dir.path() + "/bad.json", dir.path() + "/bad.json"},
                        std::chrono::seconds(10));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("bad.json"), std::string::npos) << r.err;
  auto missing = RunGpudoctor({"compare", dir.path() + "/nope.json"}, std::chrono::seconds(10));
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_NE(missing.err.find("nope.json"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace gpudoctor
