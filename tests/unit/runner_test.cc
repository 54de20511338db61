#include "probes/runner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "test_util.h"

namespace gpudoctor {
namespace {

std::atomic<bool> fifo_probe_returned{false};

ProbeOutput ReadFifoProbe(const ProbeContext& ctx) {
  // Blocks in open(2): the FIFO has no writer.
  auto r = ctx.fs().ReadProc("blocked");
  fifo_probe_returned = true;
  return ProbeOk([](Snapshot& s) { s.hostname = "must-not-be-applied"; });
}

ProbeOutput QuickProbe(const ProbeContext& ctx) {
  return ProbeOk([](Snapshot& s) { s.host.uptime_s = 42.0; });
}

ProbeOutput SkippingProbe(const ProbeContext&) { return ProbeSkipped("nothing here"); }

TEST(RunnerTest, BlockedProbeTimesOutOthersComplete) {
  testing::TempDir dir;
  dir.MakeFifo("proc/blocked");
  auto settings = std::make_shared<Settings>();
  settings->fs = RootFs(dir.path() + "/proc", dir.path() + "/sys", dir.path());
  ProbeSpec blocked{"blocked", Layer::kSoftware, true, Cadence::kFast, ReadFifoProbe, "fifo"};
  ProbeSpec quick{"quick", Layer::kResources, true, Cadence::kFast, QuickProbe, "quick"};
  ProbeSpec skip{"skip", Layer::kNetwork, true, Cadence::kFast, SkippingProbe, "skip"};

  int abandoned_before = AbandonedWorkerCount();
  auto start = SteadyClock::now();
  Snapshot snap =
      RunProbes({&blocked, &quick, &skip}, settings, start + std::chrono::milliseconds(300));
  double waited = std::chrono::duration<double>(SteadyClock::now() - start).count();

  EXPECT_LT(waited, 2.0);
  ASSERT_EQ(snap.probes.size(), 3u);
  EXPECT_EQ(snap.probes[0].state, ProbeState::kTimeout);
  EXPECT_EQ(snap.probes[1].state, ProbeState::kOk);
  EXPECT_EQ(snap.probes[2].state, ProbeState::kSkipped);
  EXPECT_EQ(snap.probes[2].reason, "nothing here");
  EXPECT_EQ(snap.host.uptime_s, 42.0);
  EXPECT_NE(snap.hostname, "must-not-be-applied");
  EXPECT_EQ(AbandonedWorkerCount(), abandoned_before + 1);
  EXPECT_FALSE(fifo_probe_returned);
  // Unblock the abandoned worker so the test process leaves no thread stuck behind: opening the
  // FIFO for writing (non-blocking: it succeeds once the reader waits in open) releases the
  // reader's open, and closing it gives the reader end-of-file.
  std::string fifo = dir.path() + "/proc/blocked";
  auto give_up = SteadyClock::now() + std::chrono::seconds(5);
  while (!fifo_probe_returned && SteadyClock::now() < give_up) {
    int fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(fifo_probe_returned) << "the abandoned worker is still blocked in open()";
}

TEST(DeadlineTest, ReturnsValueOrNulloptAtDeadline) {
  auto fast = RunWithDeadline([] { return 7; }, SteadyClock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(*fast, 7);
  auto slow = RunWithDeadline(
      [] {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        return 1;
      },
      SteadyClock::now() + std::chrono::milliseconds(50));
  EXPECT_FALSE(slow.has_value());
}

}  // namespace
}  // namespace gpudoctor
