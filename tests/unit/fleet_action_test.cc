// Fleet reads the action of other nodes' findings: as reported, or for older reports from the
// catalogue, and for gpu.xid from the Xid code (evidence or summary).
#include <gtest/gtest.h>

#include "fleet/finding_action.h"

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
