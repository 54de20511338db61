// check --npd --connect: the findings read back from a watch's status document, and the
// warnings condition (NpdWarnings) that carries warn findings to a node condition's message.
#include "cli/npd_connect.h"

#include <gtest/gtest.h>

#include "report/json_report.h"
#include "rules/make_finding.h"
#include "sched/npd.h"

namespace gpudoctor {
namespace {

Finding F(const std::string& id, Severity sev, Layer layer, std::optional<int> gpu) {
  Finding f = MakeFinding(id, sev, "summary of " + id);
  f.layer = layer;
  if (gpu) f.gpu = GpuRef{*gpu, "", "", "", ""};
  return f;
}

nlohmann::json Status(const std::vector<Finding>& now, const std::vector<Finding>& open) {
  nlohmann::json j;
  j["verdict"] = "crit";
  j["findings"] = nlohmann::json::array();
  for (const auto& f : now) j["findings"].push_back(nlohmann::json::parse(FindingToJson(f).dump()));
  j["open_findings"] = nlohmann::json::array();
  for (const auto& f : open) {
    j["open_findings"].push_back({{"key", f.id},
                                  {"state", "open"},
                                  {"finding", nlohmann::json::parse(FindingToJson(f).dump())}});
  }
  return j;
}

TEST(NpdConnectTest, TickFindingsAndOpenEpisodesOncePerKey) {
  Finding dbe = F("gpu.ecc.dbe", Severity::kCrit, Layer::kHardware, 1);
  Finding xid = F("gpu.xid", Severity::kCrit, Layer::kHardware, 3);
  xid.action = Action::kResetGpu;  // the log went quiet, the episode stays open
  nlohmann::json doc = Status({dbe}, {dbe, xid});
  doc["open_findings"].push_back(
      {{"key", "x"}, {"state", "pending"}, {"finding", doc["findings"][0]}});
  auto fs = FindingsFromStatus(doc);
  ASSERT_TRUE(fs.ok()) << fs.status().message();
  ASSERT_EQ(fs->size(), 2u);
  EXPECT_EQ((*fs)[0].id, "gpu.ecc.dbe");
  EXPECT_EQ((*fs)[0].action, Action::kDrainReset);
  ASSERT_TRUE((*fs)[0].gpu && (*fs)[0].gpu->index);
  EXPECT_EQ(*(*fs)[0].gpu->index, 1);
  EXPECT_EQ((*fs)[1].id, "gpu.xid");
  EXPECT_EQ((*fs)[1].action, Action::kResetGpu);
  // The same judgement as a local check --npd.
  NpdOutcome r = NpdResult(*fs, Layer::kHardware, "");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.message.rfind("gpu.ecc.dbe GPU1 [drain_reset]: ", 0), 0u) << r.message;
  EXPECT_NE(r.message.find("(+1 more)"), std::string::npos) << r.message;
}

TEST(NpdConnectTest, ActionFromCatalogueWhenAbsentAndBadFieldsNamed) {
  nlohmann::json doc = Status({F("gpu.ecc.dbe", Severity::kCrit, Layer::kHardware, 0)}, {});
  doc["findings"][0].erase("action");
  auto fs = FindingsFromStatus(doc);
  ASSERT_TRUE(fs.ok());
  EXPECT_EQ((*fs)[0].action, Action::kDrainReset);

  nlohmann::json bad = doc;
  bad["findings"][0]["layer"] = "gpu";
  auto r = FindingsFromStatus(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("findings[0].layer"), std::string::npos)
      << r.status().message();
  bad = doc;
  bad["findings"][0]["severity"] = "fatal";
  EXPECT_FALSE(FindingsFromStatus(bad).ok());
  bad = doc;
  bad["findings"][0]["gpu"]["index"] = 5000;
  EXPECT_FALSE(FindingsFromStatus(bad).ok());
  bad = doc;
  bad.erase("findings");
  EXPECT_FALSE(FindingsFromStatus(bad).ok());
  bad = doc;
  bad["open_findings"] = nlohmann::json::array({{{"state", "open"}}});
  r = FindingsFromStatus(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("open_findings[0].finding"), std::string::npos);
}

TEST(NpdWarningsTest, WarningsReachTheLineNodeOutFindingsDoNot) {
  Finding thermal = F("gpu.thermal", Severity::kWarn, Layer::kHardware, 2);
  thermal.action = Action::kWatch;
  Finding dbe = F("gpu.ecc.dbe", Severity::kCrit, Layer::kHardware, 1);
  Finding app = F("gpu.xid", Severity::kCrit, Layer::kHardware, 0);
  app.action = Action::kRestartApp;  // crit, but the node stays in service
  Finding info = F("gpu.power.cap", Severity::kInfo, Layer::kHardware, 0);
  Finding net = F("net.loss", Severity::kWarn, Layer::kNetwork, std::nullopt);

  NpdOutcome hw = NpdWarnings({thermal, dbe, info, app, net}, Layer::kHardware, "");
  EXPECT_EQ(hw.exit_code, 1);
  // The worst first; the others named; the node-out one is the problem condition's.
  EXPECT_EQ(hw.message.rfind("gpu.xid GPU0 [restart_app]: summary of gpu.xid (+1 more: "
                             "gpu.thermal)",
                             0),
            0u)
      << hw.message;
  EXPECT_EQ(hw.message.find("gpu.ecc.dbe"), std::string::npos);
  NpdOutcome all = NpdWarnings({thermal, net}, std::nullopt, "");
  EXPECT_EQ(all.exit_code, 1);
  EXPECT_NE(all.message.find("net.loss"), std::string::npos) << all.message;

  NpdOutcome none = NpdWarnings({dbe, info}, Layer::kHardware, "");
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_EQ(none.message, "no warnings");
  EXPECT_EQ(NpdWarnings({}, std::nullopt, "watch gone").exit_code, 2);

  std::vector<Finding> many;
  for (int i = 0; i < 60; ++i) {
    Finding f;  // ids outside the catalogue: only the line's bound is under test
    f.id = "host.thing" + std::to_string(i);
    f.severity = Severity::kWarn;
    f.layer = Layer::kResources;
    f.action = Action::kWatch;
    f.gpu = GpuRef{i, "", "", "", ""};
    f.summary = std::string(300, 's');
    many.push_back(f);
  }
  NpdOutcome big = NpdWarnings(many, Layer::kResources, "");
  EXPECT_EQ(big.exit_code, 1);
  EXPECT_LE(big.message.size(), kNpdMessageMax);
  EXPECT_EQ(big.message.rfind("host.thing0 GPU0 [watch]: sss", 0), 0u) << big.message;
  EXPECT_NE(big.message.find("(+59 more: host.thing1, "), std::string::npos) << big.message;
}

}  // namespace
}  // namespace gpudoctor
