// Issue 8 item 23: the sockets and suspicious probes of one check share one pair of socket-table
// dumps and one /proc walk on each side of the window.
#include "probes/shared_samples.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>
#include <thread>

#include "probes/probe.h"
#include "probes/probe_entry_points.h"
#include "test_util.h"

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
  // The walk after the window passes over the kernel threads the walk before found (neither
  // probe has a use for them): none of them is listed again, and where there were any (not in a
  // container's own pid namespace) at least kthreadd, which never exits, was skipped.
  std::set<int> kernel_before;
  for (const auto& p : ctx.shared->ProcessesBefore().processes) {
    if (p.kernel_thread) kernel_before.insert(p.pid);
  }
  const ProcessScan& after = ctx.shared->ProcessesAfter(SteadyClock::now());
  for (const auto& p : after.processes) EXPECT_EQ(kernel_before.count(p.pid), 0u) << p.pid;
  EXPECT_EQ(after.kernel_threads_skipped > 0, !kernel_before.empty());
  EXPECT_LE(after.kernel_threads_skipped, static_cast<int>(kernel_before.size()));
}

// The end-of-window table from lookups (no connection opened meanwhile) lists what a dump lists:
// the same sockets, listeners first. Other processes on this host may open connections at any
// time (then a full dump is taken, correctly): tried until one window stays quiet.
TEST(SharedSamplesTest, AQuietWindowsEndTableComesFromLookupsAndMatchesADump) {
  bool quiet = false;
  for (int attempt = 0; attempt < 40 && !quiet; ++attempt) {
    SharedSamples shared(RootFs(), SteadyClock::now() + std::chrono::seconds(10));
    const auto& before = shared.TcpBefore();
    if (!before.sockets.ok()) GTEST_SKIP() << "no sock_diag: " << before.sockets.status().message();
    const auto& after = shared.TcpAfter(SteadyClock::now() + std::chrono::milliseconds(20));
    ASSERT_TRUE(after.sockets.ok()) << after.sockets.status().message();
    auto dump = DumpTcpSockets();
    ASSERT_TRUE(dump.ok());
    EXPECT_EQ(shared.tcp_dumps(), 2);  // samples: the start's dump and the end's table
    if (!shared.tcp_after_from_lookups()) continue;
    // Sockets with an inode (TIME_WAIT and SYN_RECV entries have none) as a set; the dump taken
    // after may have more only if a connection opened after the lookups: retried then.
    std::set<uint64_t> looked, dumped;
    for (const auto& s : *after.sockets)
      if (s.inode != 0) looked.insert(s.inode);
    for (const auto& s : *dump)
      if (s.inode != 0) dumped.insert(s.inode);
    if (looked != dumped) continue;
    quiet = true;
    bool seen_other = false;
    for (const auto& s : *after.sockets) {
      if (s.state != 10) seen_other = true;
      EXPECT_FALSE(seen_other && s.state == 10) << "listeners come first: " << s.local;
    }
  }
  EXPECT_TRUE(quiet) << "no quiet window in 40 tries";
}

// A connection opened inside the window changes Tcp ActiveOpens: the end's table is a full
// dump, and the new connection is in it.
TEST(SharedSamplesTest, AConnectionOpenedInTheWindowMeansAFullDump) {
  SharedSamples shared(RootFs(), SteadyClock::now() + std::chrono::seconds(10));
  const auto& before = shared.TcpBefore();
  if (!before.sockets.ok()) GTEST_SKIP() << "no sock_diag: " << before.sockets.status().message();
  uint16_t port = 0;
  int listener = testing::BindLoopback(4, &port);
  ASSERT_GE(listener, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  const auto& after = shared.TcpAfter(SteadyClock::now());
  ASSERT_TRUE(after.sockets.ok());
  EXPECT_FALSE(shared.tcp_after_from_lookups());
  struct stat st {};
  fstat(client, &st);
  bool found = false;
  for (const auto& s : *after.sockets) found = found || s.inode == st.st_ino;
  EXPECT_TRUE(found);
  close(client);
  close(listener);
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
