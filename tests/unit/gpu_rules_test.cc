// GPU rules on hand-built facts: per-generation PCIe replay limits, SBE rates, idle links,
// NVLink and ECC edge cases. Pure functions, no NVML.
#include <gtest/gtest.h>

#include <algorithm>

#include "nvml/abi.h"
#include "rules/engine.h"

namespace gpudoctor {
namespace {

GpuFacts Gpu(int index) {
  GpuFacts g;
  g.index = index;
  g.uuid = "GPU-" + std::to_string(index);
  g.serial = "S" + std::to_string(index);
  g.pci_bus_id = "0000:1" + std::to_string(index) + ":00.0";
  g.window_s = 60;
  return g;
}

std::vector<Finding> Judge(std::vector<GpuFacts> gpus) {
  Snapshot snap;
  snap.gpu.nvml.state = NvmlState::kOk;
  snap.gpu.gpus = std::move(gpus);
  std::vector<Finding> out;
  GpuRules(snap, Thresholds(), out);
  return out;
}

bool Has(const std::vector<Finding>& fs, std::string_view id) {
  for (const auto& f : fs) {
    if (f.id == id) return true;
  }
  return false;
}

TEST(GpuRulesTest, PcieReplayLimitFollowsGenerationAndWidth) {
  // Gen4 x16: 0.96 replays/min/lane -> limit ceil(15.36) = 16 per minute.
  GpuFacts g = Gpu(0);
  g.pcie_gen = 4;
  g.pcie_width = 16;
  g.first.pcie_replays = 100;
  g.second.pcie_replays = 116;  // 16 in 60 s: at the limit, fine
  EXPECT_FALSE(Has(Judge({g}), "gpu.pcie.replays"));
  g.second.pcie_replays = 117;
  EXPECT_TRUE(Has(Judge({g}), "gpu.pcie.replays"));
  // The same 17/min on a Gen5 x16 link (limit 31) is healthy: no flat 8/min rule (DCGM#184).
  g.pcie_gen = 5;
  EXPECT_FALSE(Has(Judge({g}), "gpu.pcie.replays"));
  // Counter reset (driver reload) is not growth.
  g.second.pcie_replays = 3;
  EXPECT_FALSE(Has(Judge({g}), "gpu.pcie.replays"));
}

TEST(GpuRulesTest, SbeRateNeedsGrowthAboveTheLimit) {
  GpuFacts g = Gpu(1);
  g.first.ecc_sbe_volatile = 1000;  // a large lifetime count alone is not a rate
  g.second.ecc_sbe_volatile = 1005;
  EXPECT_FALSE(Has(Judge({g}), "gpu.ecc.sbe_rate"));  // 5/min < 10/min
  g.second.ecc_sbe_volatile = 1011;
  EXPECT_TRUE(Has(Judge({g}), "gpu.ecc.sbe_rate"));
}

TEST(GpuRulesTest, IdleLinkDowntrainingIsNotDegradation) {
  GpuFacts g = Gpu(2);
  g.pcie_gen = 1;
  g.pcie_max_gen = 5;
  g.pcie_width = 16;
  g.pcie_max_width = 16;
  g.util_gpu_pct = 0;
  EXPECT_FALSE(Has(Judge({g}), "gpu.pcie.degraded"));
  g.util_gpu_pct = 90;
  EXPECT_TRUE(Has(Judge({g}), "gpu.pcie.degraded"));
}

TEST(GpuRulesTest, NvLinkAllDownOnlyCountsWhenPeersHaveLinks) {
  GpuFacts lone = Gpu(0);
  lone.nvlinks = {{0, false}, {1, false}};  // e.g. a PCIe card without a bridge
  EXPECT_FALSE(Has(Judge({lone}), "gpu.nvlink.down"));
  GpuFacts peer = Gpu(1);
  peer.nvlinks = {{0, true}, {1, true}};
  EXPECT_TRUE(Has(Judge({lone, peer}), "gpu.nvlink.down"));
  // Lifetime CRC totals are not judged, only growth.
  peer.first.nvlink_crc_flit_errors = 5000;
  peer.second.nvlink_crc_flit_errors = 5000;
  EXPECT_FALSE(Has(Judge({peer}), "gpu.nvlink.errors"));
}

TEST(GpuRulesTest, NvLinkAllDownOnSxmPartsOrWithNvSwitches) {
  GpuFacts a = Gpu(0), b = Gpu(1);
  a.nvlinks = b.nvlinks = {{0, false}, {1, false}};
  Snapshot snap;
  snap.gpu.nvml.state = NvmlState::kOk;
  snap.gpu.gpus = {a, b};
  snap.gpu.pci_nvswitches = 0;  // PCIe cards, no bridge: unused links are no fault
  std::vector<Finding> out;
  GpuRules(snap, Thresholds(), out);
  EXPECT_FALSE(Has(out, "gpu.nvlink.down"));
  snap.gpu.pci_nvswitches = 4;  // HGX baseboard: fabric down
  out.clear();
  GpuRules(snap, Thresholds(), out);
  EXPECT_EQ(std::count_if(out.begin(), out.end(),
                          [](const Finding& f) { return f.id == "gpu.nvlink.down"; }),
            2);
  a.name = "NVIDIA A100-SXM4-80GB";  // an SXM part by name, even without the sysfs scan
  EXPECT_TRUE(Has(Judge({a}), "gpu.nvlink.down"));
}

TEST(GpuRulesTest, HungGpuIsNotJudgedOnPartialFacts) {
  GpuFacts g = Gpu(3);
  g.hung = true;
  g.first.ecc_dbe_volatile = 4;
  EXPECT_FALSE(Has(Judge({g}), "gpu.ecc.dbe"));
  g.hung = false;
  EXPECT_TRUE(Has(Judge({g}), "gpu.ecc.dbe"));
}

TEST(GpuRulesTest, ThrottleReasonMustPersistAcrossTheWindow) {
  GpuFacts g = Gpu(4);
  g.util_gpu_pct = 95;
  g.first.clock_event_reasons = 0x8;
  g.second.clock_event_reasons = 0x0;  // flashed during a clock change
  EXPECT_FALSE(Has(Judge({g}), "gpu.hw_slowdown"));
  g.second.clock_event_reasons = 0x8;
  EXPECT_TRUE(Has(Judge({g}), "gpu.hw_slowdown"));
}

}  // namespace
}  // namespace gpudoctor

namespace gpudoctor {
namespace {

// The probe's real window is 0.25 s: one new error must not extrapolate into a warning.
TEST(GpuRulesShortWindowTest, RatesNeedEnoughEventsInAShortWindow) {
  GpuFacts g = Gpu(2);
  g.window_s = 0.25;
  g.first.ecc_sbe_volatile = 10;
  g.second.ecc_sbe_volatile = 11;  // 1 in 0.25 s ("240/min")
  EXPECT_FALSE(Has(Judge({g}), "gpu.ecc.sbe_rate"));
  g.second.ecc_sbe_volatile = 30;  // 20 in 0.25 s
  EXPECT_TRUE(Has(Judge({g}), "gpu.ecc.sbe_rate"));

  GpuFacts p = Gpu(3);
  p.window_s = 0.25;
  p.pcie_gen = 5;
  p.pcie_width = 16;
  p.first.pcie_replays = 0;
  p.second.pcie_replays = 3;  // "720/min" from three replays
  EXPECT_FALSE(Has(Judge({p}), "gpu.pcie.replays"));
  p.second.pcie_replays = 40;
  EXPECT_TRUE(Has(Judge({p}), "gpu.pcie.replays"));
}

TEST(GpuRulesShortWindowTest, SlowdownNeedsTheConfirmingRead) {
  GpuFacts g = Gpu(4);
  g.util_gpu_pct = 95;
  g.first.clock_event_reasons = nvml::kClocksReasonHwSlowdown;
  // The confirming read failed: no evidence that the slowdown persisted.
  EXPECT_FALSE(Has(Judge({g}), "gpu.hw_slowdown"));
  g.second.clock_event_reasons = nvml::kClocksReasonHwSlowdown;
  EXPECT_TRUE(Has(Judge({g}), "gpu.hw_slowdown"));
}

TEST(GpuRulesShortWindowTest, LostLanesCountAtIdleLowGenerationOnlyUnderLoad) {
  GpuFacts g = Gpu(5);
  g.util_gpu_pct = 0;
  g.pcie_gen = 1;
  g.pcie_max_gen = 5;
  g.pcie_width = 16;
  g.pcie_max_width = 16;
  EXPECT_FALSE(Has(Judge({g}), "gpu.pcie.degraded"));  // idle downtraining: normal
  g.pcie_width = 8;
  EXPECT_TRUE(Has(Judge({g}), "gpu.pcie.degraded"));  // half the lanes gone: always suspicious
  g.pcie_width = 16;
  g.util_gpu_pct = 90;
  EXPECT_TRUE(Has(Judge({g}), "gpu.pcie.degraded"));  // Gen1 under load
}

// A GPU past a threshold is described as past it, never as "within N C of" it.
TEST(GpuRulesTest, ThermalSummarySaysAboveWhenAbove) {
  auto summary = [](const GpuFacts& g) {
    for (const auto& f : Judge({g})) {
      if (f.id == "gpu.thermal") return f.summary;
    }
    return std::string("(no gpu.thermal)");
  };
  GpuFacts g = Gpu(2);
  g.temp_slowdown_c = 87;
  g.temp_shutdown_c = 92;
  g.temp_c = 95;
  EXPECT_NE(summary(g).find("at or above the shutdown threshold (92 C)"), std::string::npos)
      << summary(g);
  g.temp_c = 88;
  EXPECT_NE(summary(g).find("at or above the slowdown threshold (87 C)"), std::string::npos)
      << summary(g);
  g.temp_c = 84;
  EXPECT_NE(summary(g).find("within"), std::string::npos) << summary(g);
  g.temp_c = 60;
  g.temp_memory_max_c = 95;
  g.memory_temp_c = 97;
  EXPECT_NE(summary(g).find("at or above its limit (95 C)"), std::string::npos) << summary(g);
  g.memory_temp_c = 93;
  EXPECT_NE(summary(g).find("within"), std::string::npos) << summary(g);
}

}  // namespace
}  // namespace gpudoctor
