// The watch tick machinery without sleeping on a clock: the cadence plan on a fake clock, and the
// probe scheduler with test probes that count their runs, hand carries on and block on demand.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "net/proc_scan.h"
#include "net/recent_tcp_dump.h"
#include "probes/registry.h"
#include "probes/runner.h"
#include "test_util.h"
#include "watch/probe_scheduler.h"

namespace gpudoctor {
namespace {

using std::chrono::milliseconds;

TEST(CadencePlanTest, SlowProbesRunFirstThenEverySlowInterval) {
  CadencePlan plan(1, 30);
  std::vector<double> slow_at;
  for (int t = 0; t <= 95; ++t) {
    if (plan.SlowDue(t)) slow_at.push_back(t);
  }
  EXPECT_EQ(slow_at, (std::vector<double>{0, 30, 60, 90}));
}

TEST(CadencePlanTest, JitteredTicksDoNotSlipTheSlowCadence) {
  CadencePlan plan(1, 30);
  ASSERT_TRUE(plan.SlowDue(0.0));
  EXPECT_FALSE(plan.SlowDue(29.0));
  EXPECT_TRUE(plan.SlowDue(29.9));  // a tick that came a little early still counts
}

TEST(CadencePlanTest, SleepKeepsTheRhythmAndNeverGoesNegative) {
  CadencePlan plan(1, 30);
  EXPECT_DOUBLE_EQ(plan.SleepUntilNext(10.0, 10.25), 0.75);
  EXPECT_DOUBLE_EQ(plan.SleepUntilNext(10.0, 11.5), 0.0);  // late: next tick at once
}

// Test probes. Globals because ProbeFn is a plain function pointer.
std::atomic<int> g_counter_runs{0};
std::atomic<int> g_slow_runs{0};
std::atomic<int> g_blocking_runs{0};
std::mutex g_block_mu;
std::condition_variable g_block_cv;
bool g_release = false;

struct CountCarry : ProbeCarry {
  int seen = 0;
};

// Counts how many earlier runs it has seen through its carry: proves carries flow tick to tick.
ProbeOutput CountingProbe(const ProbeContext& ctx) {
  ++g_counter_runs;
  auto carry = std::make_shared<CountCarry>();
  if (auto* prev = dynamic_cast<CountCarry*>(ctx.previous.get())) carry->seen = prev->seen + 1;
  int seen = carry->seen;
  ProbeOutput out = ProbeOk([seen](Snapshot& s) { s.host.uptime_s = seen; });
  out.next = carry;
  EXPECT_TRUE(ctx.continuous);
  return out;
}

ProbeOutput SlowProbe(const ProbeContext&) {
  int n = ++g_slow_runs;
  return ProbeOk([n](Snapshot& s) { s.gpu.driver.kernel_module_version = std::to_string(n); });
}

std::atomic<bool> g_block_first_run_free{false};  // the next run returns at once (then resets)

ProbeOutput BlockingProbe(const ProbeContext&) {
  ++g_blocking_runs;
  if (g_block_first_run_free.exchange(false)) return ProbeOk({});
  std::unique_lock<std::mutex> lock(g_block_mu);
  g_block_cv.wait(lock, [] { return g_release; });
  return ProbeOk([](Snapshot& s) { s.gpu.driver.nvml_version = "released"; });
}

const ProbeSpec kCounting{"counting", Layer::kResources, true, Cadence::kFast, CountingProbe, ""};
const ProbeSpec kSlow{"slowone", Layer::kResources, true, Cadence::kSlow, SlowProbe, ""};
const ProbeSpec kBlocking{"blocking", Layer::kSoftware, true, Cadence::kFast, BlockingProbe, ""};

const ProbeRecord* RecordOf(const Snapshot& s, std::string_view name) {
  for (const auto& p : s.probes) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

TEST(ProbeSchedulerTest, CarriesFlowAndSlowFactsPersistBetweenRuns) {
  g_counter_runs = 0;
  g_slow_runs = 0;
  ProbeScheduler sched({&kCounting, &kSlow}, std::make_shared<Settings>());
  auto deadline = [] { return SteadyClock::now() + milliseconds(2000); };
  Snapshot s1 = sched.Tick(1, true, deadline());
  Snapshot s2 = sched.Tick(2, false, deadline());
  Snapshot s3 = sched.Tick(3, false, deadline());
  EXPECT_EQ(s1.host.uptime_s, 0);
  EXPECT_EQ(s3.host.uptime_s, 2);  // the third run saw two earlier carries
  EXPECT_EQ(g_counter_runs.load(), 3);
  EXPECT_EQ(g_slow_runs.load(), 1);                     // slow probe not due on ticks 2 and 3 ...
  EXPECT_EQ(s3.gpu.driver.kernel_module_version, "1");  // ... but its facts are still there
  Snapshot s4 = sched.Tick(4, true, deadline());
  EXPECT_EQ(s4.gpu.driver.kernel_module_version, "2");
  ASSERT_NE(RecordOf(s4, "slowone"), nullptr);
  EXPECT_EQ(RecordOf(s4, "slowone")->state, ProbeState::kOk);
}

TEST(ProbeSchedulerTest, StuckProbeIsNotStartedAgainAndDoesNotDelayOthers) {
  g_blocking_runs = 0;
  g_counter_runs = 0;
  {
    std::lock_guard<std::mutex> lock(g_block_mu);
    g_release = false;
  }
  ProbeScheduler sched({&kCounting, &kBlocking}, std::make_shared<Settings>());
  TimePoint t0 = SteadyClock::now();
  Snapshot s1 = sched.Tick(1, true, SteadyClock::now() + milliseconds(100));
  Snapshot s2 = sched.Tick(2, true, SteadyClock::now() + milliseconds(100));
  Snapshot s3 = sched.Tick(3, true, SteadyClock::now() + milliseconds(100));
  // Three ticks, each bounded by its own deadline, not by the stuck probe.
  EXPECT_LT(SteadyClock::now() - t0, milliseconds(1500));
  EXPECT_EQ(g_blocking_runs.load(), 1);  // never started a second time
  EXPECT_EQ(g_counter_runs.load(), 3);   // the others kept running
  ASSERT_NE(RecordOf(s3, "blocking"), nullptr);
  EXPECT_EQ(RecordOf(s3, "blocking")->state, ProbeState::kTimeout);
  EXPECT_NE(RecordOf(s3, "blocking")->reason.find("still running since tick 1"), std::string::npos);
  EXPECT_EQ(s3.host.uptime_s, 2);

  // Released: its late result is taken, and it runs again on the following tick. Ticks until
  // then (its worker may take a moment to hand the result over) still find it running.
  {
    std::lock_guard<std::mutex> lock(g_block_mu);
    g_release = true;
  }
  g_block_cv.notify_all();
  Snapshot s4;
  uint64_t tick = 4;
  ASSERT_TRUE(testing::WaitUntil([&] {
    s4 = sched.Tick(tick++, true, SteadyClock::now() + milliseconds(1000));
    const ProbeRecord* r = RecordOf(s4, "blocking");
    return r != nullptr && r->reason.find("still running") == std::string::npos;
  }));
  EXPECT_EQ(g_blocking_runs.load(), 2);
  EXPECT_EQ(RecordOf(s4, "blocking")->state, ProbeState::kOk);
  EXPECT_EQ(s4.gpu.driver.nvml_version, "released");
}

// Where each probe ran: probes marked cannot_hang on the tick's own thread, the others together
// on one worker.
std::mutex g_where_mu;
std::map<std::string, std::thread::id> g_where;
ProbeOutput Where(const char* name) {
  std::lock_guard<std::mutex> lock(g_where_mu);
  g_where[name] = std::this_thread::get_id();
  return ProbeOk({});
}
ProbeOutput InlineProbe(const ProbeContext&) { return Where("inline"); }
ProbeOutput LaneProbeA(const ProbeContext&) { return Where("a"); }
ProbeOutput LaneProbeB(const ProbeContext&) { return Where("b"); }
const ProbeSpec kInline{"inline", Layer::kResources, true, Cadence::kFast, InlineProbe, "", true};
const ProbeSpec kLaneA{"a", Layer::kResources, true, Cadence::kFast, LaneProbeA, ""};
const ProbeSpec kLaneB{"b", Layer::kResources, true, Cadence::kFast, LaneProbeB, ""};

TEST(ProbeSchedulerTest, ProbesThatCannotHangRunInlineTheOthersShareOneWorker) {
  ProbeScheduler sched({&kLaneA, &kInline, &kLaneB}, std::make_shared<Settings>());
  for (uint64_t tick = 1; tick <= 3; ++tick) {
    {
      std::lock_guard<std::mutex> lock(g_where_mu);
      g_where.clear();
    }
    Snapshot s = sched.Tick(tick, false, SteadyClock::now() + milliseconds(2000));
    std::lock_guard<std::mutex> lock(g_where_mu);
    ASSERT_EQ(g_where.size(), 3u);
    EXPECT_EQ(g_where["inline"], std::this_thread::get_id());  // no hand-off
    EXPECT_NE(g_where["a"], std::this_thread::get_id());
    // After the first runs (a worker each: costs unknown), one hand-off for both.
    if (tick > 1) {
      EXPECT_EQ(g_where["a"], g_where["b"]);
    }
    for (const char* name : {"inline", "a", "b"}) {
      ASSERT_NE(RecordOf(s, name), nullptr) << name;
      EXPECT_EQ(RecordOf(s, name)->state, ProbeState::kOk) << name;
    }
  }
}

// A probe stuck at the head of the worker's queue: the probes behind it move to another worker
// and still report on the same tick.
TEST(ProbeSchedulerTest, ProbesQueuedBehindAStuckOneStillRunInTheTick) {
  g_blocking_runs = 0;
  g_counter_runs = 0;
  {
    std::lock_guard<std::mutex> lock(g_block_mu);
    g_release = false;
  }
  ProbeScheduler sched({&kBlocking, &kCounting}, std::make_shared<Settings>());
  g_block_first_run_free = true;  // the first tick (a worker each) passes; the second blocks
  sched.Tick(1, true, SteadyClock::now() + milliseconds(2000));
  TimePoint t0 = SteadyClock::now();
  Snapshot s1 = sched.Tick(2, true, SteadyClock::now() + milliseconds(600));
  EXPECT_LT(SteadyClock::now() - t0, milliseconds(1500));
  EXPECT_EQ(g_counter_runs.load(), 2);
  ASSERT_NE(RecordOf(s1, "counting"), nullptr);
  EXPECT_EQ(RecordOf(s1, "counting")->state, ProbeState::kOk);
  EXPECT_EQ(RecordOf(s1, "blocking")->state, ProbeState::kTimeout);
  {
    std::lock_guard<std::mutex> lock(g_block_mu);
    g_release = true;
  }
  g_block_cv.notify_all();
  ASSERT_TRUE(testing::WaitUntil([&] { return g_blocking_runs.load() == 2; }));
}

}  // namespace
}  // namespace gpudoctor

namespace gpudoctor {
namespace {

// One slow-probe list: the registry's cadences; the README quotes it and a test keeps it so.
// The sockets and suspicious probes of a slow round run one after the other on the tick's worker
// and share one /proc walk (RecentFullScan through RoundWalk) and one TCP table (RecentTcpDump
// through RoundTcpDump): the first one's are held for the tick, so the second is handed them
// instead of walking /proc or dumping the table again (it walked twice a round when only the
// probes held the walk; it dumped twice until the table was shared too). After the tick nothing
// holds them.
// The running kernel's identity is read on the first tick, on slow ticks and after a reload, and
// kept in between (its boot id cannot change under a process; a pread of it every tick was ~4% of
// watch's main thread). A procfs tree at another path is read every tick: a fixture's (or another
// host's) boot id may change under a running watch (the dashboard test's simulated reboot).
TEST(ProbeSchedulerTest, TheRunningKernelsIdentityIsReadOnSlowTicksAndAfterAReloadOnly) {
  auto settings = std::make_shared<Settings>();  // the running kernel's procfs
  ProbeScheduler sched({&kCounting}, settings);
  auto deadline = [] { return SteadyClock::now() + milliseconds(2000); };
  const uint64_t at_start = HostIdentityReads();
  Snapshot first = sched.Tick(1, false, deadline());
  EXPECT_EQ(HostIdentityReads() - at_start, 1u);  // the first tick reads it
  EXPECT_FALSE(first.hostname.empty());
  Snapshot fast = sched.Tick(2, false, deadline());
  sched.Tick(3, false, deadline());
  EXPECT_EQ(HostIdentityReads() - at_start, 1u);  // kept on fast ticks ...
  EXPECT_EQ(fast.hostname, first.hostname);       // ... and still in every snapshot
  EXPECT_EQ(fast.boot_id, first.boot_id);
  sched.Tick(4, true, deadline());
  EXPECT_EQ(HostIdentityReads() - at_start, 2u);  // read again on a slow tick
  sched.UpdateSettings(settings);
  sched.Tick(5, false, deadline());
  EXPECT_EQ(HostIdentityReads() - at_start, 3u);  // and after a reload
}

TEST(ProbeSchedulerTest, AnotherProcfsTreesIdentityIsReadEveryTick) {
  testing::TempDir dir;
  const std::string boot_id = "proc/sys/kernel/random/boot_id";
  dir.Write(boot_id, "boot-a\n");
  auto settings = std::make_shared<Settings>();
  settings->fs = RootFs(dir.path() + "/proc", dir.path() + "/sys", dir.path());
  ProbeScheduler sched({&kCounting}, settings);
  auto deadline = [] { return SteadyClock::now() + milliseconds(2000); };
  EXPECT_EQ(sched.Tick(1, false, deadline()).boot_id, "boot-a");
  dir.Write(boot_id, "boot-b\n");
  EXPECT_EQ(sched.Tick(2, false, deadline()).boot_id, "boot-b");  // a fast tick reads it too
}

TEST(ProbeSchedulerTest, SocketsAndSuspiciousShareOneProcWalkAndOneTcpDumpPerRound) {
  std::string root = testing::FixturePath("suspicious");
  auto settings = std::make_shared<Settings>();
  settings->fs = RootFs(root + "/proc", root + "/sys", root);
  ProbeScheduler sched({FindProbe("sockets"), FindProbe("suspicious")}, settings);
  auto deadline = [] { return SteadyClock::now() + milliseconds(5000); };
  sched.Tick(1, true, deadline());  // first runs: each on its own worker; no rates yet
  for (uint64_t tick = 2; tick <= 3; ++tick) {
    std::this_thread::sleep_for(milliseconds(600));  // past the round's walk age (500 ms)
    uint64_t walks_before = RecentFullScansTaken();
    uint64_t dumps_before = RecentTcpDumpsTaken();
    Snapshot s = sched.Tick(tick, true, deadline());
    ASSERT_NE(RecordOf(s, "suspicious"), nullptr);
    EXPECT_EQ(RecordOf(s, "suspicious")->state, ProbeState::kOk)
        << RecordOf(s, "suspicious")->reason;
    ASSERT_TRUE(s.network.process_signs.has_value());
    EXPECT_EQ(s.network.process_signs->scanned, 18);
    ASSERT_NE(RecordOf(s, "sockets"), nullptr);
    if (RecordOf(s, "sockets")->state != ProbeState::kOk) {
      GTEST_SKIP() << "sockets probe: " << RecordOf(s, "sockets")->reason;  // no sock_diag
    }
    EXPECT_EQ(RecentFullScansTaken() - walks_before, 1u) << "tick " << tick;
    EXPECT_EQ(RecentTcpDumpsTaken() - dumps_before, 1u) << "tick " << tick;
    // The sockets probe's window runs between its own runs' tables, not a zero-length one
    // (RecentTcpDumpTest checks that a window's end is never its start's table).
    ASSERT_TRUE(s.network.sockets.has_value());
    EXPECT_GT(s.network.sockets->window_s, 0.5) << "tick " << tick;
  }
  // The tick is over: its walk is let go, so a caller now gets a new one.
  const TimePoint asked = SteadyClock::now();
  EXPECT_GE(RecentFullScan(settings->fs, std::chrono::hours(1), std::nullopt)->started_at, asked);
  EXPECT_GE(RecentTcpDump(std::chrono::hours(1), std::nullopt)->at, asked);
}

TEST(CadencePlanTest, ReadmeListsTheRegistrysSlowProbes) {
  std::string readme = testing::ReadFileOrDie(std::string(GPUDOCTOR_SOURCE_DIR) + "/README.md");
  std::string names = SlowProbeNames();
  ASSERT_NE(names.find(", "), std::string::npos) << names;  // several slow probes
  std::string flat;
  for (char c : readme) flat += c == '\n' ? ' ' : c;
  EXPECT_NE(flat.find("cadence: " + names + ")"), std::string::npos)
      << "README's list of slow probes differs from the registry: " << names;
}

}  // namespace
}  // namespace gpudoctor
