// The deadline runner's worker pool: work starts at once, workers are reused, and a worker stuck
// in abandoned work never delays later work.
#include "core/deadline.h"

#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "core/worker_pool.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

TimePoint In(int ms) { return SteadyClock::now() + std::chrono::milliseconds(ms); }

// Waits until `n` workers are idle (a finished worker parks itself just after setting its result).
bool WaitIdle(int n) {
  return testing::WaitUntil([n] { return IdleWorkerCount() >= n; });
}

TEST(DeadlineTest, SequentialWorkReusesOneWorker) {
  ASSERT_EQ(RunWithDeadline([] { return 1; }, In(5000)), 1);
  ASSERT_TRUE(WaitIdle(1));
  int started = WorkerThreadsStarted();
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(RunWithDeadline([i] { return i; }, In(5000)), i);
    ASSERT_TRUE(WaitIdle(1));
  }
  EXPECT_EQ(WorkerThreadsStarted(), started);  // no new thread for work done one at a time
}

// After a burst, work done one at a time goes to the most recently idle worker every time, so
// the others stay idle and leave after kWorkerIdleTimeout (a shared queue kept all alive).
TEST(DeadlineTest, WorkGoesToTheMostRecentlyIdleWorker) {
  std::vector<std::shared_ptr<PendingResult<int>>> burst;
  for (int i = 0; i < 4; ++i) {
    burst.push_back(StartDetached([i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));  // four at once
      return i;
    }));
  }
  for (auto& p : burst) ASSERT_TRUE(p != nullptr && p->WaitUntil(In(5000)));
  ASSERT_TRUE(WaitIdle(4));
  std::thread::id first;
  for (int i = 0; i < 10; ++i) {
    auto id = RunWithDeadline([] { return std::this_thread::get_id(); }, In(5000));
    ASSERT_TRUE(id.has_value());
    if (i == 0) first = *id;
    EXPECT_EQ(*id, first) << i;
    ASSERT_TRUE(WaitIdle(4));
  }
}

TEST(DeadlineTest, StuckWorkDoesNotDelayLaterWork) {
  auto release = std::make_shared<std::atomic<bool>>(false);
  int abandoned = AbandonedWorkerCount();
  auto stuck = RunWithDeadline(
      [release] {
        while (!release->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return 0;
      },
      In(20));
  EXPECT_FALSE(stuck);
  EXPECT_EQ(AbandonedWorkerCount(), abandoned + 1);
  // More work at once than there are idle workers, while the stuck one still runs: each job
  // waits until all have started, which only happens when each runs on a worker of its own.
  std::vector<std::shared_ptr<PendingResult<int>>> pending;
  auto running = std::make_shared<std::atomic<int>>(0);
  for (int i = 0; i < 8; ++i) {
    pending.push_back(StartDetached([running, i] {
      running->fetch_add(1);
      TimePoint give_up = In(3000);
      while (running->load() < 8 && SteadyClock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      return running->load() >= 8 ? i : -1;
    }));
    ASSERT_NE(pending.back(), nullptr);
  }
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(pending[i]->WaitUntil(In(5000))) << i;
    EXPECT_EQ(pending[i]->Take(), i);
  }
  release->store(true);
}

TEST(DeadlineTest, MoveOnlyWork) {
  auto p = std::make_unique<int>(7);
  EXPECT_EQ(RunWithDeadline([p = std::move(p)] { return *p; }, In(5000)), 7);
}

// Which worker runs a job: 0 on a thread no job has tagged yet.
thread_local int t_worker_tag = 0;

TEST(DeadlineTest, RenewedPoolRunsLaterWorkOnNewWorkersOnly) {
  // An idle worker, tagged.
  ASSERT_EQ(RunWithDeadline([] { return t_worker_tag = 1; }, In(5000)), 1);
  ASSERT_TRUE(WaitIdle(1));
  // A busy worker, tagged, still running when the pool is renewed.
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto busy = StartDetached([release] {
    t_worker_tag = 2;
    TimePoint give_up = In(5000);
    while (!release->load() && SteadyClock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return 2;
  });
  ASSERT_NE(busy, nullptr);
  RenewWorkerPool();
  EXPECT_EQ(IdleWorkerCount(), 0);
  release->store(true);
  ASSERT_TRUE(busy->WaitUntil(In(5000)));
  // Neither the idle nor the busy one takes later work, one job at a time or several at once.
  int started = WorkerThreadsStarted();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(RunWithDeadline([] { return t_worker_tag; }, In(5000)), 0) << i;
  }
  EXPECT_GE(WorkerThreadsStarted(), started + 1);
  // The new pool's workers are reused as before.
  ASSERT_TRUE(WaitIdle(1));
  started = WorkerThreadsStarted();
  EXPECT_EQ(RunWithDeadline([] { return 3; }, In(5000)), 3);
  EXPECT_EQ(WorkerThreadsStarted(), started);
}

}  // namespace
}  // namespace gpudoctor
