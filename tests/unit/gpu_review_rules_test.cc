// Issue 8 items 1, 11, 12, 13 as pure rules over hand-built GPU facts.
#include <gtest/gtest.h>

#include "config/config.h"
#include "rules/engine.h"

namespace gpudoctor {
namespace {

const Finding* Find(const std::vector<Finding>& fs, std::string_view id) {
  for (const auto& f : fs) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

std::vector<Finding> Judge(const Snapshot& s, const Thresholds& t = Thresholds()) {
  std::vector<Finding> out;
  GpuRules(s, t, out);
  return out;
}

GpuFacts Healthy(int index, std::string bus) {
  GpuFacts g;
  g.index = index;
  g.pci_bus_id = std::move(bus);
  g.name = "NVIDIA H100 80GB HBM3";
  g.ecc_enabled = true;
  g.persistence_on = true;
  return g;
}

Snapshot Node(std::vector<GpuFacts> gpus, std::vector<std::string> bus) {
  Snapshot s;
  s.gpu.nvml.state = NvmlState::kOk;
  s.gpu.gpus = std::move(gpus);
  std::vector<PciGpuDevice> devs;
  for (auto& b : bus) devs.push_back({b, 0x233010de, 0x030200, "nvidia"});
  s.gpu.pci_devices = devs;
  return s;
}

// Item 1: GPU_IS_LOST at the handle lookup, no kernel log: the unmatched bus address names it.
TEST(GpuReviewRulesTest, LostAtHandleLookupIsNamedByTheUnmatchedBusAddress) {
  GpuFacts lost;
  lost.index = 1;
  lost.lost = true;
  lost.lost_call = "nvmlDeviceGetHandleByIndex_v2";
  Snapshot s = Node({Healthy(0, "0000:18:00.0"), lost, Healthy(2, "0000:3a:00.0")},
                    {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0"});
  LogGpuIdentity id;
  id.pci = PciAddress{0, 0x2a, 0, 0};
  id.serial = "1654922000042";
  s.kernel.gpus.push_back(id);
  auto fs = Judge(s);
  const Finding* f = Find(fs, "gpu.lost");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->gpu);
  EXPECT_EQ(f->gpu->pci_bus_id, "0000:2a:00.0");
  EXPECT_EQ(f->gpu->serial, "1654922000042");
  EXPECT_EQ(f->gpu->index, 1);
  EXPECT_EQ(Find(fs, "gpu.missing"), nullptr) << "one finding for one lost card";
}

// Item 11: fewer GPUs on the bus than [gpu] expected_count.
TEST(GpuReviewRulesTest, FewerGpusThanExpectedIsMissing) {
  Snapshot s = Node({Healthy(0, "0000:18:00.0")}, {"0000:18:00.0"});
  EXPECT_EQ(Find(Judge(s), "gpu.missing"), nullptr);  // not configured: not checked
  Settings settings;
  auto loaded = ApplyConfigText("[gpu]\nexpected_count = 8\n", "test.toml", settings);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto fs = Judge(s, Thresholds(settings.thresholds));
  const Finding* f = Find(fs, "gpu.missing");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kCrit);
  EXPECT_NE(f->summary.find("7 of 8"), std::string::npos) << f->summary;
}

// Item 12: slow but not hung.
TEST(GpuReviewRulesTest, SlowInitWithPersistenceOffIsNvmlSlow) {
  GpuFacts g = Healthy(0, "0000:18:00.0");
  g.persistence_on = false;
  Snapshot s = Node({g}, {"0000:18:00.0"});
  s.gpu.nvml.init_ms = 2400;
  auto fs = Judge(s);
  const Finding* f = Find(fs, "driver.nvml_slow");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary.find("2.4 s"), std::string::npos) << f->summary;
  EXPECT_NE(f->summary.find("persistence mode off"), std::string::npos) << f->summary;
  s.gpu.nvml.init_ms = 120;
  EXPECT_EQ(Find(Judge(s), "driver.nvml_slow"), nullptr);
}

// Item 13: ECC off on a data-centre part; lifetime totals without growth.
TEST(GpuReviewRulesTest, EccOffAndLifetimeTotals) {
  GpuFacts g = Healthy(0, "0000:18:00.0");
  g.ecc_enabled = false;
  g.second.ecc_sbe_aggregate = 5000;
  g.second.ecc_dbe_aggregate = 0;
  g.second.ecc_dbe_volatile = 0;
  auto fs = Judge(Node({g}, {"0000:18:00.0"}));
  EXPECT_NE(Find(fs, "gpu.ecc.disabled"), nullptr);
  const Finding* life = Find(fs, "gpu.ecc.lifetime");
  ASSERT_NE(life, nullptr);
  EXPECT_NE(life->summary.find("5000 corrected"), std::string::npos) << life->summary;

  GpuFacts consumer = Healthy(0, "0000:18:00.0");
  consumer.name = "NVIDIA GeForce RTX 4090";
  consumer.ecc_enabled = false;
  EXPECT_EQ(Find(Judge(Node({consumer}, {"0000:18:00.0"})), "gpu.ecc.disabled"), nullptr);
}

}  // namespace
}  // namespace gpudoctor
