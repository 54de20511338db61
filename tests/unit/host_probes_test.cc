// Probe-level tests: each host probe runs on a copied fixture tree (tests/fixtures/hosts),
// its patch is applied to a Snapshot, and the facts are checked.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <thread>

#include "host_fixture.h"
#include "parsers/proc_stat.h"
#include "probes/disk_probe.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"
#include "probes/shared_samples.h"
#include "rules/engine.h"
#include "rules/thresholds.h"

namespace gpudoctor {

namespace {

using testing::HostFixture;
using testing::TempDir;

ProbeContext Context(const RootFs& fs, int sample_ms) {
  auto settings = std::make_shared<Settings>();
  settings->fs = fs;
  settings->sample_ms = sample_ms;
  return ProbeContext{settings, SteadyClock::now() + std::chrono::seconds(10)};
}

// The process fixtures' tasks last ran on CPU 0; the probe reads CPU 0's clock pinned there.
bool Cpu0Allowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_ISSET(0, &set);
}

// A /proc/PID/sched text with se.exec_start `exec_ms` (what the fixtures' thread-self shows).
std::string SchedAt(double exec_ms) {
  return "gpudoctor (99999, #threads: 1)\nse.exec_start : " + std::to_string(exec_ms) +
         "\nse.sum_exec_runtime : 1.5\nnr_switches : 3\n";
}
constexpr double kFixtureUptimeS = 864000.50;
constexpr double kFixtureSchedNowMs = (kFixtureUptimeS - 6.0) * 1000;  // lags uptime by 6 s

bool HasFinding(const std::vector<Finding>& findings, std::string_view id) {
  return std::any_of(findings.begin(), findings.end(),
                     [&](const Finding& f) { return f.id == id; });
}

Snapshot Apply(const ProbeOutput& out) {
  Snapshot s;
  if (out.apply) out.apply(s);
  return s;
}

TEST(MemoryProbeTest, SwapStormWithTwoSamples) {
  HostFixture fx("swap-storm");
  ASSERT_EQ(fx.ArmSecondSamples(), 2);  // stat.next and vmstat.next
  ProbeOutput out = RunMemoryProbe(Context(fx.fs(), 300));
  ASSERT_EQ(out.state, ProbeState::kOk) << out.reason;
  EXPECT_EQ(fx.swaps_done(), 1);  // only vmstat was read
  Snapshot s = Apply(out);
  ASSERT_TRUE(s.host.memory);
  const MemoryFacts& m = *s.host.memory;
  EXPECT_EQ(m.total_bytes, 263845924ull * 1024);
  EXPECT_EQ(m.available_bytes, 7915377ull * 1024);
  EXPECT_EQ(m.swap_total_bytes, 16777212ull * 1024);
  EXPECT_EQ(m.swap_free_bytes, 1677721ull * 1024);
  EXPECT_EQ(m.oom_kill_count, 3u);
  ASSERT_TRUE(m.window_s && m.swap_in_pages_per_s && m.swap_out_pages_per_s);
  EXPECT_GE(*m.window_s, 0.3);
  EXPECT_NEAR(*m.swap_in_pages_per_s, 1200 / *m.window_s, 1e-6);
  EXPECT_NEAR(*m.swap_out_pages_per_s, 1800 / *m.window_s, 1e-6);

  auto findings = EvaluateRules(s, Thresholds());
  auto has = [&](std::string_view id, Severity sev) {
    return std::any_of(findings.begin(), findings.end(),
                       [&](const Finding& f) { return f.id == id && f.severity == sev; });
  };
  EXPECT_TRUE(has("host.memory.low", Severity::kCrit));
  // A swap rate over a sub-second window is a moment: at most warn.
  EXPECT_TRUE(has("host.swap.active", Severity::kWarn));
}

TEST(MemoryProbeTest, StaticTreeHasZeroRatesAndHealthyHostNoFinding) {
  HostFixture fx("healthy");  // not armed: both vmstat samples equal
  Snapshot s = Apply(RunMemoryProbe(Context(fx.fs(), 0)));
  ASSERT_TRUE(s.host.memory);
  EXPECT_EQ(s.host.memory->swap_in_pages_per_s, 0.0);
  EXPECT_TRUE(EvaluateRules(s, Thresholds()).empty());
}

TEST(MemoryProbeTest, MissingOrGarbledMeminfoFails) {
  HostFixture fx("healthy");
  fx.Write("proc/meminfo", "MemFree: 12 kB\n");
  ProbeOutput out = RunMemoryProbe(Context(fx.fs(), 0));
  EXPECT_EQ(out.state, ProbeState::kFailed);
  EXPECT_NE(out.reason.find("MemTotal"), std::string::npos);
  // Garbled vmstat: memory facts stay, rates are absent.
  HostFixture fx2("healthy");
  fx2.Write("proc/vmstat", "pswpin x\n");
  Snapshot s = Apply(RunMemoryProbe(Context(fx2.fs(), 0)));
  ASSERT_TRUE(s.host.memory);
  EXPECT_TRUE(s.host.memory->total_bytes);
  EXPECT_FALSE(s.host.memory->swap_in_pages_per_s);
}

TEST(CpuProbeTest, TwoSamplesOnCpuSaturatedFixture) {
  HostFixture fx("cpu-saturated");
  fx.ArmSecondSamples();
  Snapshot s = Apply(RunCpuProbe(Context(fx.fs(), 300)));
  ASSERT_TRUE(s.host.cpu && s.host.cpu->busy_pct);
  EXPECT_NEAR(*s.host.cpu->busy_pct, 99.0, 0.01);  // 990 busy of 1000 ticks
  auto findings = EvaluateRules(s, Thresholds());
  // 99% busy over a 0.3 s window: warn (a moment), with the window in the evidence.
  EXPECT_TRUE(std::any_of(findings.begin(), findings.end(), [](const Finding& f) {
    return f.id == "host.cpu.saturated" && f.severity == Severity::kWarn &&
           f.action == Action::kWatch;
  }));
}

// Issue 8 item 22: an idle (tickless) host whose window holds three clock ticks, all of them
// busy, must not read as "100% busy": the share is left absent and no finding fires.
TEST(CpuProbeTest, TooFewTicksInTheWindowLeaveBusyAbsent) {
  HostFixture fx("healthy");
  fx.Write("proc/stat", "cpu  1000 0 500 90000 10 0 0 0 0 0\ncpu0 1000 0 500 90000 10 0 0 0 0 0\n");
  fx.Write("proc/stat.next",
           "cpu  1003 0 500 90000 10 0 0 0 0 0\ncpu0 1003 0 500 90000 10 0 0 0 0 0\n");
  fx.ArmSecondSamples();
  Snapshot s = Apply(RunCpuProbe(Context(fx.fs(), 50)));
  ASSERT_TRUE(s.host.cpu);
  EXPECT_FALSE(s.host.cpu->busy_pct);
  EXPECT_FALSE(s.host.cpu->iowait_pct);
  for (const auto& f : EvaluateRules(s, Thresholds())) EXPECT_NE(f.id, "host.cpu.saturated");
  // Enough ticks: the share is measured.
  CpuTimes a, b;
  b.user = kMinCpuShareTicks;
  ASSERT_TRUE(CpuSharesBetween(a, b));
  EXPECT_DOUBLE_EQ(CpuSharesBetween(a, b)->busy_pct, 100.0);
  b.user = kMinCpuShareTicks - 1;
  EXPECT_FALSE(CpuSharesBetween(a, b));
}

// Issue 8 item 3: PID 1's mountinfo wins over the reader's own table and /proc/mounts.
TEST(DiskProbeTest, ReadsPid1MountInfoFirst) {
  HostFixture fx("healthy");
  fx.Write("proc/1/mountinfo", "22 1 259:2 / / rw,relatime - ext4 /dev/host-root rw\n");
  fx.Write("proc/self/mountinfo", "22 1 259:2 / / rw,relatime - overlay overlay rw\n");
  Snapshot s = Apply(RunDiskProbe(Context(fx.fs(), 0)));
  ASSERT_TRUE(s.host.mounts);
  ASSERT_EQ(s.host.mounts->size(), 1u);
  EXPECT_EQ((*s.host.mounts)[0].device, "/dev/host-root");
  // Without PID 1's table: the reader's own mountinfo.
  HostFixture fx2("healthy");
  fx2.Write("proc/self/mountinfo", "22 1 259:2 / / rw,relatime - ext4 /dev/self-root rw\n");
  Snapshot s2 = Apply(RunDiskProbe(Context(fx2.fs(), 0)));
  ASSERT_TRUE(s2.host.mounts);
  ASSERT_EQ(s2.host.mounts->size(), 1u);
  EXPECT_EQ((*s2.host.mounts)[0].device, "/dev/self-root");
}

TEST(PressureProbeTest, ParsesAllThree) {
  HostFixture fx("heavy-iowait");
  ProbeOutput out = RunPressureProbe(Context(fx.fs(), 0));
  ASSERT_EQ(out.state, ProbeState::kOk) << out.reason;
  Snapshot s = Apply(out);
  ASSERT_TRUE(s.host.pressure && s.host.pressure->io && s.host.pressure->cpu);
  EXPECT_DOUBLE_EQ(*s.host.pressure->io->some.avg10_pct, 72.40);
  EXPECT_DOUBLE_EQ(*s.host.pressure->io->full->avg10_pct, 41.30);
}

TEST(PressureProbeTest, NoPsiIsSkippedAndPartialIsKept) {
  TempDir empty;
  empty.MakeDir("proc");
  ProbeOutput out = RunPressureProbe(Context(RootFs(empty.path() + "/proc", "/x", "/x"), 0));
  EXPECT_EQ(out.state, ProbeState::kSkipped);
  EXPECT_EQ(out.reason, "PSI not available");

  HostFixture fx("healthy");
  fx.Write("proc/pressure/io", "garbage\n");
  Snapshot s = Apply(RunPressureProbe(Context(fx.fs(), 0)));
  ASSERT_TRUE(s.host.pressure);
  EXPECT_TRUE(s.host.pressure->cpu);
  EXPECT_FALSE(s.host.pressure->io);
}

TEST(DiskProbeTest, SelectsRealMountsOnFixture) {
  HostFixture fx("healthy");
  ProbeOutput out = RunDiskProbe(Context(fx.fs(), 0));
  ASSERT_EQ(out.state, ProbeState::kOk) << out.reason;
  Snapshot s = Apply(out);
  ASSERT_TRUE(s.host.mounts);
  std::vector<std::string> points;
  for (const auto& m : *s.host.mounts) {
    points.push_back(m.mount_point);
    EXPECT_TRUE(m.error.empty()) << m.mount_point << ": " << m.error;
    EXPECT_TRUE(m.total_bytes.has_value()) << m.mount_point;
  }
  EXPECT_EQ(points, (std::vector<std::string>{"/", "/dev/shm", "/boot/efi", "/data",
                                              "/mnt/datasets", "/mnt/scratch space"}));
}

TEST(DiskProbeTest, HungStatvfsDoesNotBlockOthers) {
  std::vector<MountEntry> mounts = {{"/dev/sda1", "/", "ext4", "rw", false},
                                    {"nas:/x", "/mnt/stale", "nfs4", "rw", false},
                                    {"/dev/sdb1", "/data", "xfs", "rw", false}};
  auto stat = [](const std::string& point) -> Result<FsUsage> {
    if (point == "/mnt/stale") std::this_thread::sleep_for(std::chrono::seconds(30));
    if (point == "/data") return PermissionDenied("/data: Permission denied");
    FsUsage u;
    u.total_bytes = 1000;
    u.available_bytes = 400;
    u.free_bytes = 450;
    u.inodes_total = 100;
    u.inodes_free = 90;
    return u;
  };
  TimePoint start = SteadyClock::now();
  int abandoned_before = AbandonedWorkerCount();
  auto facts = StatMounts(mounts, stat, start + std::chrono::milliseconds(200));
  EXPECT_LT(SteadyClock::now() - start, std::chrono::seconds(2));
  ASSERT_EQ(facts.size(), 3u);
  EXPECT_EQ(facts[0].total_bytes, 1000u);
  EXPECT_EQ(facts[0].free_bytes, 450u);
  EXPECT_EQ(facts[0].inodes_free, 90u);
  EXPECT_TRUE(facts[1].timed_out);
  EXPECT_FALSE(facts[1].total_bytes);
  EXPECT_FALSE(facts[2].timed_out);
  EXPECT_NE(facts[2].error.find("permission_denied"), std::string::npos);
  EXPECT_EQ(AbandonedWorkerCount(), abandoned_before + 1);
}

TEST(DiskProbeTest, MountPointMissingIsRecordedNotFatal) {
  HostFixture fx("healthy");
  std::filesystem::remove_all(fx.root() + "/data");
  Snapshot s = Apply(RunDiskProbe(Context(fx.fs(), 0)));
  ASSERT_TRUE(s.host.mounts);
  auto it = std::find_if(s.host.mounts->begin(), s.host.mounts->end(),
                         [](const MountFacts& m) { return m.mount_point == "/data"; });
  ASSERT_NE(it, s.host.mounts->end());
  EXPECT_NE(it->error.find("not_found"), std::string::npos);
  EXPECT_FALSE(it->timed_out);
}

TEST(ProcessProbeTest, HealthyHostHasNoStuckTasks) {
  HostFixture fx("healthy");
  TimePoint start = SteadyClock::now();
  Snapshot s = Apply(RunProcessProbe(Context(fx.fs(), 2000)));
  EXPECT_LT(SteadyClock::now() - start, std::chrono::seconds(1));  // no D task: no wait
  ASSERT_TRUE(s.host.processes);
  const ProcessFacts& p = *s.host.processes;
  EXPECT_EQ(p.total, 7);          // 1, 2, 812, 900, 901, 1500, 3000
  EXPECT_EQ(p.tasks_scanned, 9);  // + threads 1501, 1502
  EXPECT_EQ(p.zombie_count, 1);
  EXPECT_EQ(p.dstate_count, 0);
  EXPECT_FALSE(p.truncated);
  EXPECT_TRUE(EvaluateRules(s, Thresholds()).empty());
}

// The scan reads task/ only of processes whose stat shows more than one thread (field 20): a
// thread in D inside a multi-threaded process must still be found, also when the leader's line
// is too short to show the count.
TEST(ProcessProbeTest, DThreadInsideMultiThreadedProcessIsFound) {
  for (bool short_leader : {false, true}) {
    SCOPED_TRACE(short_leader ? "leader stat without field 20" : "leader stat shows 3 threads");
    HostFixture fx("healthy");
    fx.Write("proc/1500/task/1502/stat",
             "1502 (cuda-EvtHandlr) D 1 1502 1502 0 -1 4194560 1234 0 0 0 15 7 0 0 20 0 3 0 5000 "
             "123456789 2345 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
    if (short_leader) {
      fx.Write("proc/1500/stat", "1500 (python3) S 1 1500 1500 0 -1 4194560 1234 0 0 0 15 7\n");
    }
    Snapshot s = Apply(RunProcessProbe(Context(fx.fs(), 50)));
    ASSERT_TRUE(s.host.processes);
    const ProcessFacts& p = *s.host.processes;
    EXPECT_EQ(p.tasks_scanned, 9);  // the same count as a walk of every task/
    ASSERT_EQ(p.dstate_count, 1);
    EXPECT_EQ(p.dstate[0].pid, 1500);
    EXPECT_EQ(p.dstate[0].tid, 1502);
    EXPECT_EQ(p.dstate[0].comm, "python3");
    EXPECT_EQ(p.dstate[0].thread_comm, "cuda-EvtHandlr");
  }
}

// Under watch the task/ walk runs once per ProcessRescanEvery (9 s at the defaults): a run soon
// after a walk that found tasks in D re-reads those (still reported while in D, dropped once out of
// it) and nothing else, so a thread that entered D since is seen at the next walk, not before.
TEST(ProcessProbeTest, WatchWalksThreadsEveryFewSecondsAndRechecksThoseInD) {
  HostFixture fx("healthy");
  const std::string d_stat =
      " D 1 1500 1500 0 -1 4194560 1234 0 0 0 15 7 0 0 20 0 3 0 5000 123456789 2345 "
      "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
  fx.Write("proc/1500/task/1502/stat", "1502 (cuda-EvtHandlr)" + d_stat);
  ProbeContext ctx = Context(fx.fs(), 20);
  ctx.continuous = true;
  ProbeOutput walk = RunProcessProbe(ctx);
  ASSERT_NE(walk.next, nullptr);
  Snapshot first = Apply(walk);
  ASSERT_TRUE(first.host.processes);
  EXPECT_EQ(first.host.processes->tasks_scanned, 9);  // every task
  ASSERT_EQ(first.host.processes->dstate_count, 1);
  EXPECT_EQ(first.host.processes->dstate[0].tid, 1502);

  fx.Write("proc/1500/task/1501/stat", "1501 (worker)" + d_stat);  // enters D after the walk
  ctx.previous = walk.next;
  ProbeOutput between = RunProcessProbe(ctx);
  Snapshot second = Apply(between);
  ASSERT_TRUE(second.host.processes);
  const ProcessFacts& p = *second.host.processes;
  // Only the task the scan found in D (1502) is read; the counts are the scan's, 1501 is not read.
  EXPECT_EQ(p.tasks_scanned, 9);
  ASSERT_EQ(p.dstate_count, 1);
  EXPECT_EQ(p.dstate[0].tid, 1502);
  EXPECT_EQ(p.dstate[0].comm, "python3");
  EXPECT_EQ(p.dstate[0].thread_comm, "cuda-EvtHandlr");

  // 1502 leaves D: the next run between walks no longer reports it.
  fx.Write("proc/1500/task/1502/stat", "1502 (cuda-EvtHandlr) S" + d_stat.substr(2));
  ctx.previous = between.next;
  Snapshot third = Apply(RunProcessProbe(ctx));
  ASSERT_TRUE(third.host.processes);
  EXPECT_EQ(third.host.processes->dstate_count, 0);

  // A check (or watch's first run) always walks: 1501 is found.
  ctx.previous = nullptr;
  Snapshot walked = Apply(RunProcessProbe(ctx));
  ASSERT_TRUE(walked.host.processes);
  ASSERT_EQ(walked.host.processes->dstate_count, 1);
  EXPECT_EQ(walked.host.processes->dstate[0].tid, 1501);
}

// Under watch, on a quiet host (the last scan found no task in D), a run within ProcessRescanEvery
// (9 s) of that scan reads nothing and reports its facts again; a task that entered D since is
// found by the next scan (here: a check, which always scans). A host with a task in D is scanned
// every run.
TEST(ProcessProbeTest, WatchRescansAQuietHostEveryFewSeconds) {
  HostFixture fx("healthy");
  ProbeContext ctx = Context(fx.fs(), 20);
  ctx.continuous = true;
  ProbeOutput scanned = RunProcessProbe(ctx);
  ASSERT_NE(scanned.next, nullptr);
  Snapshot first = Apply(scanned);
  ASSERT_TRUE(first.host.processes);
  ASSERT_EQ(first.host.processes->dstate_count, 0);
  const int total = first.host.processes->total;

  const std::string d_stat =
      " D 1 1500 1500 0 -1 4194560 1234 0 0 0 15 7 0 0 20 0 3 0 5000 123456789 2345 "
      "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
  fx.Write("proc/4321/stat", "4321 (late)" + d_stat);  // a new process, in D, after the scan
  ctx.previous = scanned.next;
  ProbeOutput quiet = RunProcessProbe(ctx);
  Snapshot second = Apply(quiet);
  ASSERT_TRUE(second.host.processes);
  EXPECT_EQ(second.host.processes->dstate_count, 0);  // not read yet
  EXPECT_EQ(second.host.processes->total, total);

  ctx.previous = nullptr;  // a check (or a run 9 s later) scans
  ProbeOutput found = RunProcessProbe(ctx);
  Snapshot third = Apply(found);
  ASSERT_TRUE(third.host.processes);
  EXPECT_EQ(third.host.processes->total, total + 1);
  ASSERT_EQ(third.host.processes->dstate_count, 1);
  EXPECT_EQ(third.host.processes->dstate[0].pid, 4321);

  // Not quiet: the next run scans again at once, and sees 4321 leave D.
  fx.Write("proc/4321/stat", "4321 (late) S" + d_stat.substr(2));
  ctx.previous = found.next;
  ProbeOutput fourth = RunProcessProbe(ctx);
  Snapshot fourth_snap = Apply(fourth);
  ASSERT_TRUE(fourth_snap.host.processes);
  EXPECT_EQ(fourth_snap.host.processes->dstate_count, 0);

  // Quiet again: the run after that reads nothing.
  fx.Write("proc/4321/stat", "4321 (late)" + d_stat);
  ctx.previous = fourth.next;
  Snapshot fifth = Apply(RunProcessProbe(ctx));
  ASSERT_TRUE(fifth.host.processes);
  EXPECT_EQ(fifth.host.processes->dstate_count, 0);
}

// Under watch one scan serves for the proc.dstate threshold less one tick (at most 10 s), so a task
// that enters D just after a scan is found by the next scan before its stuck time can reach the
// threshold: the finding comes on the tick it would with a scan on every tick.
// The probe restates the catalogue's default (probes/ may not include rules/): the two must agree.
TEST(ProcessProbeTest, DefaultStuckThresholdIsTheCatalogues) {
  EXPECT_DOUBLE_EQ(kDefaultProcDstateMinStuckS, Thresholds().Get("proc.dstate", "min_stuck_s"));
}

TEST(ProcessProbeTest, WatchRescanCadenceFollowsTheStuckThreshold) {
  auto seconds = [](SteadyClock::duration d) { return std::chrono::duration<double>(d).count(); };
  Settings s;  // defaults: min_stuck_s 10, 1 s ticks
  EXPECT_DOUBLE_EQ(seconds(ProcessRescanEvery(s)), 9);
  s.watch_interval_s = 0.5;
  EXPECT_DOUBLE_EQ(seconds(ProcessRescanEvery(s)), 9.5);
  s.thresholds.Set("proc.dstate", "min_stuck_s", 4);
  EXPECT_DOUBLE_EQ(seconds(ProcessRescanEvery(s)), 3.5);
  s.thresholds.Set("proc.dstate", "min_stuck_s", 0.2);  // below one tick: every tick
  EXPECT_DOUBLE_EQ(seconds(ProcessRescanEvery(s)), 0.5);
  s.thresholds.Set("proc.dstate", "min_stuck_s", 600);  // counts stay at most 10 s old
  EXPECT_DOUBLE_EQ(seconds(ProcessRescanEvery(s)), 10);
  // The property the cadence keeps: the next scan starts within the threshold of the last one.
  for (double min_stuck_s : {1.0, 2.0, 3.0, 10.0, 30.0}) {
    for (double interval_s : {0.1, 0.5, 1.0}) {
      s.watch_interval_s = interval_s;
      s.thresholds.Set("proc.dstate", "min_stuck_s", min_stuck_s);
      double every_s = seconds(ProcessRescanEvery(s));
      EXPECT_GE(every_s, interval_s);
      if (min_stuck_s >= 2 * interval_s) {
        EXPECT_LE(every_s + interval_s, min_stuck_s + 1e-9) << min_stuck_s << " " << interval_s;
      }
    }
  }
}

// A task that enters D right after a quiet scan is not read on the next run (the scan's facts are
// reported again) but is found by the scan that comes ProcessRescanEvery after the last, here
// 0.2 s (min_stuck_s 0.3, 0.1 s ticks), before it could have been stuck for the threshold.
TEST(ProcessProbeTest, WatchFindsATaskInDByTheScanWithinItsThreshold) {
  HostFixture fx("healthy");
  ProbeContext ctx = Context(fx.fs(), 20);
  auto settings = std::make_shared<Settings>(*ctx.settings);
  settings->watch_interval_s = 0.1;
  settings->thresholds.Set("proc.dstate", "min_stuck_s", 0.3);
  ctx.settings = settings;
  ctx.continuous = true;
  TimePoint scan_at = SteadyClock::now();
  ProbeOutput scanned = RunProcessProbe(ctx);
  ASSERT_EQ(Apply(scanned).host.processes->dstate_count, 0);

  const std::string d_stat =
      " D 1 4321 4321 0 -1 4194560 1234 0 0 0 15 7 0 0 20 0 1 0 5000 123456789 2345 "
      "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
  fx.Write("proc/4321/stat", "4321 (late)" + d_stat);
  ctx.previous = scanned.next;
  ProbeOutput quiet = RunProcessProbe(ctx);
  if (SteadyClock::now() - scan_at < std::chrono::milliseconds(150)) {
    EXPECT_EQ(Apply(quiet).host.processes->dstate_count, 0);  // not read between scans
  }
  std::this_thread::sleep_until(scan_at + std::chrono::milliseconds(210));
  ctx.previous = quiet.next;
  Snapshot found = Apply(RunProcessProbe(ctx));
  ASSERT_TRUE(found.host.processes);
  ASSERT_EQ(found.host.processes->dstate_count, 1);
  EXPECT_EQ(found.host.processes->dstate[0].pid, 4321);
}

// Under watch, after a scan that found a task in D, the runs until the next scan (9 s) read only
// that task: its evidence is fresh every run (here its wchan), a process that appears or enters D
// meanwhile is not read until the next scan, and the counts are the scan's.
TEST(ProcessProbeTest, WatchReadsOnlyTheTasksInDBetweenScans) {
  HostFixture fx("healthy");
  const std::string d_stat =
      " D 1 4321 4321 0 -1 4194560 1234 0 0 0 15 7 0 0 20 0 1 0 5000 123456789 2345 "
      "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
  fx.Write("proc/4321/stat", "4321 (writer)" + d_stat);
  fx.Write("proc/4321/wchan", "io_schedule");
  ProbeContext ctx = Context(fx.fs(), 20);
  ctx.continuous = true;
  ProbeOutput scanned = RunProcessProbe(ctx);
  Snapshot first = Apply(scanned);
  ASSERT_TRUE(first.host.processes);
  ASSERT_EQ(first.host.processes->dstate_count, 1);
  EXPECT_EQ(first.host.processes->dstate[0].wchan, "io_schedule");
  const int total = first.host.processes->total;
  const int zombies = first.host.processes->zombie_count;

  fx.Write("proc/4321/wchan", "folio_wait_bit_common");
  fx.Write("proc/4400/stat", "4400 (late)" + d_stat);  // enters D after the scan
  fx.Write("proc/4500/stat", "4500 (gone) Z" + d_stat.substr(2));
  ctx.previous = scanned.next;
  ProbeOutput between = RunProcessProbe(ctx);
  Snapshot second = Apply(between);
  ASSERT_TRUE(second.host.processes);
  const ProcessFacts& p = *second.host.processes;
  ASSERT_EQ(p.dstate_count, 1);
  EXPECT_EQ(p.dstate[0].pid, 4321);
  EXPECT_EQ(p.dstate[0].comm, "writer");
  EXPECT_EQ(p.dstate[0].wchan, "folio_wait_bit_common");  // read again this run
  EXPECT_EQ(p.total, total);
  EXPECT_EQ(p.zombie_count, zombies);

  // The next scan (a check here; under watch 9 s after the last) finds both and the zombie.
  ctx.previous = nullptr;
  Snapshot third = Apply(RunProcessProbe(ctx));
  ASSERT_TRUE(third.host.processes);
  EXPECT_EQ(third.host.processes->dstate_count, 2);
  EXPECT_EQ(third.host.processes->total, total + 2);
  EXPECT_EQ(third.host.processes->zombie_count, zombies + 1);
}

TEST(ProcessProbeTest, StuckNvidiaSmiAndUvmThread) {
  if (!Cpu0Allowed()) GTEST_SKIP() << "CPU 0 is outside this test's cpuset";
  HostFixture fx("dstate-nvidia-smi");
  Snapshot s = Apply(RunProcessProbe(Context(fx.fs(), 50)));
  ASSERT_TRUE(s.host.processes);
  const ProcessFacts& p = *s.host.processes;
  ASSERT_EQ(p.dstate_count, 3);
  ASSERT_EQ(p.dstate.size(), 3u);
  // NVIDIA first, longest stuck first.
  EXPECT_EQ(p.dstate[0].pid, 4242);
  EXPECT_EQ(p.dstate[0].comm, "nvidia-smi");
  EXPECT_EQ(p.dstate[0].wchan, "os_acquire_rwlock_read");
  EXPECT_TRUE(p.dstate[0].nvidia_tool);
  EXPECT_EQ(p.dstate[0].ran_in_window, false);  // sched counters did not move
  EXPECT_EQ(p.dstate[0].cpu, 0);
  // Against CPU 0's own task clock (thread-self/sched), not /proc/uptime, which runs 6 s ahead.
  ASSERT_TRUE(p.dstate[0].stuck_s);
  EXPECT_NEAR(*p.dstate[0].stuck_s, 300.0, 0.01);
  EXPECT_FALSE(p.truncated);
  EXPECT_EQ(p.dstate[1].pid, 4300);
  EXPECT_EQ(p.dstate[1].tid, 4305);
  EXPECT_EQ(p.dstate[1].comm, "python3");
  EXPECT_EQ(p.dstate[1].thread_comm, "pt_autograd_0");
  EXPECT_FALSE(p.dstate[1].nvidia_tool);
  EXPECT_TRUE(p.dstate[1].nvidia_wait);
  EXPECT_EQ(p.dstate[2].comm, "ls");
  EXPECT_FALSE(p.dstate[2].nvidia_tool || p.dstate[2].nvidia_wait);

  auto findings = EvaluateRules(s, Thresholds());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "proc.dstate");
  EXPECT_EQ(findings[0].severity, Severity::kCrit);
  EXPECT_NE(findings[0].summary.find("nvidia-smi"), std::string::npos);
}

// The kernel stack decides "inside the driver" where wchan is generic; a parent waiting in
// kernel_clone for its vfork child is never read as in the driver (nor is its stack read).
TEST(ProcessProbeTest, NvidiaStackFrameAndForkWait) {
  HostFixture fx("dstate-nvidia-smi");
  const std::string nvidia_stack =
      "[<0>] __schedule+0x2f0/0x8f0\n[<0>] schedule+0x5a/0xd0\n"
      "[<0>] os_acquire_mutex+0x3c/0x70 [nvidia]\n[<0>] _nv012345rm+0x11/0x20 [nvidia]\n";
  for (const char* d : {"proc/4400", "proc/4400/task/4400"}) {
    fx.Write(std::string(d) + "/wchan", "schedule");
    fx.Write(std::string(d) + "/stack", nvidia_stack);
  }
  for (const char* d : {"proc/4242", "proc/4242/task/4242"}) {
    fx.Write(std::string(d) + "/wchan", "kernel_clone");
    fx.Write(std::string(d) + "/stack", nvidia_stack);
  }
  Snapshot s = Apply(RunProcessProbe(Context(fx.fs(), 50)));
  ASSERT_TRUE(s.host.processes);
  const StuckProcess* ls = nullptr;
  const StuckProcess* smi = nullptr;
  for (const auto& t : s.host.processes->dstate) {
    if (t.pid == 4400) ls = &t;
    if (t.pid == 4242) smi = &t;
  }
  ASSERT_NE(ls, nullptr);
  ASSERT_NE(smi, nullptr);
  EXPECT_TRUE(ls->nvidia_wait) << "an NVIDIA frame on the stack is evidence";
  EXPECT_EQ(smi->wchan, "kernel_clone");
  EXPECT_TRUE(smi->nvidia_tool);
  EXPECT_FALSE(smi->nvidia_wait) << "a parent in kernel_clone waits for its child";
}

TEST(ProcessProbeTest, IoBoundTasksInDAreNotStuck) {
  HostFixture fx("heavy-iowait");
  ASSERT_EQ(fx.ArmSecondSamples(), 7);  // stat, vmstat and 5 sched files of the D tasks
  Snapshot s = Apply(RunProcessProbe(Context(fx.fs(), 50)));
  ASSERT_TRUE(s.host.processes);
  EXPECT_EQ(s.host.processes->dstate_count, 3);  // python3, its loader thread, jbd2
  for (const StuckProcess& t : s.host.processes->dstate) {
    EXPECT_EQ(t.ran_in_window, true) << t.tid;  // sum_exec_runtime and nr_switches moved
    EXPECT_FALSE(t.stuck_s) << t.tid;
  }
  EXPECT_FALSE(HasFinding(EvaluateRules(s, Thresholds()), "proc.dstate"));
}

// The review case: per-CPU task clocks drift apart (755 ms after 46 min on a 2-CPU VM), so our
// thread's clock can be far ahead of the one a task last ran on. A task that keeps running
// through short D sleeps must not look stuck however far the clocks are apart.
TEST(ProcessProbeTest, ClockDriftDoesNotMakeRunningTaskStuck) {
  HostFixture fx("heavy-iowait");
  fx.Write("proc/thread-self/sched", SchedAt(kFixtureSchedNowMs + 40000));  // 40 s ahead
  fx.ArmSecondSamples();
  Snapshot s = Apply(RunProcessProbe(Context(fx.fs(), 50)));
  ASSERT_TRUE(s.host.processes);
  EXPECT_EQ(s.host.processes->dstate_count, 3);
  EXPECT_FALSE(HasFinding(EvaluateRules(s, Thresholds()), "proc.dstate"));
}

// A task whose last CPU this thread cannot run on (outside the cpuset) gets no estimate: its
// clock is not comparable with ours. It still shows it did not run during the window.
TEST(ProcessProbeTest, NoEstimateWithoutTheTasksCpuClock) {
  HostFixture fx("dstate-nvidia-smi");
  std::string stat = "4242 (nvidia-smi) D 4100";
  for (int field = 5; field <= 38; ++field) stat += " 0";
  stat += " 4000 0 0\n";  // field 39: CPU 4000
  fx.Write("proc/4242/stat", stat);
  Snapshot s = Apply(RunProcessProbe(Context(fx.fs(), 50)));
  ASSERT_TRUE(s.host.processes);
  auto it = std::find_if(s.host.processes->dstate.begin(), s.host.processes->dstate.end(),
                         [](const StuckProcess& t) { return t.pid == 4242; });
  ASSERT_NE(it, s.host.processes->dstate.end());
  EXPECT_EQ(it->cpu, 4000);
  EXPECT_EQ(it->ran_in_window, false);
  EXPECT_FALSE(it->stuck_s);
  // 50 ms without running is no evidence of being stuck for min_stuck_s (10 s): nvidia-smi is
  // not counted; the UVM thread (280 s on CPU 0) still is.
  auto findings = EvaluateRules(s, Thresholds());
  for (const Finding& f : findings) {
    if (f.id != "proc.dstate") continue;
    EXPECT_EQ(f.summary.find("nvidia-smi"), std::string::npos) << f.summary;
  }
}

TEST(ProcessProbeTest, EstimateLongerThanUptimeIsDropped) {
  HostFixture fx("dstate-nvidia-smi");
  fx.Write("proc/thread-self/sched", SchedAt(kFixtureUptimeS * 1000 * 3));
  Snapshot s = Apply(RunProcessProbe(Context(fx.fs(), 50)));
  ASSERT_TRUE(s.host.processes);
  ASSERT_EQ(s.host.processes->dstate_count, 3);
  for (const StuckProcess& t : s.host.processes->dstate) EXPECT_FALSE(t.stuck_s) << t.tid;
  EXPECT_FALSE(HasFinding(EvaluateRules(s, Thresholds()), "proc.dstate"));
}

TEST(ProcessProbeTest, ScanStopsAtTheDeadline) {
  TempDir dir;
  for (int pid = 1; pid <= 1000; ++pid) {
    dir.Write("proc/" + std::to_string(pid) + "/stat",
              std::to_string(pid) + " (worker) Z 1 0 0 0\n");
  }
  auto settings = std::make_shared<Settings>();
  settings->fs = RootFs(dir.path() + "/proc", dir.path() + "/sys", dir.path());
  settings->sample_ms = 250;
  // Deadline already gone: the probe must return what it has instead of reading everything.
  Snapshot s = Apply(RunProcessProbe(ProbeContext{settings, SteadyClock::now()}));
  ASSERT_TRUE(s.host.processes);
  const ProcessFacts& p = *s.host.processes;
  EXPECT_TRUE(p.truncated);
  EXPECT_GT(p.total, 0);
  EXPECT_LT(p.total, 1000);
  EXPECT_EQ(p.zombie_count, p.total);
  // With time left, the same tree is read whole.
  Snapshot full =
      Apply(RunProcessProbe(ProbeContext{settings, SteadyClock::now() + std::chrono::seconds(30)}));
  ASSERT_TRUE(full.host.processes);
  EXPECT_FALSE(full.host.processes->truncated);
  EXPECT_EQ(full.host.processes->total, 1000);
}

TEST(ProcessProbeTest, TaskThatLeavesDDuringWindowIsNotCounted) {
  HostFixture fx("dstate-nvidia-smi");
  fx.Write("proc/4242/stat.next", "4242 (nvidia-smi) S 4100 4242 4242 0 -1 4194560 1234 0 0 0\n");
  fx.ArmSecondSamples();
  Snapshot s = Apply(RunProcessProbe(Context(fx.fs(), 300)));
  ASSERT_TRUE(s.host.processes);
  EXPECT_EQ(s.host.processes->dstate_count, 2);
  for (const auto& t : s.host.processes->dstate) EXPECT_NE(t.pid, 4242);
}

// `check` (a SharedSamples in the context): the probe takes its leaders from the walk the sockets
// and suspicious probes share at the window's start instead of walking /proc again, and reports
// the same facts as its own walk on every process fixture, D tasks in multi-threaded processes
// included.
TEST(ProcessProbeTest, CheckUsesTheSharedWalkWithTheSameFacts) {
  int fixtures_with_d = 0;
  for (const char* name : {"healthy", "dstate-nvidia-smi", "heavy-iowait", "swap-storm"}) {
    SCOPED_TRACE(name);
    HostFixture fx(name);
    // A thread in D inside a multi-threaded process (read through task/, not the shared walk).
    if (std::filesystem::exists(fx.proc() + "/1500/stat"))
      fx.Write("proc/1500/task/1502/stat",
               "1502 (cuda-EvtHandlr) D 1 1502 1502 0 -1 4194560 1234 0 0 0 15 7 0 0 20 0 3 0 5000 "
               "123456789 2345 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
    Snapshot own = Apply(RunProcessProbe(Context(fx.fs(), 50)));
    ProbeContext ctx = Context(fx.fs(), 50);
    ctx.shared = std::make_shared<SharedSamples>(fx.fs(), ctx.deadline);
    Snapshot shared = Apply(RunProcessProbe(ctx));
    EXPECT_EQ(ctx.shared->proc_walks(), 1);
    ASSERT_TRUE(own.host.processes);
    ASSERT_TRUE(shared.host.processes);
    const ProcessFacts& a = *own.host.processes;
    const ProcessFacts& b = *shared.host.processes;
    EXPECT_GT(a.total, 0);
    EXPECT_EQ(b.total, a.total);
    EXPECT_EQ(b.tasks_scanned, a.tasks_scanned);
    EXPECT_EQ(b.zombie_count, a.zombie_count);
    EXPECT_EQ(b.truncated, a.truncated);
    ASSERT_EQ(b.dstate_count, a.dstate_count);
    if (a.dstate_count > 0) ++fixtures_with_d;
    ASSERT_EQ(b.dstate.size(), a.dstate.size());
    for (size_t i = 0; i < a.dstate.size(); ++i) {
      EXPECT_EQ(b.dstate[i].pid, a.dstate[i].pid);
      EXPECT_EQ(b.dstate[i].tid, a.dstate[i].tid);
      EXPECT_EQ(b.dstate[i].comm, a.dstate[i].comm);
      EXPECT_EQ(b.dstate[i].thread_comm, a.dstate[i].thread_comm);
      EXPECT_EQ(b.dstate[i].wchan, a.dstate[i].wchan);
      EXPECT_EQ(b.dstate[i].nvidia_tool, a.dstate[i].nvidia_tool);
      EXPECT_EQ(b.dstate[i].nvidia_wait, a.dstate[i].nvidia_wait);
    }
    std::vector<Finding> fa = EvaluateRules(own, Thresholds());
    std::vector<Finding> fb = EvaluateRules(shared, Thresholds());
    ASSERT_EQ(fb.size(), fa.size());
    for (size_t i = 0; i < fa.size(); ++i) EXPECT_EQ(fb[i].id, fa[i].id);
  }
  // The leaders come from the shared walk, not from a walk of the probe's own: a process whose
  // stat is gone after that walk is still counted (it was there at the window's start).
  HostFixture fx("healthy");
  ProbeContext ctx = Context(fx.fs(), 0);
  ctx.shared = std::make_shared<SharedSamples>(fx.fs(), ctx.deadline);
  ASSERT_EQ(ctx.shared->ProcessesBefore().processes.size(), 7u);
  std::filesystem::remove(fx.proc() + "/3000/stat");
  Snapshot s = Apply(RunProcessProbe(ctx));
  ASSERT_TRUE(s.host.processes);
  EXPECT_EQ(s.host.processes->total, 7);
  EXPECT_EQ(ctx.shared->proc_walks(), 1);
  EXPECT_EQ(Apply(RunProcessProbe(Context(fx.fs(), 0))).host.processes->total, 6);
}

TEST(ProcessProbeTest, VanishedAndGarbledTasksAreSkipped) {
  HostFixture fx("healthy");
  fx.Write("proc/777/stat", "garbage without parens");
  fx.MakeDir("proc/778");  // exited between listing and reading: no stat file
  Snapshot s = Apply(RunProcessProbe(Context(fx.fs(), 0)));
  ASSERT_TRUE(s.host.processes);
  EXPECT_EQ(s.host.processes->total, 7);
}

}  // namespace
}  // namespace gpudoctor
