#include "net/recent_tcp_dump.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace gpudoctor {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;

// Works with or without sock_diag: a failed dump is a table too, shared the same way.
TEST(RecentTcpDumpTest, HandsOutTheHeldTableWhileItIsYoungEnough) {
  const uint64_t taken = RecentTcpDumpsTaken();
  std::shared_ptr<const TcpTable> first = RecentTcpDump(hours(1), std::nullopt);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(RecentTcpDumpsTaken() - taken, 1u);
  EXPECT_LE(first->at, SteadyClock::now());
  // Held and young: the same table, no second dump.
  EXPECT_EQ(RecentTcpDump(hours(1), std::nullopt), first);
  EXPECT_EQ(RecentTcpDumpsTaken() - taken, 1u);
  // Held but older than the caller accepts: a new one.
  std::this_thread::sleep_for(milliseconds(5));
  std::shared_ptr<const TcpTable> fresh = RecentTcpDump(milliseconds(1), std::nullopt);
  EXPECT_NE(fresh, first);
  EXPECT_GT(fresh->at, first->at);
  EXPECT_EQ(RecentTcpDumpsTaken() - taken, 2u);
}

TEST(RecentTcpDumpTest, NeverTheTableOfTheWindowsStart) {
  std::shared_ptr<const TcpTable> start = RecentTcpDump(hours(1), std::nullopt);
  // The window began at `start`: its end must be another dump, however young `start` is.
  std::shared_ptr<const TcpTable> end = RecentTcpDump(hours(1), std::nullopt, start->at);
  EXPECT_NE(end, start);
  EXPECT_GT(end->at, start->at);
  // A table dumped after the given time is handed out.
  EXPECT_EQ(RecentTcpDump(hours(1), std::nullopt, start->at), end);
}

TEST(RecentTcpDumpTest, KeepsNothingItselfOnceCallersLetGo) {
  TimePoint let_go;
  {
    std::shared_ptr<const TcpTable> held = RecentTcpDump(hours(1), std::nullopt);
    let_go = SteadyClock::now();
  }
  const uint64_t taken = RecentTcpDumpsTaken();
  std::shared_ptr<const TcpTable> next = RecentTcpDump(hours(1), std::nullopt);
  EXPECT_EQ(RecentTcpDumpsTaken() - taken, 1u);
  EXPECT_GE(next->at, let_go);
}

}  // namespace
}  // namespace gpudoctor
