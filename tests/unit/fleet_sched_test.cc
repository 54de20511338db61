// Slurm reason/state parsing and the node-problem-detector plugin line (src/sched).
#include <gtest/gtest.h>

#include "rules/make_finding.h"
#include "sched/npd.h"
#include "sched/slurm.h"

namespace gpudoctor {
namespace {

// A finding as a rule makes it: layer and action from the catalogue.
Finding F(const std::string& id, Severity sev, Layer layer, int gpu) {
  Finding f = MakeFinding(id, sev, "");
  EXPECT_EQ(f.layer, layer) << id;
  f.summary = "GPU " + std::to_string(gpu) + ": something \"quoted\"\nsecond line";
  f.gpu = GpuRef{gpu, "GPU-x", "0000:2a:00.0", "123", "H100"};
  return f;
}

TEST(SlurmTest, ReasonNamesCritFindingsAndStaysUnder255) {
  std::vector<Finding> fs = {F("gpu.ecc.dbe", Severity::kCrit, Layer::kHardware, 1),
                             F("gpu.thermal", Severity::kWarn, Layer::kHardware, 2)};
  EXPECT_EQ(SlurmReason(fs), "gpudoctor: gpu.ecc.dbe GPU1 0000:2a:00.0");
  for (int i = 0; i < 40; ++i) {
    fs.push_back(F("gpu.ecc.dbe", Severity::kCrit, Layer::kHardware, i));
  }
  std::string r = SlurmReason(fs);
  EXPECT_LE(r.size(), kSlurmReasonMax);
  EXPECT_NE(r.find("more)"), std::string::npos);
  EXPECT_EQ(r.find('"'), std::string::npos);
}

TEST(SlurmTest, ParsesShowNode) {
  auto s = ParseSlurmNode(
      "NodeName=n1 Arch=x86_64 CoresPerSocket=1 State=IDLE+DRAIN ThreadsPerCore=1 "
      "Reason=gpudoctor: gpu.ecc.dbe GPU1 0000:2a:00.0 [root@2026-01-10T00:00:00]\n");
  EXPECT_TRUE(s.known);
  EXPECT_TRUE(s.drained());
  EXPECT_TRUE(s.has_our_prefix());
  EXPECT_EQ(s.reason, "gpudoctor: gpu.ecc.dbe GPU1 0000:2a:00.0");
  auto other = ParseSlurmNode("NodeName=n1 State=DRAIN Reason=bad fan [admin@2026-01-10]");
  EXPECT_FALSE(other.has_our_prefix());
  EXPECT_FALSE(ParseSlurmNode("NodeName=n1 State=IDLE").drained());
}

TEST(SlurmTest, ToolFailureNeverDrainsByDefault) {
  SlurmOptions o;
  o.node = "n1";
  o.scontrol = "/nonexistent/scontrol";  // would fail loudly if it were called
  SlurmOutcome r = RunSlurmMode({}, "NVML missing", o);
  EXPECT_EQ(r.action, "none");
  EXPECT_EQ(r.exit_code, 3);
}

TEST(SlurmTest, HealthyWithoutSlurmIsSilent) {
  SlurmOptions o;
  o.node = "n1";
  o.scontrol = "/nonexistent/scontrol";
  SlurmOutcome r = RunSlurmMode({F("gpu.thermal", Severity::kWarn, Layer::kHardware, 0)}, "", o);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.message.empty());
}

TEST(NpdTest, ContractExitCodesAndOneBoundedLine) {
  std::vector<Finding> fs = {F("gpu.ecc.dbe", Severity::kCrit, Layer::kHardware, 1),
                             F("net.loss", Severity::kWarn, Layer::kNetwork, 0)};
  NpdOutcome hw = NpdResult(fs, Layer::kHardware, "");
  EXPECT_EQ(hw.exit_code, 1);
  EXPECT_EQ(hw.message.find('\n'), std::string::npos);
  EXPECT_EQ(hw.message.rfind("gpu.ecc.dbe GPU1 [drain_reset]: ", 0), 0u) << hw.message;
  NpdOutcome net = NpdResult(fs, Layer::kNetwork, "");
  EXPECT_EQ(net.exit_code, 0);
  EXPECT_EQ(net.message, "ok (warn: net.loss)");
  EXPECT_EQ(NpdResult({}, std::nullopt, "").message, "ok");
  EXPECT_EQ(NpdResult({}, std::nullopt, "boom").exit_code, 2);
  Finding big = F("gpu.xid", Severity::kCrit, Layer::kHardware, 3);
  big.summary = std::string(5000, 'x');
  EXPECT_LE(NpdResult({big, big}, std::nullopt, "").message.size(), kNpdMessageMax);
}

}  // namespace
}  // namespace gpudoctor
