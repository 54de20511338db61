// XidLedger: Xids from the kernel log and from NVML's event API in one count per GPU and code,
// an occurrence both report counted once; the counts feed gpudoctor_gpu_xid_errors_total,
// DCGM_FI_DEV_XID_ERRORS (the last code) and the "xid" history events.
#include "watch/xid_ledger.h"

#include <gtest/gtest.h>

#include "metrics/metric_table.h"
#include "serve/exporter.h"
#include "watch/tick_events.h"

namespace gpudoctor {
namespace {

constexpr int64_t kT0 = 1'760'000'000'000;  // ms since the epoch

Snapshot Node() {
  Snapshot s;
  s.gpu.nvml.state = NvmlState::kOk;
  for (int i = 0; i < 2; ++i) {
    GpuFacts g;
    g.index = i;
    g.serial = "S" + std::to_string(i);
    g.pci_bus_id = i == 0 ? "0000:3b:00.0" : "0000:5e:00.0";
    s.gpu.gpus.push_back(g);
  }
  return s;
}

// The kernel log's cumulative count of Xid `xid` lines on GPU 0 (bus 3b), the last at `t_ms`.
void KernelLines(Snapshot& s, int xid, uint64_t count, int64_t t_ms) {
  KernelEvent e;
  e.kind = KernelEventKind::kXid;
  e.xid = xid;
  e.pci = PciAddress{0, 0x3b, 0, 0};
  e.subject = "0000:3b:00.0";
  e.count = count;
  e.last.wall_us = t_ms * 1000;
  s.kernel.events.push_back(e);
}

void NvmlEvent(Snapshot& s, int gpu, uint64_t xid, int64_t t_ms) {
  NvmlXidEvent e;
  e.gpu_index = gpu;
  e.xid = xid;
  e.unix_ms = t_ms;
  s.gpu.nvml_xid_events.push_back(e);
}

uint64_t Tally(const Snapshot& s, int gpu, uint64_t xid) {
  for (const XidTally& t : *s.gpu.xid_tallies) {
    if (t.gpu_index == gpu && t.xid == xid) return t.count;
  }
  return 0;
}

double XidMetric(const Snapshot& s, int gpu, const std::string& xid) {
  for (const MetricPoint& p : FlattenSnapshot(s)) {
    if (p.info != &kGpuXidErrorsTotal || p.gpu != gpu) continue;
    for (const auto& [k, v] : p.labels) {
      if (k == "xid" && v == xid) return p.value;
    }
  }
  return -1;
}

TEST(XidLedgerTest, NvmlOnlyXidsCountInTheMetricAndHistory) {
  XidLedger ledger;
  Snapshot t1 = Node();
  ledger.Apply(t1, kT0);
  EventBaseline base = BaselineOf(t1, "b");
  Snapshot t2 = Node();
  NvmlEvent(t2, 1, 48, kT0 + 1000);
  ledger.Apply(t2, kT0 + 1000);
  EXPECT_EQ(Tally(t2, 1, 48), 1u);
  EXPECT_EQ(XidMetric(t2, 1, "48"), 1);
  auto events = DeriveEvents(base, t2, "b", "", kT0 + 1000);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "xid");
  EXPECT_EQ(events[0].gpu_index, 1);
  EXPECT_EQ(events[0].serial, "S1");
  EXPECT_NE(events[0].detail.find("Xid 48 (1 new)"), std::string::npos) << events[0].detail;
}

TEST(XidLedgerTest, OneXidSeenByBothSourcesCountsOnce) {
  XidLedger ledger;
  // Same tick: the kernel line and the NVML event of one Xid 79.
  Snapshot t1 = Node();
  KernelLines(t1, 79, 1, kT0);
  NvmlEvent(t1, 0, 79, kT0 + 800);
  ledger.Apply(t1, kT0 + 1000);
  EXPECT_EQ(Tally(t1, 0, 79), 1u);
  EXPECT_EQ(XidMetric(t1, 0, "79"), 1);
  EventBaseline base = BaselineOf(t1, "b");
  // The NVML event first, its kernel line a tick later: still one, and no second history event.
  Snapshot t2 = Node();
  KernelLines(t2, 79, 1, kT0);
  NvmlEvent(t2, 0, 79, kT0 + 60'000);
  ledger.Apply(t2, kT0 + 60'000);
  EXPECT_EQ(Tally(t2, 0, 79), 2u);
  auto e2 = DeriveEvents(base, t2, "b", "", kT0 + 60'000);
  ASSERT_EQ(e2.size(), 1u);
  base = BaselineOf(t2, "b");
  Snapshot t3 = Node();
  KernelLines(t3, 79, 2, kT0 + 60'500);
  ledger.Apply(t3, kT0 + 61'000);
  EXPECT_EQ(Tally(t3, 0, 79), 2u);
  EXPECT_TRUE(DeriveEvents(base, t3, "b", "", kT0 + 61'000).empty());
  // Far apart in time: two occurrences.
  Snapshot t4 = Node();
  KernelLines(t4, 79, 3, kT0 + 300'000);
  ledger.Apply(t4, kT0 + 300'000);
  EXPECT_EQ(Tally(t4, 0, 79), 3u);
  EXPECT_EQ(XidMetric(t4, 0, "79"), 3);
}

TEST(XidLedgerTest, DcgmGaugeHoldsTheLastCode) {
  XidLedger ledger;
  Snapshot t1 = Node();
  KernelLines(t1, 94, 1, kT0);
  NvmlEvent(t1, 0, 31, kT0 + 5000);  // later, and a lower code: the last one wins
  ledger.Apply(t1, kT0 + 5000);
  TickResult tick;
  tick.report.snapshot = t1;
  tick.points = FlattenSnapshot(t1);
  ExporterOptions o;
  o.dcgm_compat = true;
  o.hostname = "node";
  std::string text = RenderMetrics(tick, o);
  size_t at = text.find("DCGM_FI_DEV_XID_ERRORS{gpu=\"0\"");
  ASSERT_NE(at, std::string::npos) << text;
  std::string line = text.substr(at, text.find('\n', at) - at);
  EXPECT_NE(line.find("} 31"), std::string::npos) << line;
}

}  // namespace
}  // namespace gpudoctor
