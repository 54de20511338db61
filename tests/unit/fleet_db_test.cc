// `fleet --db`: a watch history written through the real store (HistoryStore) is read through
// the store's reader, metric values included, so stragglers are found from databases too.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "fleet/analysis.h"
#include "fleet/db_input.h"
#include "metrics/metric_table.h"
#include "store/history_store.h"
#include "test_util.h"

namespace gpudoctor::fleet {
namespace {

constexpr int64_t kT0 = 1768003200;  // 2026-01-10T00:00:00Z, a multiple of 300
constexpr int kGpus = 8;
constexpr int kTicks = 6;

// One node, 8 GPUs, 6 ticks 5 minutes apart. GPU 5 runs at 1200 MHz with HW slowdown (0x8)
// while its peers run at 1980 MHz; GPU 0 reports a temperature of 1000 C once.
void WriteHistory(const std::string& db) {
  auto store = HistoryStore::Open(db, {});
  ASSERT_TRUE(store.ok()) << store.status().message();
  for (int w = 0; w < kTicks; ++w) {
    auto tick = std::make_shared<TickResult>();
    tick->tick = static_cast<uint64_t>(w + 1);
    tick->unix_ms = (kT0 + w * 300 + 5) * 1000;
    for (int i = 0; i < kGpus; ++i) {
      GpuFacts g;
      g.index = i;
      g.uuid = "GPU-db-" + std::to_string(i);
      g.serial = "SN-db-" + std::to_string(i);
      g.pci_bus_id = "0000:1" + std::to_string(i) + ":00.0";
      g.name = "NVIDIA H100 80GB HBM3";
      tick->report.snapshot.gpu.gpus.push_back(g);
      const bool slow = i == 5;
      auto point = [&](const char* metric, double v) {
        const MetricInfo* info = FindMetric(metric);
        ASSERT_NE(info, nullptr) << metric;
        tick->points.push_back({info, i, {}, v});
      };
      point("gpudoctor_gpu_sm_clock_hertz", slow ? 1.2e9 : 1.98e9 - i * 1e6);
      point("gpudoctor_gpu_sm_clock_max_hertz", 1.98e9);
      point("gpudoctor_gpu_utilization_ratio", 0.97);
      point("gpudoctor_gpu_power_watts", 650);
      point("gpudoctor_gpu_power_limit_watts", 700);
      point("gpudoctor_gpu_temperature_celsius", i == 0 && w == 2 ? 1000 : 60);
      point("gpudoctor_gpu_clock_event_reasons", slow ? 0x8 : 0);
    }
    (*store)->Append(tick);
  }
  (*store)->Flush();
  (*store)->Close();
}

TEST(FleetDbTest, MetricValuesAreReadAndStragglersFound) {
  testing::TempDir dir;
  const std::string db = dir.path() + "/history.db";
  WriteHistory(db);
  FleetData d;
  Status s = ReadHistoryDb(db, d, SteadyClock::now() + std::chrono::seconds(10), 300);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(d.cards.size(), static_cast<size_t>(kGpus));
  // Every tick of every GPU is a measured sample (no valueless ledger bounds in between).
  size_t measured = 0;
  for (const auto& smp : d.samples) {
    if (smp.sm_clock_mhz && smp.util_pct && smp.power_w) ++measured;
  }
  EXPECT_EQ(measured, static_cast<size_t>(kGpus * kTicks));
  EXPECT_EQ(d.samples.size(), measured);
  for (const auto& c : d.cards) {
    ASSERT_TRUE(c.max_sm_clock_mhz.has_value());
    EXPECT_FLOAT_EQ(*c.max_sm_clock_mhz, 1980);
    ASSERT_TRUE(c.power_limit_w.has_value());
    EXPECT_FLOAT_EQ(*c.power_limit_w, 700);
  }
  ASSERT_EQ(d.problems.size(), 1u);
  EXPECT_NE(d.problems[0].message.find("1 metric value(s) out of physical range"),
            std::string::npos)
      << d.problems[0].message;

  FleetAnalysis a = Analyze(d, FleetOptions{});
  ASSERT_EQ(a.stragglers.size(), 1u);
  EXPECT_EQ(d.cards[a.stragglers[0].card].serial, "SN-db-5");
  EXPECT_EQ(a.stragglers[0].kind, "hardware");
}

// A database `watch` is still writing: the GPU ledger's last_seen_s is rewritten only once a
// minute (kGpuLedgerLagS), so the newest samples are later than it; they are read all the same.
TEST(FleetDbTest, LiveDatabaseGivesSamplesNewerThanTheLedgersLastSeen) {
  testing::TempDir dir;
  const std::string db = dir.path() + "/history.db";
  auto store = HistoryStore::Open(db, {});
  ASSERT_TRUE(store.ok()) << store.status().message();
  const int64_t last_tick_s = kT0 + 50;
  for (int64_t t = kT0; t <= last_tick_s; t += 5) {
    auto tick = std::make_shared<TickResult>();
    tick->unix_ms = t * 1000;
    GpuFacts g;
    g.index = 0;
    g.uuid = "GPU-live";
    g.serial = "SN-live";
    g.pci_bus_id = "0000:10:00.0";
    g.name = "NVIDIA H100 80GB HBM3";
    tick->report.snapshot.gpu.gpus.push_back(g);
    tick->points.push_back({FindMetric("gpudoctor_gpu_sm_clock_hertz"), 0, {}, 1.98e9});
    (*store)->Append(tick);
  }
  (*store)->Flush();  // written, not closed: the ledger still says kT0
  FleetData d;
  Status s = ReadHistoryDb(db, d, SteadyClock::now() + std::chrono::seconds(10), 5);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(d.cards.size(), 1u);
  int64_t newest = 0;
  for (const auto& smp : d.samples) {
    if (smp.sm_clock_mhz) newest = std::max(newest, smp.time_s);
  }
  EXPECT_EQ(newest, last_tick_s);
  (*store)->Close();
}

TEST(FleetDbTest, DatabaseWithoutSeriesStillGivesTheLedger) {
  testing::TempDir dir;
  const std::string db = dir.path() + "/history.db";
  {
    auto store = HistoryStore::Open(db, {});
    ASSERT_TRUE(store.ok()) << store.status().message();
    for (int w = 0; w < 2; ++w) {
      auto tick = std::make_shared<TickResult>();
      tick->tick = static_cast<uint64_t>(w + 1);
      tick->unix_ms = (kT0 + w * 86400) * 1000;
      GpuFacts g;
      g.serial = "SN-only";
      g.pci_bus_id = "0000:3b:00.0";
      tick->report.snapshot.gpu.gpus.push_back(g);
      (*store)->Append(tick);
    }
    (*store)->Flush();
    (*store)->Close();
  }
  FleetData d;
  ASSERT_TRUE(ReadHistoryDb(db, d).ok());
  ASSERT_EQ(d.cards.size(), 1u);
  ASSERT_EQ(d.samples.size(), 2u);  // the ledger bounds, without values
  EXPECT_FALSE(d.samples[0].sm_clock_mhz.has_value());
  EXPECT_TRUE(Analyze(d, FleetOptions{}).stragglers.empty());
}

}  // namespace
}  // namespace gpudoctor::fleet
