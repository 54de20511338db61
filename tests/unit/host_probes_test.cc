// Probe-level tests: each host probe runs on a copied fixture tree (tests/fixtures/hosts),
// its patch is applied to a Snapshot, and the facts are checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "host_fixture.h"
#include "probes/disk_probe.h"
#include "probes/probe.h"
#include "rules/engine.h"

namespace gpudoctor {

ProbeOutput RunCpuProbe(const ProbeContext& ctx);
ProbeOutput RunMemoryProbe(const ProbeContext& ctx);
ProbeOutput RunPressureProbe(const ProbeContext& ctx);
ProbeOutput RunDiskProbe(const ProbeContext& ctx);
ProbeOutput RunProcessProbe(const ProbeContext& ctx);

namespace {

using testing::HostFixture;
using testing::TempDir;

ProbeContext Context(const RootFs& fs, int sample_ms) {
  auto settings = std::make_shared<Settings>();
  settings->fs = fs;
  settings->sample_ms = sample_ms;
  return ProbeContext{settings, SteadyClock::now() + std::chrono::seconds(10)};
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
  EXPECT_TRUE(has("host.swap.active", Severity::kCrit));
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
  EXPECT_TRUE(std::any_of(findings.begin(), findings.end(), [](const Finding& f) {
    return f.id == "host.cpu.saturated" && f.severity == Severity::kCrit;
  }));
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
  EXPECT_TRUE(EvaluateRules(s, Thresholds()).empty());
}

TEST(ProcessProbeTest, StuckNvidiaSmiAndUvmThread) {
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
  ASSERT_TRUE(p.dstate[0].stuck_s);
  EXPECT_NEAR(*p.dstate[0].stuck_s, 300.0, 0.01);
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

TEST(ProcessProbeTest, IoBoundTasksInDAreNotStuck) {
  HostFixture fx("heavy-iowait");
  Snapshot s = Apply(RunProcessProbe(Context(fx.fs(), 20)));
  ASSERT_TRUE(s.host.processes);
  EXPECT_EQ(s.host.processes->dstate_count, 3);  // python3, its loader thread, jbd2
  auto findings = EvaluateRules(s, Thresholds());
  EXPECT_TRUE(std::none_of(findings.begin(), findings.end(),
                           [](const Finding& f) { return f.id == "proc.dstate"; }));
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
