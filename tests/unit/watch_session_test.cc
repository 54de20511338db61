// The long-lived NVML session (watch) against the fake NVML: per-boot constants read once,
// the per-tick call budget, counters diffed across ticks, a hung GPU that never stalls the
// others, and init retried after failure. Also the tailing kernel-log reader.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "kmsg/live_sources.h"
#include "nvml/session.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using std::chrono::milliseconds;

NvmlSampleOptions Options(milliseconds timeout = milliseconds(2000)) {
  NvmlSampleOptions o;
  o.library_path = testing::FakeNvmlLib();
  o.timeout = timeout;
  return o;
}

TimePoint In(int ms) { return SteadyClock::now() + milliseconds(ms); }

TEST(NvmlSessionTest, PerTickCallsStayWithinBudgetAfterTheFirstTick) {
  setenv("FAKE_NVML_SCENARIO", testing::FixturePath("nvml/h100_busy.scenario").c_str(), 1);
  NvmlSession session(Options());
  GpuLayerFacts t1 = session.Sample(In(5000));
  ASSERT_EQ(t1.nvml.state, NvmlState::kOk);
  ASSERT_FALSE(t1.gpus.empty());
  GpuLayerFacts t2 = session.Sample(In(5000));
  GpuLayerFacts t3 = session.Sample(In(5000));
  for (size_t i = 0; i < t3.gpus.size(); ++i) {
    const GpuFacts& g = t3.gpus[i];
    int per_tick = g.nvml_calls;  // calls of this tick's worker only
    EXPECT_LE(per_tick, 15) << "GPU " << i;
    EXPECT_LT(per_tick, t1.gpus[i].nvml_calls) << "GPU " << i << ": constants read again?";
    // Constants carried from the first tick.
    EXPECT_EQ(g.uuid, t1.gpus[i].uuid);
    EXPECT_EQ(g.serial, t1.gpus[i].serial);
    EXPECT_EQ(g.max_sm_clock_mhz, t1.gpus[i].max_sm_clock_mhz);
    EXPECT_EQ(g.temp_slowdown_c, t1.gpus[i].temp_slowdown_c);
    EXPECT_TRUE(g.window_s.has_value());
  }
  EXPECT_EQ(session.init_attempts(), 1);
  EXPECT_FALSE(t1.gpus[0].window_s.has_value());  // no previous read yet
}

TEST(NvmlSessionTest, CountersAreDiffedAgainstThePreviousTick) {
  setenv("FAKE_NVML_SCENARIO", testing::FixturePath("nvml/ecc_sbe_rate.scenario").c_str(), 1);
  NvmlSession session(Options());
  session.Sample(In(5000));
  GpuLayerFacts t2 = session.Sample(In(5000));
  GpuLayerFacts t3 = session.Sample(In(5000));
  const GpuFacts& g = t3.gpus.at(4);
  ASSERT_TRUE(g.first.ecc_sbe_volatile && g.second.ecc_sbe_volatile);
  EXPECT_EQ(*g.second.ecc_sbe_volatile - *g.first.ecc_sbe_volatile, 50u);  // one read a tick
  EXPECT_EQ(t2.gpus.at(4).second.ecc_sbe_volatile, g.first.ecc_sbe_volatile);
}

TEST(NvmlSessionTest, HungGpuIsMarkedAndTheOthersKeepBeingSampled) {
  setenv("FAKE_NVML_SCENARIO", testing::FixturePath("nvml/hang_gpu2.scenario").c_str(), 1);
  NvmlSession session(Options(milliseconds(300)));
  TimePoint t0 = SteadyClock::now();
  GpuLayerFacts t1 = session.Sample(In(5000));
  GpuLayerFacts t2 = session.Sample(In(5000));
  GpuLayerFacts t3 = session.Sample(In(5000));
  // Each tick waits at most the NVML timeout (and ticks 2, 3 do not wait on GPU 2 at all).
  EXPECT_LT(SteadyClock::now() - t0, milliseconds(2000));
  for (const GpuLayerFacts* t : {&t1, &t2, &t3}) {
    ASSERT_GT(t->gpus.size(), 3u);
    EXPECT_TRUE(t->gpus[2].hung);
    EXPECT_FALSE(t->gpus[1].hung);
    EXPECT_TRUE(t->gpus[3].temp_c.has_value());
    ASSERT_FALSE(t->hangs.empty());
    EXPECT_EQ(t->hangs[0].call, "nvmlDeviceGetTemperature");
    EXPECT_EQ(t->hangs[0].gpu_index, 2);
  }
  EXPECT_FALSE(t3.gpus[2].uuid.empty());  // the hung card is still named
}

// All GPUs of a tick on one sampler thread; a GPU stuck in the driver costs one thread more on
// the tick it hangs (the GPUs behind it move on), none after (it is not asked again).
TEST(NvmlSessionTest, GpusShareOneSamplerThreadUnlessOneHangs) {
  setenv("FAKE_NVML_SCENARIO", testing::FixturePath("nvml/h100_healthy.scenario").c_str(), 1);
  // Busy GPUs' PCIe throughput calls sleep 20 ms each (as the driver's do): the GPUs are spread
  // over more threads, so the NVML phase stays short.
  setenv("FAKE_NVML_SCENARIO", testing::FixturePath("nvml/h100_busy.scenario").c_str(), 1);
  {
    NvmlSession session(Options());
    session.Sample(In(5000));
    session.Sample(In(5000));
    TimePoint t0 = SteadyClock::now();
    GpuLayerFacts t3 = session.Sample(In(5000));
    EXPECT_LT(SteadyClock::now() - t0, milliseconds(250));  // 8 GPUs x 40 ms in turn: 320
    EXPECT_GT(session.last_tick_threads(), 1);
    for (const GpuFacts& g : t3.gpus) EXPECT_TRUE(g.pcie_tx_bytes_per_s.has_value()) << g.index;
  }
  // GPU 2 starts hanging once the per-boot constants are read (a first tick gives each GPU a
  // thread of its own).
  setenv("FAKE_NVML_SCENARIO", testing::FixturePath("nvml/h100_healthy.scenario").c_str(), 1);
  NvmlSession session(Options(milliseconds(400)));
  session.Sample(In(5000));
  EXPECT_EQ(session.last_tick_threads(), 8);
  // Idle GPUs answer in well under 50 ms together: one thread once the first tick's per-boot
  // reads have decayed out of the estimate.
  for (int t = 0; t < 12 && session.last_tick_threads() != 1; ++t) session.Sample(In(5000));
  ASSERT_EQ(session.last_tick_threads(), 1);
  setenv("FAKE_NVML_SCENARIO", testing::FixturePath("nvml/hang_gpu2.scenario").c_str(), 1);
  TimePoint t0 = SteadyClock::now();
  GpuLayerFacts t3 = session.Sample(In(5000));
  auto took = SteadyClock::now() - t0;
  EXPECT_GE(session.last_tick_threads(), 2);  // the GPUs behind GPU 2 moved on
  EXPECT_GE(took, milliseconds(400));         // GPU 2 waited for until its timeout ...
  EXPECT_LT(took, milliseconds(1500));        // ... and no longer
  ASSERT_EQ(t3.gpus.size(), 8u);
  for (int i : {0, 1, 3, 4, 5, 6, 7}) {
    EXPECT_FALSE(t3.gpus[i].hung) << i;
    EXPECT_TRUE(t3.gpus[i].window_s.has_value()) << i;  // sampled in the tick GPU 2 hung
  }
  EXPECT_TRUE(t3.gpus[2].hung);
  // What GPU 2's tick read before its stuck call is kept (the facts published in place while
  // the worker is inside a call), what comes after it is not.
  EXPECT_TRUE(t3.gpus[2].util_gpu_pct.has_value());
  EXPECT_TRUE(t3.gpus[2].memory_used_bytes.has_value());
  EXPECT_FALSE(t3.gpus[2].temp_c.has_value());
  EXPECT_FALSE(t3.gpus[2].sm_clock_mhz.has_value());
  EXPECT_FALSE(t3.gpus[2].uuid.empty());
  GpuLayerFacts t4 = session.Sample(In(5000));
  EXPECT_EQ(session.last_tick_threads(), 1);
  EXPECT_TRUE(t4.gpus[2].hung);
  EXPECT_TRUE(t4.gpus[7].window_s.has_value());
}

// A tick's deadline that comes while a slow GPU holds the sampler thread: the GPUs queued behind
// it are moved on after the stall and still answer within the tick.
TEST(NvmlSessionTest, TickEndsByItsDeadlineWhileAGpuIsStuck) {
  setenv("FAKE_NVML_SCENARIO", testing::FixturePath("nvml/hang_gpu2.scenario").c_str(), 1);
  NvmlSession session(Options(milliseconds(5000)));  // the timeout is longer than the tick
  TimePoint t0 = SteadyClock::now();
  GpuLayerFacts t1 = session.Sample(In(400));
  EXPECT_LT(SteadyClock::now() - t0, milliseconds(1500));
  ASSERT_EQ(t1.gpus.size(), 8u);
  EXPECT_TRUE(t1.gpus[2].unfinished);
  EXPECT_FALSE(t1.gpus[2].hung);  // not yet past the NVML timeout
  EXPECT_TRUE(t1.gpus[5].temp_c.has_value());
}

TEST(NvmlSessionTest, FailedInitIsRetriedWithBackoff) {
  setenv("FAKE_NVML_SCENARIO", testing::FixturePath("nvml/driver_not_loaded.scenario").c_str(), 1);
  NvmlSession session(Options());
  GpuLayerFacts t1 = session.Sample(In(5000));
  EXPECT_EQ(t1.nvml.state, NvmlState::kInitFailed);
  session.Sample(In(5000));  // within the 1 s backoff: no new attempt
  EXPECT_EQ(session.init_attempts(), 1);
  setenv("FAKE_NVML_SCENARIO", testing::FixturePath("nvml/h100_healthy.scenario").c_str(), 1);
  // Deliberate: the 1 s init backoff has to pass in wall time (the session reads the clock).
  std::this_thread::sleep_for(milliseconds(1100));
  GpuLayerFacts t3 = session.Sample(In(5000));
  EXPECT_EQ(session.init_attempts(), 2);
  EXPECT_EQ(t3.nvml.state, NvmlState::kOk);  // the driver came back: recovered by itself
  EXPECT_FALSE(t3.gpus.empty());
}

TEST(KmsgTailTest, ReadsOnlyNewLinesAndKeepsCounting) {
  testing::TempDir dir;
  std::string path = dir.path() + "/kmsg";
  dir.Write("kmsg",
            "[   10.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has "
            "fallen off the bus.\n");
  KernelLogScanOptions options;
  KmsgTail tail(path, options);
  auto first = tail.Poll({});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->events.size(), 1u);
  uint64_t bytes_after_first = first->bytes_scanned;

  auto same = tail.Poll({});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->bytes_scanned, bytes_after_first);  // nothing new was read
  EXPECT_EQ(same->events[0].count, 1u);

  std::ofstream(path, std::ios::app)
      << "[   11.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen "
         "off the bus.\n"
      << "[   12.000000] NVRM: Xid (PCI:0000:5e:00): 48, pid=99, name=train, An uncorrectable "
         "double bit error\n";
  auto later = tail.Poll({});
  ASSERT_TRUE(later.ok());
  ASSERT_EQ(later->events.size(), 2u);
  EXPECT_EQ(later->events[0].count, 2u);
  EXPECT_EQ(later->events[1].xid, 48);
}

TEST(KmsgTailTest, MissingSourceIsAnError) {
  KmsgTail tail("/nonexistent/dev/kmsg", {});
  EXPECT_FALSE(tail.Poll({}).ok());
}

// A busy GPU's PCIe throughput (each direction a 20 ms sample in the driver) is read on the first
// tick of a busy spell, then every tenth tick, the GPUs in turn (8 GPUs: at most one a tick, so
// the tick's GPUs fit on one sampler thread), on either NVML (without nvmlDeviceGetFieldValues a
// tick has room for both samples only every other tick: a GPU's turn is always such a tick, where
// the GPUs whose turns had no room once bunched up on one tick); the ticks between carry the last
// values. A GPU that was idle reads afresh on its first busy tick, not from the old spell.
TEST(NvmlSessionTest, BusyGpusReadPcieThroughputInTurnEveryTenthTick) {
  for (bool minimal : {false, true}) {
    SCOPED_TRACE(minimal ? "without FieldValues" : "with FieldValues");
    testing::TempDir dir;
    const std::string path = dir.path() + "/pcie.scenario";
    auto write = [&](int tx_kbps, bool gpu1_idle) {
      std::string text = "include=" + testing::FixturePath("nvml/h100_busy.scenario") +
                         "\ngpu.*.pcie_tx_kbps=" + std::to_string(tx_kbps) + "\n";
      if (gpu1_idle) text += "gpu.1.util_gpu=0\ngpu.1.processes=\n";
      std::ofstream(path + ".tmp") << text;
      std::rename((path + ".tmp").c_str(), path.c_str());
    };
    write(1000, false);
    setenv("FAKE_NVML_SCENARIO", path.c_str(), 1);
    NvmlSampleOptions options = Options();
    options.library_path = testing::FakeNvmlLib(minimal);
    NvmlSession session(options);
    GpuLayerFacts t = session.Sample(In(5000));
    ASSERT_EQ(t.gpus.size(), 8u);
    // The first tick reads every GPU (the busy spell's first); without the batch a GPU whose
    // first tick had no room reads on its second.
    t = session.Sample(In(5000));
    for (const GpuFacts& g : t.gpus) EXPECT_EQ(g.pcie_tx_bytes_per_s, 1000u * 1024) << g.index;
    write(2000, false);
    // Over the next rounds each GPU reads once in ten ticks (its turn), at most one GPU a tick,
    // and carries the last value between its reads.
    std::vector<std::vector<int>> read_at(8);
    std::vector<uint64_t> last(8, 1000u * 1024);
    for (int tick = 1; tick <= 30; ++tick) {
      if (tick == 11) write(3000, false);
      if (tick == 21) write(4000, false);
      t = session.Sample(In(5000));
      ASSERT_EQ(t.gpus.size(), 8u);
      int reads = 0;
      for (const GpuFacts& g : t.gpus) {
        ASSERT_TRUE(g.pcie_tx_bytes_per_s.has_value()) << g.index << " tick " << tick;
        if (*g.pcie_tx_bytes_per_s != last[g.index]) {
          read_at[g.index].push_back(tick);
          last[g.index] = *g.pcie_tx_bytes_per_s;
          ++reads;
        }
      }
      EXPECT_LE(reads, 1) << "tick " << tick << ": the GPUs take turns";
    }
    for (int i = 0; i < 8; ++i) {
      ASSERT_EQ(read_at[i].size(), 3u) << "GPU " << i << " read each new value once";
      EXPECT_EQ(read_at[i][1] - read_at[i][0], 10) << "GPU " << i;
      EXPECT_EQ(read_at[i][2] - read_at[i][1], 10) << "GPU " << i;
    }
    // GPU 1 goes idle, then busy again at 5000: its first busy tick reads, whatever its turn
    // (without the batch: on the first tick with room for both samples).
    write(4000, true);
    session.Sample(In(5000));
    session.Sample(In(5000));
    write(5000, false);
    t = session.Sample(In(5000));
    if (t.gpus[1].pcie_tx_bytes_per_s != 5000u * 1024) t = session.Sample(In(5000));
    EXPECT_EQ(t.gpus[1].pcie_tx_bytes_per_s, 5000u * 1024);
  }
}

}  // namespace
}  // namespace gpudoctor
