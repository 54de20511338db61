// Issue 8 item 20 and item 2: what a hung GPU must not cost — the other GPUs' Xid events, its
// own readings taken before the hang — and the hang timeout fitting a short check deadline.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "core/worker_pool.h"
#include "nvml/sampler.h"
#include "nvml/session.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"
#include "rules/engine.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using std::chrono::milliseconds;

// A check's NVML options on the fake NVML, with the scenario (a fixture name) set for it.
NvmlSampleOptions CheckOptions(const char* scenario, milliseconds window, milliseconds timeout) {
  setenv("FAKE_NVML_SCENARIO", testing::FixturePath(scenario).c_str(), 1);
  NvmlSampleOptions o;
  o.library_path = testing::FakeNvmlLib();
  o.window = window;
  o.timeout = timeout;
  o.deadline = SteadyClock::now() + std::chrono::seconds(10);
  return o;
}

TEST(NvmlHangTest, HungGpuKeepsItsEarlierReadingsAndOthersXidEvents) {
  GpuLayerFacts f =
      SampleNvml(CheckOptions("nvml/hang_gpu2_xid.scenario", milliseconds(50), milliseconds(400)));
  ASSERT_GT(f.gpus.size(), 5u);
  const GpuFacts& g2 = f.gpus[2];
  EXPECT_TRUE(g2.hung);
  // Read before nvmlDeviceGetTemperature hung: identity, limits, utilisation, memory.
  EXPECT_FALSE(g2.uuid.empty());
  EXPECT_TRUE(g2.util_gpu_pct.has_value());
  EXPECT_TRUE(g2.memory_total_bytes.has_value());
  EXPECT_TRUE(g2.max_sm_clock_mhz.has_value());
  EXPECT_FALSE(g2.temp_c.has_value());
  // GPU 5's Xid event is not discarded because GPU 2 hung.
  ASSERT_EQ(f.nvml_xid_events.size(), 1u);
  EXPECT_EQ(f.nvml_xid_events[0].xid, 48u);
  EXPECT_EQ(f.nvml_xid_events[0].gpu_index, 5);
}

// Samples `runs` times on a fresh worker pool (no idle worker of an earlier run to reuse: every
// worker is a new thread) and returns the fewest workers a sample started: a lane moves its queue
// to fresh workers when a GPU's half runs 25 ms, which a loaded machine can cause by holding the
// worker off the CPU. Every GPU of every sample must have finished both halves, not hung, with a
// window in [min_window_s, max_window_s).
int FewestWorkers(const char* scenario, milliseconds window, milliseconds timeout, int runs,
                  double min_window_s, double max_window_s) {
  int fewest = 1 << 20;
  for (int run = 0; run < runs; ++run) {
    NvmlSampleOptions o = CheckOptions(scenario, window, timeout);
    RenewWorkerPool();
    int before = WorkerThreadsStarted();
    GpuLayerFacts f = SampleNvml(o);
    fewest = std::min(fewest, WorkerThreadsStarted() - before);
    EXPECT_EQ(f.gpus.size(), 8u);
    for (const GpuFacts& g : f.gpus) {
      EXPECT_FALSE(g.hung || g.unfinished) << g.index;
      EXPECT_FALSE(g.vbios.empty()) << g.index << ": no second half";
      EXPECT_GE(g.window_s, min_window_s) << g.index;
      EXPECT_LT(g.window_s, max_window_s) << g.index;
    }
    EXPECT_TRUE(f.hangs.empty());
  }
  return fewest;
}

// A check's GPUs share workers (sampler.cc GpuPhase): 8 healthy GPUs take a handful of workers,
// not one each, and every GPU still gets its own window between two reads.
TEST(NvmlCheckLaneTest, EightGpusShareAFewWorkers) {
  // Init, the first lane, the tail; the second lane reuses an idle one. A worker per GPU was 8
  // more.
  EXPECT_LE(FewestWorkers("nvml/h100_healthy.scenario", milliseconds(150), milliseconds(2000), 3,
                          0.149, 2.0),
            4);
}

// A GPU hung in its second read (the VBIOS, read after the window) holds none of the GPUs queued
// behind it on the second lane: they are moved to fresh workers after the stall.
TEST(NvmlCheckLaneTest, GpuHungInItsSecondReadHoldsNoneOfTheOthers) {
  NvmlSampleOptions o =
      CheckOptions("nvml/hang_gpu3_second_read.scenario", milliseconds(50), milliseconds(600));
  auto start = SteadyClock::now();
  GpuLayerFacts f = SampleNvml(o);
  double took_s = std::chrono::duration<double>(SteadyClock::now() - start).count();
  ASSERT_EQ(f.gpus.size(), 8u);
  for (const GpuFacts& g : f.gpus) {
    if (g.index == 3) {
      EXPECT_TRUE(g.hung);
      EXPECT_TRUE(g.util_gpu_pct.has_value()) << "its first read is kept";
      continue;
    }
    EXPECT_FALSE(g.hung || g.unfinished) << g.index;
    EXPECT_FALSE(g.vbios.empty()) << g.index;
    EXPECT_LT(g.window_s, 0.55) << g.index << ": waited behind GPU 3 (its timeout is 0.6 s)";
  }
  ASSERT_EQ(f.hangs.size(), 1u);
  EXPECT_EQ(f.hangs[0].gpu_index, 3);
  EXPECT_EQ(f.hangs[0].call, "nvmlDeviceGetVbiosVersion");
  EXPECT_LT(took_s, 3.0);  // the window + the NVML timeout, not a timeout per GPU
}

// A GPU whose first half outlasts the window (slow, not hung) goes on to its own second read on
// its worker; the GPUs queued behind it are moved after the stall and keep their own window.
TEST(NvmlCheckLaneTest, SlowFirstReadGoesOnToItsOwnSecondRead) {
  // Init, the first lane, two fresh workers after GPU 0's stall, the tail: not one per GPU.
  EXPECT_LE(FewestWorkers("nvml/slow_gpu0_identity.scenario", milliseconds(300), milliseconds(3000),
                          2, 0.299, 1.5),
            6);
}

Snapshot RunProbe(double deadline_s, double nvml_timeout_s) {
  auto settings = std::make_shared<Settings>();
  settings->nvml_lib = testing::FakeNvmlLib();
  settings->nvml_timeout_s = nvml_timeout_s;
  settings->sample_ms = 50;
  settings->deadline_s = deadline_s;
  ProbeContext ctx{settings, SteadyClock::now() + std::chrono::duration_cast<milliseconds>(
                                                      std::chrono::duration<double>(deadline_s))};
  ProbeOutput out = RunNvmlProbe(ctx);
  Snapshot snap;
  if (out.apply) out.apply(snap);
  snap.probes.push_back({"nvml", Layer::kHardware, out.state, out.reason, 0});
  return snap;
}

TEST(NvmlHangTest, ShortDeadlineStillNamesTheHungCallAsOneFinding) {
  setenv("FAKE_NVML_SCENARIO", testing::FixturePath("nvml/hang_gpu2.scenario").c_str(), 1);
  // --deadline 2 with the default 5 s NVML timeout: the timeout is derived to fit.
  Snapshot snap = RunProbe(2.0, 5.0);
  std::vector<Finding> findings = EvaluateRules(snap, Thresholds());
  int hangs = 0, probe_failed = 0;
  for (const auto& f : findings) {
    if (f.id == "driver.nvml_hang") {
      ++hangs;
      EXPECT_NE(f.summary.find("nvmlDeviceGetTemperature"), std::string::npos) << f.summary;
    }
    if (f.id == "gpudoctor.probe.failed" || f.id == "gpudoctor.probe.timeout") ++probe_failed;
  }
  EXPECT_GE(hangs, 1);
  EXPECT_EQ(probe_failed, 0) << "the hang is one finding, not a hang plus a probe failure";
}

// Issue 8 item 20, issue 17 §3: drivers without nvmlDeviceGetFieldValues (the minimal fake)
// still report retired pages (a check reads them where the row remapper is unsupported) and
// NVLink state (per-link calls at a session's slow cadence, within the tick budget).
TEST(NvmlFallbackTest, RetiredPagesAndNvLinksWithoutFieldValues) {
  std::string minimal = testing::FakeNvmlLib(/*minimal=*/true);
  NvmlSampleOptions o;
  o.library_path = minimal;
  o.window = milliseconds(20);
  o.deadline = SteadyClock::now() + std::chrono::seconds(10);
  setenv("FAKE_NVML_SCENARIO", testing::FixturePath("nvml/retired_pages.scenario").c_str(), 1);
  GpuLayerFacts f = SampleNvml(o);
  ASSERT_FALSE(f.gpus.empty());
  EXPECT_EQ(f.gpus[0].retired_pages_sbe, 60u);
  EXPECT_EQ(f.gpus[0].retired_pages_dbe, 10u);
  EXPECT_EQ(f.gpus[0].retired_pages_pending, true);
  EXPECT_LE(f.gpus[0].nvml_calls, 30);

  setenv("FAKE_NVML_SCENARIO", testing::FixturePath("nvml/nvlink_down.scenario").c_str(), 1);
  NvmlSession session(o);
  GpuLayerFacts t = session.Sample(SteadyClock::now() + std::chrono::seconds(10));  // identity
  bool found = false;
  for (int tick = 0; tick < 200 && !found; ++tick) {
    t = session.Sample(SteadyClock::now() + std::chrono::seconds(10));
    ASSERT_GT(t.gpus.size(), 7u);
    int down = 0;
    for (const auto& l : t.gpus[7].nvlinks) down += l.active == false ? 1 : 0;
    found = t.gpus[7].nvlink_count == 18 && down > 0;
    EXPECT_LE(t.gpus[7].nvml_calls, 15) << "tick " << tick;
  }
  EXPECT_TRUE(found) << "GPU 7's down link never seen through the per-link calls";
  // Each GPU has its own slow-cadence work and call memo: GPU 7's link is nobody else's (every
  // GPU once shared one, so the links one GPU read were reported for all).
  for (const auto& g : t.gpus) {
    if (g.index == 7) continue;
    for (const auto& l : g.nvlinks) {
      EXPECT_NE(l.active, false) << "GPU " << g.index << " link " << l.link;
    }
  }
  std::vector<Finding> findings = EvaluateRules(Snapshot{.gpu = t}, Thresholds());
  bool nvlink_down = false;
  for (const auto& x : findings) {
    if (x.id != "gpu.nvlink.down") continue;
    ASSERT_TRUE(x.gpu);
    EXPECT_EQ(x.gpu->index, 7) << x.summary;
    nvlink_down |= x.gpu->index == 7;
  }
  EXPECT_TRUE(nvlink_down);
}

}  // namespace
}  // namespace gpudoctor
