// Interruptions: one hardware event is one interruption whatever number of findings it raised,
// slowdowns and application Xids are none, a condition present in the first report is not new,
// memory errors are gpu_memory, and a lemon cannot dominate the projected rate.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/time_spec.h"
#include "fleet/analysis.h"
#include "fleet/report_reader.h"

namespace gpudoctor::fleet {
namespace {

using nlohmann::json;
constexpr int64_t kT0 = 1768003200;
constexpr int64_t kNow = kT0 + 86400 * 40;

json Gpu(const std::string& node, int i) {
  return {{"index", i},
          {"uuid", "GPU-" + node + std::to_string(i)},
          {"serial", "SN-" + node + "-" + std::to_string(i)},
          {"pci_bus_id", "0000:1" + std::to_string(i) + ":00.0"},
          {"name", "NVIDIA H100 80GB HBM3"}};
}

json Finding(const std::string& id, const std::string& sev, const json& gpu, int xid = 0,
             const std::string& action = "") {
  json f = {{"id", id}, {"severity", sev}, {"layer", "hardware"}, {"summary", id}, {"gpu", gpu}};
  if (xid) f["evidence"] = {{"xid", xid}};
  if (!action.empty()) f["action"] = action;
  return f;
}

// 10 nodes x 8 GPUs, a report every 6 hours for 30 days; `events(node, report)` adds findings.
FleetData Fleet(const std::function<json(int, int)>& events) {
  FleetData d;
  for (int n = 0; n < 10; ++n) {
    std::string node = "n" + std::to_string(n);
    for (int r = 0; r < 120; ++r) {
      json gpus = json::array();
      for (int i = 0; i < 8; ++i) gpus.push_back(Gpu(node, i));
      json rep = {{"verdict", "ok"},
                  {"host", node},
                  {"time", FormatUtc(kT0 + r * 21600)},
                  {"findings", events(n, r)},
                  {"gpus", gpus}};
      EXPECT_TRUE(AddReport(rep.dump(), node, kNow, d).ok());
    }
  }
  return d;
}

TEST(FleetInterruptionsTest, DefinitionDeduplicatesAndCategorises) {
  FleetData d = Fleet([](int n, int r) {
    json f = json::array();
    json g = Gpu("n" + std::to_string(n), 2);
    // Node 0: one ECC event raising Xid 48 and gpu.ecc.dbe together: one gpu_memory interruption.
    if (n == 0 && r == 10) {
      f.push_back(Finding("gpu.xid", "crit", g, 48));
      f.push_back(Finding("gpu.ecc.dbe", "crit", g));
    }
    // Node 1: a fallen-off-the-bus Xid 79: one gpu interruption.
    if (n == 1 && r == 20) f.push_back(Finding("gpu.xid", "crit", g, 79));
    // Node 2: application Xid 13 and a thermal slowdown warning: none.
    if (n == 2 && r == 30) f.push_back(Finding("gpu.xid", "warn", g, 13));
    if (n == 2 && r == 31) f.push_back(Finding("gpu.thermal.slowdown", "warn", g));
    // Node 3: already broken in its first report (start unknown): not counted as new.
    if (n == 3 && r == 0) f.push_back(Finding("gpu.ecc.dbe", "crit", g));
    return f;
  });
  FleetAnalysis a = Analyze(d, FleetOptions{});
  const auto& in = a.interruptions;
  ASSERT_EQ(in.unexpected, 2) << in.arithmetic;
  EXPECT_EQ(in.planned, 0);
  EXPECT_EQ(in.present_at_start, 1);
  EXPECT_EQ(in.by_category.at("gpu_memory"), 1);
  EXPECT_EQ(in.by_category.at("gpu"), 1);
  EXPECT_EQ(in.list[0].node, "n0");
  EXPECT_EQ(in.list[0].findings, 2);
  EXPECT_EQ(in.list[0].serial, "SN-n0-2");
  // 2 interruptions over 10 nodes x 8 GPUs x (119 x 6 h + 5 min).
  const double gpu_days = 80 * (119 * 21600 + 300) / 86400.0;
  EXPECT_NEAR(in.gpu_days, gpu_days, 1e-6);
  EXPECT_NEAR(in.per_gpu_day, 2 / gpu_days, 1e-9);
  EXPECT_LT(in.per_gpu_day_lo, in.per_gpu_day);
  EXPECT_GT(in.per_gpu_day_hi, in.per_gpu_day);
  EXPECT_NEAR(in.meta_per_day_at[1], 419.0 / 54 / 16384 * 10000, 1e-9);
  std::string text = RenderFleetText(d, a);
  EXPECT_NE(text.find("INTERRUPTIONS"), std::string::npos);
  EXPECT_NE(text.find("2 unexpected, 0 planned"), std::string::npos) << text;
  EXPECT_NE(text.find("466 interruptions in 54 days on 16,384 GPUs"), std::string::npos);
  json j = json::parse(RenderFleetJson(d, a));
  EXPECT_EQ(j["interruptions"]["unexpected"], 2);
  EXPECT_EQ(j["interruptions"]["by_category"]["gpu_memory"], 1);
  EXPECT_EQ(j["interruptions"]["projection"][2]["gpus"], 100000);
}

TEST(FleetInterruptionsTest, ALemonDoesNotDominateTheProjection) {
  // One card fails every other day (15 separate incidents); one other node has one fault.
  FleetData d = Fleet([](int n, int r) {
    json f = json::array();
    if (n == 4 && r % 8 == 1) f.push_back(Finding("gpu.xid", "crit", Gpu("n4", 5), 79));
    if (n == 6 && r == 50) f.push_back(Finding("gpu.xid", "crit", Gpu("n6", 1), 79));
    return f;
  });
  FleetAnalysis a = Analyze(d, FleetOptions{});
  const auto& in = a.interruptions;
  EXPECT_EQ(in.unexpected, 16);
  EXPECT_EQ(in.lemon_interruptions, 15);
  EXPECT_NEAR(in.per_gpu_day, 1 / in.gpu_days, 1e-9);  // the lemon is reported apart
  EXPECT_GT(in.per_day_at[2], 0);
  EXPECT_LT(in.per_day_at[2], 100000 * 16 / in.gpu_days / 10);
}

TEST(FleetInterruptionsTest, PoissonInterval) {
  auto [lo0, hi0] = PoissonInterval95(0);
  EXPECT_EQ(lo0, 0);
  EXPECT_NEAR(hi0, 3.69, 0.01);
  auto [lo, hi] = PoissonInterval95(10);  // exact: 4.795 .. 18.39
  EXPECT_NEAR(lo, 4.795, 0.05);
  EXPECT_NEAR(hi, 18.39, 0.1);
}

}  // namespace
}  // namespace gpudoctor::fleet
