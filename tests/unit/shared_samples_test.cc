// Issue 8 item 23: the sockets and suspicious probes of one check share one pair of socket-table
// dumps and one /proc walk on each side of the window.
#include "probes/shared_samples.h"

#include <gtest/gtest.h>

#include <thread>

#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {
namespace {

TEST(SharedSamplesTest, BothProbesShareOneDumpPairAndOneWalkPerSide) {
  auto settings = std::make_shared<Settings>();
  settings->sample_ms = 100;
  TimePoint deadline = SteadyClock::now() + std::chrono::seconds(10);
  ProbeContext ctx{settings, deadline};
  ctx.window_start = SteadyClock::now();
  ctx.shared = std::make_shared<SharedSamples>(settings->fs, deadline);
  ProbeOutput sockets, suspicious;
  std::thread a([&] { sockets = RunSocketsProbe(ctx); });
  std::thread b([&] { suspicious = RunSuspiciousProbe(ctx); });
  a.join();
  b.join();
  if (sockets.state == ProbeState::kSkipped) GTEST_SKIP() << "no sock_diag: " << sockets.reason;
  EXPECT_EQ(sockets.state, ProbeState::kOk) << sockets.reason;
  EXPECT_EQ(suspicious.state, ProbeState::kOk) << suspicious.reason;
  EXPECT_EQ(ctx.shared->tcp_dumps(), 2);   // not 4
  EXPECT_EQ(ctx.shared->proc_walks(), 2);  // not 3
  Snapshot s;
  sockets.apply(s);
  suspicious.apply(s);
  ASSERT_TRUE(s.network.sockets);
  EXPECT_GT(s.network.sockets->processes_scanned, 0);
  ASSERT_TRUE(s.network.process_signs);
}

TEST(SharedSamplesTest, TheAfterSampleWaitsForTheWindowEnd) {
  SharedSamples shared(RootFs(), SteadyClock::now() + std::chrono::seconds(10));
  TimePoint start = SteadyClock::now();
  const auto& before = shared.TcpBefore();
  const auto& after = shared.TcpAfter(start + std::chrono::milliseconds(120));
  EXPECT_GE(after.at - start, std::chrono::milliseconds(120));
  EXPECT_GE(after.at, before.at);
  shared.TcpAfter(start);  // a second caller gets the same sample, no new dump
  EXPECT_EQ(shared.tcp_dumps(), 2);
}

}  // namespace
}  // namespace gpudoctor
