// compare and fleet on hostile reports: malformed shapes are errors (exit 3 at the CLI), and
// strings from reports reach the text output escaped.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fleet/analysis.h"
#include "fleet/report_reader.h"
#include "report/compare.h"

namespace gpudoctor {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

json Report(const std::string& host, json gpus) {
  return {{"verdict", "ok"},
          {"host", host},
          {"time", "2026-12-01T00:00:00Z"},
          {"findings", json::array()},
          {"gpus", gpus}};
}

json Gpu(const std::string& serial) {
  return {{"index", 0}, {"serial", serial}, {"pci_bus_id", "0000:18:00.0"}, {"pcie_width", 16}};
}

TEST(CompareShapeTest, GpusThatAreNotAListAreMalformedNotAllGone) {
  json good = Report("n1", {Gpu("A")});
  json bad = Report("n1", "notalist");
  auto c = CompareReports(good, bad);
  ASSERT_FALSE(c.ok()) << c->json.dump();
  EXPECT_THAT(c.status().message(), HasSubstr("the second report"));
  EXPECT_THAT(c.status().message(), HasSubstr("\"gpus\" is string, expected an array"));
  EXPECT_FALSE(CompareReports(bad, good).ok());
}

TEST(CompareShapeTest, OtherWrongTypesAreMalformed) {
  json good = Report("n1", {Gpu("A")});
  for (auto mutate : std::vector<std::function<void(json&)>>{
           [](json& r) {
             r["findings"] = {{"id", "x"}, {"severity", "crit"}};
           },  // an object
           [](json& r) { r["findings"] = json::array({"gpu.xid"}); },
           [](json& r) { r["gpus"][0]["serial"] = json::array({1}); },
           [](json& r) { r["gpus"][0]["nvlinks"] = "up"; },
           [](json& r) { r["driver"] = "550"; },
           [](json& r) { r["host"] = 5; },
       }) {
    json bad = good;
    mutate(bad);
    auto c = CompareReports(good, bad);
    EXPECT_FALSE(c.ok()) << bad.dump();
    if (!c.ok()) {
      EXPECT_THAT(c.status().message(), HasSubstr("malformed")) << bad.dump();
    }
  }
  // A report without "gpus" (GPU probes off) is still a report.
  json none = good;
  none.erase("gpus");
  EXPECT_TRUE(CompareReports(none, none).ok());
}

TEST(CompareShapeTest, HostNamesAndSummariesAreEscapedInText) {
  json a = Report("n1\x1b]0;owned\x07", {Gpu("A\nFAKE")});
  json b = Report("n1", json::array());
  b["findings"] = {{{"id", "gpu.xid"},
                    {"severity", "crit"},
                    {"summary", "Xid\x1b[31m 79\r"},
                    {"gpu", {{"serial", "B"}, {"pci_bus_id", "0000:18:00.0"}}}}};
  auto c = CompareReports(a, b);
  ASSERT_TRUE(c.ok()) << c.status().message();
  std::string text = RenderComparisonText(*c);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_THAT(text, HasSubstr("n1\\x1b]0;owned\\x07"));
  EXPECT_THAT(text, HasSubstr("A\\nFAKE"));
  EXPECT_THAT(text, HasSubstr("Xid\\x1b[31m 79\\r"));
}

TEST(FleetTextTest, NodeNamesAndProblemsAreEscaped) {
  fleet::FleetData data;
  json r = Report("evil\x1b[2J\nFORGED", {Gpu("S\x1b[1m")});
  r["findings"] = {{{"id", "gpu.xid"},
                    {"severity", "crit"},
                    {"layer", "hardware"},
                    {"summary", "boom\x07"},
                    {"gpu", {{"index", 0}, {"serial", "S\x1b[1m"}}}}};
  ASSERT_TRUE(fleet::AddReport(r.dump(), "a.json", 1796083200, data).ok());
  data.problems.push_back({"b\x1b.json", "", "bad\nline"});
  std::string text = fleet::RenderFleetText(data, fleet::Analyze(data, {}));
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  EXPECT_THAT(text, HasSubstr("evil\\x1b[2J\\nFORGED"));
  EXPECT_THAT(text, HasSubstr("b\\x1b.json: bad\\nline"));
  // No line starts with the forged part.
  EXPECT_EQ(text.find("\nFORGED"), std::string::npos) << text;
  EXPECT_EQ(text.find("\nline"), std::string::npos) << text;
}

}  // namespace
}  // namespace gpudoctor
