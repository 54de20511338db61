// Fleet reads the action of other nodes' findings: as reported, or for older reports from the
// catalogue, and for gpu.xid from the Xid code (evidence or summary).
#include "rules/stored_action.h"

#include <gtest/gtest.h>

namespace gpudoctor::fleet {
namespace {

TEST(FleetFindingActionTest, ReportedActionWins) {
  EXPECT_EQ(ReadFindingAction("reset_gpu", "gpu.xid", 13, "Xid 13"), Action::kResetGpu);
}

TEST(FleetFindingActionTest, OlderReportsAreReadByIdAndXidCode) {
  EXPECT_EQ(ReadFindingAction("", "gpu.ecc.dbe", std::nullopt, ""), Action::kDrainReset);
  EXPECT_EQ(ReadFindingAction("", "host.cpu.saturated", std::nullopt, ""), Action::kWatch);
  // Application Xids are never evidence against the card; 48 and 79 are.
  for (int code : {13, 31, 43, 45}) {
    EXPECT_FALSE(IsHardwareAction(ReadFindingAction("", "gpu.xid", code, ""))) << code;
  }
  EXPECT_TRUE(IsHardwareAction(ReadFindingAction("", "gpu.xid", 48, "")));
  EXPECT_TRUE(IsHardwareAction(
      ReadFindingAction("", "gpu.xid", std::nullopt, "GPU 0: Xid 79 (fallen off the bus)")));
  EXPECT_FALSE(IsHardwareAction(ReadFindingAction("", "gpu.xid", std::nullopt, "Xid 13, pid=1")));
}

TEST(FleetFindingActionTest, XidCodeInText) {
  EXPECT_EQ(XidCodeInText("GPU 3: Xid 79 (fallen off the bus)"), 79);
  EXPECT_EQ(XidCodeInText("Xid 154"), 154);
  EXPECT_FALSE(XidCodeInText("no code here"));
  EXPECT_FALSE(XidCodeInText("Xid "));
}

}  // namespace
}  // namespace gpudoctor::fleet

#include <nlohmann/json.hpp>

#include "facts/gpu_facts.h"
#include "fleet/ledger.h"
#include "fleet/onsets.h"
#include "fleet/report_reader.h"

namespace gpudoctor::fleet {
namespace {

TEST(SerialTest, PlaceholdersAreNoSerial) {
  for (const char* p : {"", "0", "00000000", "N/A", "[N/A]", " n/a ", "Not Available", "Unknown",
                        "0000-0000", "\t0\n"}) {
    EXPECT_EQ(SerialOrEmpty(p), "") << "'" << p << "'";
  }
  EXPECT_EQ(SerialOrEmpty(" 1654922000123 "), "1654922000123");
  EXPECT_EQ(SerialOrEmpty("0x1f"), "0x1f");
  EXPECT_EQ(SerialOrEmpty("1000"), "1000");
}

// Two boards that both print serial "0" in different nodes are two cards, never one card seen in
// two slots at once, and a DBE on one is never evidence against the other.
TEST(SerialTest, PlaceholderSerialsNeverMergeCards) {
  using nlohmann::json;
  FleetData d;
  for (const char* node : {"n1", "n2"}) {
    json gpu = {{"index", 0},
                {"uuid", std::string("GPU-") + node},
                {"serial", "0"},
                {"pci_bus_id", "0000:2a:00.0"},
                {"name", "NVIDIA H100 80GB HBM3"}};
    json findings = json::array();
    findings.push_back({{"id", "gpu.ecc.dbe"},
                        {"layer", "hardware"},
                        {"severity", "crit"},
                        {"action", "drain_reset"},
                        {"summary", "GPU 0: DBE"},
                        {"gpu", gpu}});
    json report = {{"verdict", "crit"},
                   {"host", node},
                   {"time", "2026-01-10T00:00:00Z"},
                   {"findings", findings},
                   {"probes", json::array()},
                   {"gpus", json::array({gpu})}};
    ASSERT_TRUE(AddReport(report.dump(), node, 1768003200 + 86400, d).ok());
  }
  ASSERT_EQ(d.cards.size(), 2u);
  for (const auto& c : d.cards) EXPECT_EQ(c.serial, "");
  for (const auto& e : d.findings) EXPECT_EQ(e.gpu.serial, "");
  EXPECT_TRUE(BuildLedger(d).empty());  // no serial: nothing to follow between slots
}

}  // namespace
}  // namespace gpudoctor::fleet
