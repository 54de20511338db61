// `compare` (issue 8 item 14) on hand-built reports: what changed per GPU by serial, new and gone
// findings, and whether a fault followed the card or stayed with the slot after a swap.
#include "report/compare.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gpudoctor {
namespace {

using nlohmann::json;

json Gpu(const std::string& serial, const std::string& bus, int width = 16) {
  return {{"index", 0},          {"serial", serial},      {"pci_bus_id", bus},
          {"pcie_width", width}, {"pcie_max_width", 16},  {"max_sm_clock_mhz", 1980},
          {"temp_c", 40},        {"persistence_on", true}};
}

json Report(const std::string& host, json gpus, json findings = json::array(),
            std::string driver = "550.54.15") {
  return {{"verdict", findings.empty() ? "ok" : "crit"},
          {"host", host},
          {"time", "2026-12-01T00:00:00Z"},
          {"findings", findings},
          {"gpus", gpus},
          {"driver", {{"driver_version", driver}}}};
}

json XidOn(const std::string& serial, const std::string& bus) {
  return {{"id", "gpu.xid"},
          {"severity", "crit"},
          {"summary", "Xid 79"},
          {"gpu", {{"serial", serial}, {"pci_bus_id", bus}}}};
}

TEST(CompareTest, IdenticalReportsHaveNoDifferences) {
  json r = Report("n1", {Gpu("A", "0000:18:00.0")});
  auto c = CompareReports(r, r);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->differences, 0);
  EXPECT_NE(RenderComparisonText(*c).find("No differences"), std::string::npos);
}

TEST(CompareTest, LinkWidthDriverAndNewFindingsAreReported) {
  json good = Report("n1", {Gpu("A", "0000:18:00.0"), Gpu("B", "0000:2a:00.0")});
  json now = Report("n1", {Gpu("A", "0000:18:00.0"), Gpu("B", "0000:2a:00.0", 8)},
                    {XidOn("B", "0000:2a:00.0")}, "560.28.03");
  auto c = CompareReports(good, now);
  ASSERT_TRUE(c.ok());
  const auto& j = c->json;
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_EQ(j["gpus"][0]["gpu"], "B");
  EXPECT_EQ(j["gpus"][0]["changes"][0]["field"], "pcie_width");
  EXPECT_EQ(j["gpus"][0]["changes"][0]["after"], 8);
  EXPECT_EQ(j["host_changes"][0]["field"], "driver.driver_version");
  ASSERT_EQ(j["new_findings"].size(), 1u);
  EXPECT_EQ(c->differences, 3);
  std::string text = RenderComparisonText(*c);
  EXPECT_NE(text.find("PCIe link width: 16 -> 8"), std::string::npos) << text;
}

TEST(CompareTest, FaultFollowingTheSerialIsTheCard) {
  // Card A had the Xid in slot 18 of n1; after the swap it sits in n2 slot 3a, and so does the
  // fault, while n1 slot 18 now holds healthy card C.
  json before = Report("n1", {Gpu("A", "0000:18:00.0")}, {XidOn("A", "0000:18:00.0")});
  json after = Report("n2", {Gpu("A", "0000:3a:00.0")}, {XidOn("A", "0000:3a:00.0")});
  auto c = CompareReports(before, after);
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->json["swap"].size(), 1u);
  EXPECT_EQ(c->json["swap"][0]["verdict"], "card");
}

TEST(CompareTest, FaultStayingAtTheBusIdIsTheSlot) {
  json before = Report("n1", {Gpu("A", "0000:18:00.0")}, {XidOn("A", "0000:18:00.0")});
  json after = Report("n1", {Gpu("C", "0000:18:00.0")}, {XidOn("C", "0000:18:00.0")});
  auto c = CompareReports(before, after);
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->json["swap"].size(), 1u);
  EXPECT_EQ(c->json["swap"][0]["verdict"], "slot");
  EXPECT_EQ(c->json["gpus"].size(), 2u);  // A gone, C appeared
}

TEST(CompareTest, NotAReportOrWrongTypesIsAClearError) {
  auto c = CompareReports(json{{"foo", 1}}, Report("n", json::array()));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("first report"), std::string::npos);
  json bad = Report("n", json::array({Gpu("A", "0000:18:00.0")}));
  bad["gpus"][0]["nvlinks"] = json::array({"not-an-object"});
  auto d = CompareReports(bad, bad);
  EXPECT_FALSE(d.ok());  // a malformed field is an error, never a crash
}

}  // namespace
}  // namespace gpudoctor
