// JobLane (core/job_lane.h): jobs in order on one worker, a stalled job's followers moved to a
// fresh worker, running jobs given up at their timeout, queued ones withdrawn at the deadline.
#include "core/job_lane.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "test_util.h"

namespace gpudoctor {
namespace {

using std::chrono::milliseconds;

// A gate a job blocks on until the test opens it. Shared by pointer: an abandoned job may
// outlive the test body.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  std::atomic<bool> passed{false};
  void Wait() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return open; });
    passed = true;
  }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu);
      open = true;
    }
    cv.notify_all();
  }
};

TEST(JobLaneTest, JobsRunInOrderOnOneWorker) {
  auto order = std::make_shared<std::vector<int>>();
  auto threads = std::make_shared<std::vector<std::thread::id>>();
  auto mu = std::make_shared<std::mutex>();
  std::vector<std::function<void()>> jobs;
  for (int i = 0; i < 6; ++i) {
    jobs.push_back([=] {
      std::lock_guard<std::mutex> lock(*mu);
      order->push_back(i);
      threads->push_back(std::this_thread::get_id());
    });
  }
  JobLane lane(std::move(jobs));
  lane.Run(SteadyClock::now() + milliseconds(5000), milliseconds(1000));
  std::lock_guard<std::mutex> lock(*mu);
  EXPECT_EQ(*order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(lane.workers(), 1);
  for (auto id : *threads) {
    EXPECT_EQ(id, threads->front());  // one hand-off for the batch, not one per job
    EXPECT_NE(id, std::this_thread::get_id());
  }
  for (size_t i = 0; i < lane.size(); ++i) {
    EXPECT_EQ(lane.state(i), JobLane::JobState::kDone);
    EXPECT_NE(lane.started_at(i), TimePoint{});
  }
}

TEST(JobLaneTest, StalledJobMovesTheQueuedOnesToAnotherWorkerAndIsGivenUpAtItsTimeout) {
  auto gate = std::make_shared<Gate>();
  auto ran = std::make_shared<std::atomic<int>>(0);
  std::vector<std::function<void()>> jobs;
  jobs.push_back([ran] { ++*ran; });
  jobs.push_back([gate] { gate->Wait(); });  // hangs until opened
  for (int i = 0; i < 3; ++i) jobs.push_back([ran] { ++*ran; });
  JobLane lane(std::move(jobs));
  TimePoint t0 = SteadyClock::now();
  lane.Run(t0 + milliseconds(5000), milliseconds(50), milliseconds(300));
  auto took = SteadyClock::now() - t0;
  EXPECT_GE(took, milliseconds(300));   // the hung job was waited for until its timeout ...
  EXPECT_LT(took, milliseconds(3000));  // ... not until the deadline
  EXPECT_EQ(ran->load(), 4);            // the jobs behind it ran meanwhile
  EXPECT_GE(lane.workers(), 2);         // the queued jobs moved (split over two workers)
  EXPECT_EQ(lane.state(1), JobLane::JobState::kRunning);
  for (size_t i : {0, 2, 3, 4}) EXPECT_EQ(lane.state(i), JobLane::JobState::kDone) << i;
  gate->Open();
  ASSERT_TRUE(testing::WaitUntil([&] { return lane.state(1) == JobLane::JobState::kDone; }));
  EXPECT_EQ(ran->load(), 4);  // the stalled worker did not run the moved jobs again
}

TEST(JobLaneTest, DeadlineWithdrawsQueuedJobsWhichNeverRun) {
  auto gate = std::make_shared<Gate>();
  auto ran = std::make_shared<std::atomic<int>>(0);
  std::vector<std::function<void()>> jobs;
  jobs.push_back([gate] { gate->Wait(); });
  jobs.push_back([ran] { ++*ran; });
  jobs.push_back([ran] { ++*ran; });
  JobLane lane(std::move(jobs));
  TimePoint t0 = SteadyClock::now();
  lane.Run(t0 + milliseconds(150), milliseconds(10000));  // no stall move before the deadline
  EXPECT_LT(SteadyClock::now() - t0, milliseconds(2000));
  EXPECT_EQ(lane.state(0), JobLane::JobState::kRunning);  // left running
  EXPECT_EQ(lane.state(1), JobLane::JobState::kWithdrawn);
  EXPECT_EQ(lane.state(2), JobLane::JobState::kWithdrawn);
  gate->Open();
  ASSERT_TRUE(testing::WaitUntil([&] { return gate->passed.load(); }));
  ASSERT_TRUE(testing::WaitUntil([&] { return lane.state(0) == JobLane::JobState::kDone; }));
  EXPECT_EQ(ran->load(), 0);
}

// Jobs each quicker than the stall but too many for one worker before the deadline: the queue
// spreads over more workers and every job finishes in time.
TEST(JobLaneTest, LongListOfQuickJobsSpreadsOutBeforeTheDeadline) {
  auto ran = std::make_shared<std::atomic<int>>(0);
  std::vector<std::function<void()>> jobs;
  for (int i = 0; i < 8; ++i) {
    jobs.push_back([ran] {
      std::this_thread::sleep_for(milliseconds(40));  // like NVML's PCIe throughput call
      ++*ran;
    });
  }
  JobLane lane(std::move(jobs));
  TimePoint t0 = SteadyClock::now();
  lane.Run(t0 + milliseconds(3000), milliseconds(50));
  EXPECT_EQ(ran->load(), 8);
  EXPECT_GT(lane.workers(), 2);
  EXPECT_LT(SteadyClock::now() - t0, milliseconds(300));  // 8 x 40 ms on one worker: 320
}

// Several workers from the start: contiguous runs of jobs, each in order.
TEST(JobLaneTest, StartSplitsTheJobsOverTheGivenWorkers) {
  auto threads = std::make_shared<std::vector<std::thread::id>>(4);
  std::vector<std::function<void()>> jobs;
  for (int i = 0; i < 4; ++i) {
    jobs.push_back([threads, i] {
      (*threads)[i] = std::this_thread::get_id();
      std::this_thread::sleep_for(milliseconds(20));  // both workers busy at once: two threads
    });
  }
  JobLane lane(std::move(jobs));
  lane.Start(2);
  lane.Run(SteadyClock::now() + milliseconds(3000), milliseconds(1000));
  EXPECT_EQ(lane.workers(), 2);
  EXPECT_EQ((*threads)[0], (*threads)[1]);
  EXPECT_EQ((*threads)[2], (*threads)[3]);
  EXPECT_NE((*threads)[1], (*threads)[2]);
}

TEST(JobLaneTest, EmptyBatchReturnsAtOnce) {
  JobLane lane({});
  lane.Run(SteadyClock::now() + milliseconds(5000), milliseconds(10));
  EXPECT_EQ(lane.workers(), 0);
}

}  // namespace
}  // namespace gpudoctor
