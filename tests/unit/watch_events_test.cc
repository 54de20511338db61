// History events between ticks and the counter window, as pure functions of snapshots.
#include <gtest/gtest.h>

#include "watch/counter_window.h"
#include "watch/daemon.h"
#include "watch/tick_events.h"

namespace gpudoctor {
namespace {

GpuFacts Gpu(int index, std::string serial, std::string bus) {
  GpuFacts g;
  g.index = index;
  g.serial = std::move(serial);
  g.pci_bus_id = std::move(bus);
  return g;
}

Snapshot WithGpus(std::vector<GpuFacts> gpus, std::string driver = "550.54.15") {
  Snapshot s;
  s.gpu.nvml.state = NvmlState::kOk;
  s.gpu.driver.driver_version = std::move(driver);
  s.gpu.gpus = std::move(gpus);
  return s;
}

std::vector<std::string> Kinds(const std::vector<HistoryEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.kind);
  return out;
}

TEST(TickEventsTest, FirstTickReportsOnlyARebootSinceTheStoredBoot) {
  Snapshot now = WithGpus({Gpu(0, "S0", "0000:3b:00.0")});
  EXPECT_TRUE(DeriveEvents({}, now, "boot-b", "boot-a", 1000).size() == 1);
  EXPECT_EQ(DeriveEvents({}, now, "boot-b", "boot-a", 1000)[0].kind, "reboot");
  EXPECT_TRUE(DeriveEvents({}, now, "boot-a", "boot-a", 1000).empty());
  EXPECT_TRUE(DeriveEvents({}, now, "boot-a", "", 1000).empty());
}

TEST(TickEventsTest, CardsAppearAndLeaveBySerialAndDriverChanges) {
  Snapshot before = WithGpus({Gpu(0, "S0", "0000:3b:00.0"), Gpu(1, "S1", "0000:5e:00.0")});
  EventBaseline base = BaselineOf(before, "boot-a");
  // Card S1 swapped for S9 in the same slot; driver upgraded.
  Snapshot now = WithGpus({Gpu(0, "S0", "0000:3b:00.0"), Gpu(1, "S9", "0000:5e:00.0")}, "560.1");
  auto events = DeriveEvents(base, now, "boot-a", "", 2000);
  EXPECT_EQ(Kinds(events),
            (std::vector<std::string>{"driver_changed", "gpu_appeared", "gpu_disappeared"}));
  EXPECT_EQ(events[1].serial, "S9");
  EXPECT_EQ(events[1].pci_bus_id, "0000:5e:00.0");
  EXPECT_EQ(events[2].serial, "S1");
}

TEST(TickEventsTest, AHungGpuIsNotCalledGone) {
  Snapshot before = WithGpus({Gpu(0, "S0", "0000:3b:00.0")});
  EventBaseline base = BaselineOf(before, "b");
  GpuFacts hung = Gpu(0, "S0", "0000:3b:00.0");
  hung.hung = true;
  EXPECT_TRUE(DeriveEvents(base, WithGpus({hung}), "b", "", 1).empty());
}

TEST(TickEventsTest, NewXidLinesBecomeOneEventPerCodeAndGpu) {
  Snapshot before = WithGpus({Gpu(2, "S2", "0000:3b:00.0")});
  KernelEvent x;
  x.kind = KernelEventKind::kXid;
  x.xid = 79;
  x.pci = PciAddress{0, 0x3b, 0, 0};
  x.count = 1;
  before.kernel.events.push_back(x);
  EventBaseline base = BaselineOf(before, "b");
  Snapshot now = before;
  EXPECT_TRUE(DeriveEvents(base, now, "b", "", 1).empty());  // same count: nothing new
  now.kernel.events[0].count = 3;
  auto events = DeriveEvents(base, now, "b", "", 1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "xid");
  EXPECT_EQ(events[0].gpu_index, 2);
  EXPECT_EQ(events[0].serial, "S2");
  EXPECT_NE(events[0].detail.find("Xid 79 (2 new"), std::string::npos);
}

TEST(CounterWindowTest, RatesSpanTheWindowNotOneTick) {
  CounterWindow window(60);
  uint64_t sbe = 1000;
  Snapshot last;
  for (int t = 1; t <= 100; ++t) {
    GpuFacts g = Gpu(0, "S0", "0000:3b:00.0");
    g.first.ecc_sbe_volatile = sbe;
    sbe += 2;  // 2 errors per second
    g.second.ecc_sbe_volatile = sbe;
    g.first.clock_event_reasons = 0x40;  // previous tick's reasons must survive
    g.window_s = 1;
    Snapshot s = WithGpus({g});
    window.Apply(s, t);
    last = s;
  }
  const GpuFacts& g = last.gpu.gpus[0];
  ASSERT_TRUE(g.window_s);
  EXPECT_NEAR(*g.window_s, 60, 1.01);
  EXPECT_NEAR(
      static_cast<double>(*g.second.ecc_sbe_volatile - *g.first.ecc_sbe_volatile) / *g.window_s,
      2.0, 0.01);
  EXPECT_EQ(g.first.clock_event_reasons, 0x40u);
}

// Reads are kept window_s / 60 apart: ≈ 61 per GPU instead of one per tick, and the window the
// rates span stays between window_s and window_s * 61 / 60 plus a tick, the rate exact.
TEST(CounterWindowTest, KeepsAboutSixtyReadsPerWindowAndExactRates) {
  CounterWindow window(300);
  uint64_t sbe = 1000;
  for (int t = 1; t <= 1200; ++t) {
    Snapshot s;
    for (int gpu = 0; gpu < 2; ++gpu) {
      GpuFacts g = Gpu(gpu, "S" + std::to_string(gpu), "0000:3b:00." + std::to_string(gpu));
      g.first.ecc_sbe_volatile = sbe;
      g.second.ecc_sbe_volatile = sbe + 3;
      g.window_s = 1;
      s.gpu.gpus.push_back(g);
    }
    sbe += 3;  // 3 errors per second
    window.Apply(s, t);
    for (const GpuFacts& g : s.gpu.gpus) {
      ASSERT_TRUE(g.window_s);
      if (t > 301) {
        EXPECT_GE(*g.window_s, 300) << t;
        EXPECT_LE(*g.window_s, 306) << t;
      }
      EXPECT_EQ(static_cast<double>(*g.second.ecc_sbe_volatile - *g.first.ecc_sbe_volatile),
                3 * *g.window_s)
          << t;
    }
  }
  EXPECT_LE(window.reads_held(), 2u * 62);
  EXPECT_GE(window.reads_held(), 2u * 60);
}

}  // namespace
}  // namespace gpudoctor
