#include "probes/runner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/worker_pool.h"
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

// The split rate probes (runner.cc kSplitProbes): a step probe that records how it was called.
// A first step (continuous, no carry) hands on its sample time; a step given that carry reports
// its window. `fail_first`: the first step fails and leaves no carry (as a probe whose source
// is briefly unreadable), so the second step has to run whole (check semantics: read, sleep the
// window, read).
struct StepCall {
  bool continuous = false;
  bool has_previous = false;
};
std::mutex step_mu;
std::map<std::string, std::vector<StepCall>> step_calls;
std::map<std::string, double> step_window_s;
bool fail_first = false;
// A first step that is slow (sleeps this long before its sample) or hangs (until released).
std::string slow_first, hung_first;
std::chrono::milliseconds slow_first_by{0};
std::mutex hang_mu;
std::condition_variable hang_cv;
bool hang_released = false;

template <const char* kName>
ProbeOutput StepProbe(const ProbeContext& ctx) {
  {
    std::lock_guard<std::mutex> lock(step_mu);
    step_calls[kName].push_back({ctx.continuous, ctx.previous != nullptr});
  }
  auto* prev = dynamic_cast<SampleCarry<int>*>(ctx.previous.get());
  if (ctx.continuous && prev == nullptr) {
    if (fail_first) return ProbeFailed("briefly unreadable");
    if (slow_first == kName) std::this_thread::sleep_for(slow_first_by);
    if (hung_first == kName) {
      std::unique_lock<std::mutex> lock(hang_mu);
      hang_cv.wait(lock, [] { return hang_released; });
      return ProbeFailed("released");
    }
    ProbeOutput out = ProbeOk({});
    out.next = std::make_shared<SampleCarry<int>>(1, SteadyClock::now());
    return out;
  }
  TimePoint from = SteadyClock::now();
  if (prev != nullptr) {
    from = prev->at;
  } else {
    std::this_thread::sleep_for(ctx.sample_window());
  }
  double window = std::chrono::duration<double>(SteadyClock::now() - from).count();
  std::lock_guard<std::mutex> lock(step_mu);
  step_window_s[kName] = window;
  return ProbeOk({});
}

constexpr char kCpu[] = "cpu", kMemory[] = "memory", kNic[] = "nic", kIb[] = "infiniband";
const ProbeSpec kStepCpu{"cpu", Layer::kResources, true, Cadence::kFast, StepProbe<kCpu>, ""};
const ProbeSpec kStepMemory{"memory",       Layer::kResources,  true,
                            Cadence::kFast, StepProbe<kMemory>, ""};
const ProbeSpec kStepNic{"nic", Layer::kNetwork, true, Cadence::kFast, StepProbe<kNic>, ""};
const ProbeSpec kStepIb{"infiniband", Layer::kNetwork, true, Cadence::kFast, StepProbe<kIb>, ""};

// Runs the four step probes (and `more`) once on a fresh worker pool; returns the workers it
// started.
int RunSteps(std::shared_ptr<Settings> settings, Snapshot& snap,
             std::chrono::milliseconds deadline = std::chrono::seconds(3),
             std::vector<const ProbeSpec*> more = {}) {
  {
    std::lock_guard<std::mutex> lock(step_mu);
    step_calls.clear();
    step_window_s.clear();
  }
  RenewWorkerPool();
  int before = WorkerThreadsStarted();
  std::vector<const ProbeSpec*> all = {&kStepCpu, &kStepMemory, &kStepNic, &kStepIb};
  all.insert(all.end(), more.begin(), more.end());
  snap = RunProbes(all, settings, SteadyClock::now() + deadline);
  return WorkerThreadsStarted() - before;
}

// A check runs cpu, memory, nic and infiniband in two steps, as watch does, on shared workers:
// each probe's first step at the window's start, its second given the first's carry once the
// window from its own first sample has passed. They used to sleep through the window on a
// worker each (4 workers; now the lane's and the second lane's, which may reuse it).
TEST(RunnerTest, SplitRateProbesRunInTwoStepsOnSharedWorkers) {
  auto settings = std::make_shared<Settings>();
  settings->sample_ms = 120;
  fail_first = false;
  int fewest = 1 << 20;
  for (int run = 0; run < 3 && fewest > 2; ++run) {  // a loaded machine can stall a lane
    Snapshot snap;
    fewest = std::min(fewest, RunSteps(settings, snap));
    ASSERT_EQ(snap.probes.size(), 4u);
    for (const ProbeRecord& rec : snap.probes) {
      EXPECT_EQ(rec.state, ProbeState::kOk) << rec.name;
      EXPECT_LT(rec.ms, 100.0) << rec.name << ": its own time, not the window's";
    }
    std::lock_guard<std::mutex> lock(step_mu);
    for (const char* name : {kCpu, kMemory, kNic, kIb}) {
      const auto& calls = step_calls[name];
      ASSERT_EQ(calls.size(), 2u) << name;
      EXPECT_TRUE(calls[0].continuous && !calls[0].has_previous) << name;
      EXPECT_TRUE(!calls[1].continuous && calls[1].has_previous) << name;
      EXPECT_GE(step_window_s[name], 0.120) << name;
      EXPECT_LT(step_window_s[name], 1.0) << name;
    }
  }
  EXPECT_LE(fewest, 2);
}

// A first step that leaves no carry: the second step runs the probe whole, its own window.
TEST(RunnerTest, SplitProbeWithoutAFirstSampleRunsWhole) {
  auto settings = std::make_shared<Settings>();
  settings->sample_ms = 120;
  fail_first = true;
  Snapshot snap;
  RunSteps(settings, snap);
  fail_first = false;
  ASSERT_EQ(snap.probes.size(), 4u);
  std::lock_guard<std::mutex> lock(step_mu);
  for (const ProbeRecord& rec : snap.probes) EXPECT_EQ(rec.state, ProbeState::kOk) << rec.name;
  for (const char* name : {kCpu, kMemory, kNic, kIb}) {
    const auto& calls = step_calls[name];
    ASSERT_EQ(calls.size(), 2u) << name;
    EXPECT_TRUE(!calls[1].continuous && !calls[1].has_previous) << name;
    EXPECT_GE(step_window_s[name], 0.120) << name;
  }
}

// A first step that ends after the window from the start has passed still gets its whole
// window: its second step waits for it and then for the window from its own sample.
TEST(RunnerTest, SplitProbeWhoseFirstStepEndsLateGetsItsWholeWindow) {
  auto settings = std::make_shared<Settings>();
  settings->sample_ms = 100;
  slow_first = kMemory;
  slow_first_by = std::chrono::milliseconds(160);
  Snapshot snap;
  RunSteps(settings, snap);
  slow_first.clear();
  std::lock_guard<std::mutex> lock(step_mu);
  for (const ProbeRecord& rec : snap.probes) EXPECT_EQ(rec.state, ProbeState::kOk) << rec.name;
  for (const char* name : {kCpu, kMemory, kNic, kIb}) {
    ASSERT_EQ(step_calls[name].size(), 2u) << name;  // the others moved on past the slow one
    EXPECT_TRUE(step_calls[name][1].has_previous) << name;
    EXPECT_GE(step_window_s[name], 0.100) << name;
  }
}

// A first step that hangs holds up neither the other rate probes nor the quick probes' lane:
// only its own probe times out, and it is never run a second time while the first is stuck.
TEST(RunnerTest, HungFirstStepHoldsUpNoOtherProbe) {
  auto settings = std::make_shared<Settings>();
  settings->sample_ms = 100;
  hung_first = kNic;
  hang_released = false;
  const ProbeSpec pressure{"pressure", Layer::kResources, true, Cadence::kFast, QuickProbe, ""};
  Snapshot snap;
  RunSteps(settings, snap, std::chrono::milliseconds(700), {&pressure});
  {
    std::lock_guard<std::mutex> lock(hang_mu);
    hang_released = true;
  }
  hang_cv.notify_all();
  hung_first.clear();
  ASSERT_EQ(snap.probes.size(), 5u);
  for (const ProbeRecord& rec : snap.probes) {
    if (rec.name == "nic") {
      EXPECT_EQ(rec.state, ProbeState::kTimeout);
    } else {
      EXPECT_EQ(rec.state, ProbeState::kOk) << rec.name << ": " << rec.reason;
    }
  }
  EXPECT_EQ(snap.host.uptime_s, 42.0);  // the quick probe's facts were applied
  std::lock_guard<std::mutex> lock(step_mu);
  EXPECT_EQ(step_calls[kNic].size(), 1u) << "run again while its first step was stuck";
  for (const char* name : {kCpu, kMemory, kIb}) EXPECT_GE(step_window_s[name], 0.100) << name;
}

// Which thread ran each named probe, in the order they ran.
std::mutex ran_mu;
std::vector<std::pair<std::string, std::thread::id>> ran_on;

template <const char* kName>
ProbeOutput RecordThreadProbe(const ProbeContext&) {
  {
    std::lock_guard<std::mutex> lock(ran_mu);
    ran_on.emplace_back(kName, std::this_thread::get_id());
  }
  // The first of the window chain waits out the window (SharedSamples): its worker is busy
  // meanwhile, so no other probe can be handed that worker by the pool.
  if (std::string_view(kName) == "sockets") {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
  }
  return ProbeOk({});
}

constexpr char kSockets[] = "sockets", kSuspicious[] = "suspicious", kProcesses[] = "processes",
               kPressure[] = "pressure";

// The sockets and suspicious probes sample one window through SharedSamples: one worker runs
// them in turn (sockets first, whatever the order asked), and `processes` runs at the end of the
// quick probes' lane, so the four take at most two workers where they took up to four (a thread
// is ~0.25 ms of CPU on a PVM guest).
TEST(RunnerTest, WindowChainAndProcessesShareWorkers) {
  const ProbeSpec sockets{
      "sockets", Layer::kNetwork, true, Cadence::kSlow, RecordThreadProbe<kSockets>, ""};
  const ProbeSpec suspicious{
      "suspicious", Layer::kSoftware, true, Cadence::kSlow, RecordThreadProbe<kSuspicious>, ""};
  const ProbeSpec processes{
      "processes", Layer::kSoftware, true, Cadence::kFast, RecordThreadProbe<kProcesses>, ""};
  const ProbeSpec pressure{
      "pressure", Layer::kResources, true, Cadence::kFast, RecordThreadProbe<kPressure>, ""};
  auto settings = std::make_shared<Settings>();
  // The chain is one worker by construction: asserted on every run. The lane keeps `processes`
  // on its worker unless the machine stalls it for 100 ms (then it moves, by design): that part
  // must hold on one run of three.
  bool lane_shared = false;
  std::string lane_note;
  for (int run = 0; run < 3 && !lane_shared; ++run) {
    {
      std::lock_guard<std::mutex> lock(ran_mu);
      ran_on.clear();
    }
    RenewWorkerPool();
    int before = WorkerThreadsStarted();
    Snapshot snap = RunProbes({&processes, &suspicious, &pressure, &sockets}, settings,
                              SteadyClock::now() + std::chrono::seconds(3));
    const int workers = WorkerThreadsStarted() - before;
    ASSERT_EQ(snap.probes.size(), 4u);
    for (const ProbeRecord& rec : snap.probes) EXPECT_EQ(rec.state, ProbeState::kOk) << rec.name;
    std::lock_guard<std::mutex> lock(ran_mu);
    std::map<std::string, std::thread::id> thread_of;
    std::vector<std::string> order;
    for (const auto& [name, id] : ran_on) {
      thread_of[name] = id;
      order.push_back(name);
    }
    ASSERT_EQ(thread_of.size(), 4u);
    auto position = [&](const char* name) {
      return std::find(order.begin(), order.end(), name) - order.begin();
    };
    EXPECT_EQ(thread_of[kSockets], thread_of[kSuspicious]);
    EXPECT_LT(position(kSockets), position(kSuspicious));
    EXPECT_NE(thread_of[kSockets], std::this_thread::get_id());
    EXPECT_NE(thread_of[kPressure], std::this_thread::get_id());
    // The chain's worker and the lane's (the pool may hand the lane a worker that is through).
    lane_shared = thread_of[kProcesses] == thread_of[kPressure] &&
                  position(kPressure) < position(kProcesses) && workers <= 2;
    lane_note = "workers " + std::to_string(workers) + ", order";
    for (const auto& name : order) lane_note += " " + name;
  }
  EXPECT_TRUE(lane_shared) << lane_note;
}

std::mutex chain_block_mu;
std::condition_variable chain_block_cv;
bool chain_release = false;
std::atomic<bool> chain_second_ran{false};

ProbeOutput BlockedSocketsProbe(const ProbeContext&) {
  std::unique_lock<std::mutex> lock(chain_block_mu);
  chain_block_cv.wait(lock, [] { return chain_release; });
  return ProbeOk({});
}
ProbeOutput SecondOfChainProbe(const ProbeContext&) {
  chain_second_ran = true;
  return ProbeOk({});
}

// A chain's first probe that overruns the deadline: the next one is recorded as never started
// (behind it on its worker), the worker is counted abandoned once, and the next probe is not
// started after the deadline when the first one finally returns.
TEST(RunnerTest, ProbeQueuedBehindAnOverrunInTheChainNeverStartsLate) {
  const ProbeSpec sockets{"sockets",      Layer::kNetwork,     true,
                          Cadence::kSlow, BlockedSocketsProbe, ""};
  const ProbeSpec suspicious{"suspicious",   Layer::kSoftware,   true,
                             Cadence::kSlow, SecondOfChainProbe, ""};
  auto settings = std::make_shared<Settings>();
  chain_second_ran = false;
  {
    std::lock_guard<std::mutex> lock(chain_block_mu);
    chain_release = false;
  }
  RenewWorkerPool();  // no idle worker: the chain's is the one that comes back below
  const int abandoned = AbandonedWorkerCount();
  Snapshot snap = RunProbes({&suspicious, &sockets}, settings,
                            SteadyClock::now() + std::chrono::milliseconds(300));
  ASSERT_EQ(snap.probes.size(), 2u);
  EXPECT_EQ(snap.probes[0].name, "suspicious");
  EXPECT_EQ(snap.probes[0].state, ProbeState::kTimeout);
  EXPECT_EQ(snap.probes[0].reason,
            "did not start within the deadline (queued behind sockets on its worker)");
  EXPECT_EQ(snap.probes[1].state, ProbeState::kTimeout);
  EXPECT_EQ(snap.probes[1].reason, "did not finish within the deadline; abandoned");
  EXPECT_EQ(AbandonedWorkerCount(), abandoned + 1);
  {
    std::lock_guard<std::mutex> lock(chain_block_mu);
    chain_release = true;
  }
  chain_block_cv.notify_all();
  // The worker comes back from the first probe after the deadline and stops there.
  ASSERT_TRUE(testing::WaitUntil([] { return IdleWorkerCount() >= 1; }));
  EXPECT_FALSE(chain_second_ran.load());
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
