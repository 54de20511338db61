// Rule tests for proc.dstate and proc.zombies: Snapshot in, findings out.
#include <gtest/gtest.h>

#include "finding_test_util.h"
#include "rules/engine.h"

namespace gpudoctor {
namespace {

using testing::EvidenceOf;

StuckProcess Task(int pid, std::string comm, std::string wchan, std::optional<double> stuck_s,
                  bool nvidia = false) {
  StuckProcess p;
  p.pid = p.tid = pid;
  p.comm = std::move(comm);
  p.wchan = std::move(wchan);
  p.ran_in_window = false;  // its run counters did not move between the samples
  p.stuck_s = stuck_s;
  p.nvidia_tool = nvidia;
  return p;
}

Snapshot WithTasks(std::vector<StuckProcess> tasks, double window_s = 0.25) {
  Snapshot s;
  ProcessFacts p;
  p.total = 500;
  p.dstate_count = static_cast<int>(tasks.size());
  p.dstate = std::move(tasks);
  p.window_s = window_s;
  s.host.processes = p;
  return s;
}

std::optional<Finding> Find(const std::vector<Finding>& f, std::string_view id) {
  for (const auto& x : f) {
    if (x.id == id) return x;
  }
  return std::nullopt;
}

TEST(ProcessRulesTest, HealthyNoFinding) {
  EXPECT_TRUE(EvaluateRules(WithTasks({}), Thresholds()).empty());
}

TEST(ProcessRulesTest, ShortIoWaitsAreNotStuck) {
  // In D at both samples but ran 4 ms ago: ordinary disk I/O.
  auto f = EvaluateRules(WithTasks({Task(10, "python3", "io_schedule", 0.004),
                                    Task(11, "jbd2/md0-8", "jbd2_journal_commit", 9.99)}),
                         Thresholds());
  EXPECT_TRUE(f.empty());
}

TEST(ProcessRulesTest, StuckNonNvidiaTaskIsWarn) {
  auto f = EvaluateRules(WithTasks({Task(10, "tar", "io_schedule", 10.0)}), Thresholds());
  auto d = Find(f, "proc.dstate");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->severity, Severity::kWarn);
  EXPECT_EQ(*EvidenceOf<int64_t>(*d, "stuck_count"), 1);
  EXPECT_EQ(*EvidenceOf<std::string>(*d, "task1_comm"), "tar");
  EXPECT_DOUBLE_EQ(*EvidenceOf<double>(*d, "task1_stuck_s"), 10.0);
}

TEST(ProcessRulesTest, NvidiaToolIsCritWithSpecificAdvice) {
  StuckProcess t = Task(4242, "nvidia-smi", "os_acquire_rwlock_read", 300.0, /*nvidia=*/true);
  t.nvidia_wait = true;  // the probe's verdict for a driver wchan (os_acquire*)
  Snapshot snap = WithTasks({t});
  snap.host.processes->nvidia_module_loaded = true;
  auto f = EvaluateRules(snap, Thresholds());
  auto d = Find(f, "proc.dstate");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->severity, Severity::kCrit);
  EXPECT_EQ(d->action, Action::kDrainReset);
  EXPECT_NE(d->summary.find("nvidia-smi (pid 4242) in os_acquire_rwlock_read"), std::string::npos)
      << d->summary;
  EXPECT_NE(d->next_steps.front().find("Xid"), std::string::npos);
  EXPECT_EQ(*EvidenceOf<int64_t>(*d, "nvidia_stuck_count"), 1);
}

// Issue 8 item 4: a task's name alone does not put it inside the driver.
TEST(ProcessRulesTest, NvidiaToolNameAloneIsNotInsideTheDriver) {
  Snapshot snap = WithTasks({Task(4242, "nvidia-smi", "rpc_wait_bit_killable", 300.0, true)});
  snap.host.processes->nvidia_module_loaded = false;
  auto d = Find(EvaluateRules(snap, Thresholds()), "proc.dstate");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->severity, Severity::kWarn);
  EXPECT_EQ(*EvidenceOf<int64_t>(*d, "nvidia_stuck_count"), 0);
  EXPECT_EQ(d->summary.find("including NVIDIA"), std::string::npos) << d->summary;
  for (const auto& step : d->next_steps) {
    EXPECT_EQ(step.find("inside the NVIDIA driver"), std::string::npos) << step;
    EXPECT_EQ(step.find("inside the driver"), std::string::npos) << step;
  }
  std::string all;
  for (const auto& step : d->next_steps) all += step + "\n";
  EXPECT_NE(all.find("rpc_wait_bit_killable (a network filesystem wait)"), std::string::npos)
      << all;
  EXPECT_NE(all.find("nvidia module is not loaded"), std::string::npos) << all;
  // Unknown module state and no driver wchan: still not "inside the driver".
  Snapshot unknown = WithTasks({Task(4243, "nvidia-smi", "", 300.0, true)});
  auto u = Find(EvaluateRules(unknown, Thresholds()), "proc.dstate");
  ASSERT_TRUE(u);
  EXPECT_NE(u->next_steps.front().find("unknown kernel function"), std::string::npos)
      << u->next_steps.front();
  // A driver function as wchan is enough on its own.
  StuckProcess t = Task(4244, "python3", "os_acquire_rwlock_read", 300.0);
  t.nvidia_wait = true;
  auto w = Find(EvaluateRules(WithTasks({t}), Thresholds()), "proc.dstate");
  ASSERT_TRUE(w);
  EXPECT_NE(w->next_steps.front().find("inside the NVIDIA driver"), std::string::npos);
}

// An nvidia-smi parent waiting in kernel_clone for its vfork child waits for the child: not "in
// the driver", even with the module loaded, and no reason to drain.
TEST(ProcessRulesTest, ParentWaitingForItsChildIsNotInTheDriver) {
  Snapshot snap = WithTasks({Task(5000, "nvidia-smi", "kernel_clone", 120.0, /*nvidia=*/true)});
  snap.host.processes->nvidia_module_loaded = true;
  auto d = Find(EvaluateRules(snap, Thresholds()), "proc.dstate");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->severity, Severity::kWarn);
  EXPECT_EQ(d->action, Action::kWatch);
  EXPECT_EQ(*EvidenceOf<int64_t>(*d, "nvidia_stuck_count"), 0);
  EXPECT_EQ(d->summary.find("including NVIDIA"), std::string::npos) << d->summary;
  for (const auto& step : d->next_steps) {
    EXPECT_EQ(step.find("inside the NVIDIA driver"), std::string::npos) << step;
  }
}

TEST(ProcessRulesTest, DriverWaitCountsAsNvidia) {
  StuckProcess t = Task(4300, "python3", "uvm_gpu_retain_by_uuid", 280.0);
  t.tid = 4305;
  t.thread_comm = "pt_autograd_0";
  t.nvidia_wait = true;
  auto d = Find(EvaluateRules(WithTasks({t}), Thresholds()), "proc.dstate");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->severity, Severity::kCrit);
  EXPECT_EQ(*EvidenceOf<int64_t>(*d, "task1_tid"), 4305);
  EXPECT_NE(d->summary.find("thread 4305 'pt_autograd_0'"), std::string::npos) << d->summary;
}

TEST(ProcessRulesTest, CountThresholdMakesCrit) {
  std::vector<StuckProcess> nine, ten;
  for (int i = 0; i < 10; ++i) {
    (i < 9 ? nine : ten).push_back(Task(100 + i, "cp", "io_schedule", 60));
  }
  ten.insert(ten.end(), nine.begin(), nine.end());
  EXPECT_EQ(Find(EvaluateRules(WithTasks(nine), Thresholds()), "proc.dstate")->severity,
            Severity::kWarn);
  EXPECT_EQ(Find(EvaluateRules(WithTasks(ten), Thresholds()), "proc.dstate")->severity,
            Severity::kCrit);
}

TEST(ProcessRulesTest, NfsWaitGetsStorageAdvice) {
  auto d =
      Find(EvaluateRules(WithTasks({Task(4400, "ls", "rpc_wait_bit_killable", 45)}), Thresholds()),
           "proc.dstate");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->severity, Severity::kWarn);
  EXPECT_NE(d->next_steps.front().find("rpc_wait_bit_killable"), std::string::npos);
  EXPECT_NE(d->next_steps.front().find("NFS"), std::string::npos);
  EXPECT_EQ(*EvidenceOf<int64_t>(*d, "network_fs_stuck_count"), 1);
}

TEST(ProcessRulesTest, TaskThatRanIsNeverStuck) {
  // In D at both samples with an old-looking exec_start, but it got the CPU in between: the
  // exec_start gap is clock drift between CPUs, not a hang.
  auto t = Task(4242, "nvidia-smi", "os_acquire_rwlock_read", 300.0, true);
  t.ran_in_window = true;
  EXPECT_TRUE(EvaluateRules(WithTasks({t}, 20.0), Thresholds()).empty());
}

TEST(ProcessRulesTest, NoRunCountersNoEvidence) {
  auto t = Task(4242, "nvidia-smi", "os_acquire_rwlock_read", 300.0, true);
  t.ran_in_window = std::nullopt;
  EXPECT_TRUE(EvaluateRules(WithTasks({t}, 20.0), Thresholds()).empty());
}

TEST(ProcessRulesTest, TruncatedScanIsInTheEvidence) {
  Snapshot s = WithTasks({Task(10, "tar", "io_schedule", 30.0)});
  s.host.processes->zombie_count = 250;
  s.host.processes->tasks_scanned = 127;
  s.host.processes->truncated = true;
  auto findings = EvaluateRules(s, Thresholds());
  for (std::string_view id : {"proc.dstate", "proc.zombies"}) {
    auto f = Find(findings, id);
    ASSERT_TRUE(f) << id;
    EXPECT_EQ(EvidenceOf<bool>(*f, "scan_truncated"), true) << id;
    EXPECT_EQ(EvidenceOf<int64_t>(*f, "tasks_scanned"), 127) << id;
  }
  s.host.processes->truncated = false;
  auto whole = Find(EvaluateRules(s, Thresholds()), "proc.dstate");
  ASSERT_TRUE(whole);
  EXPECT_FALSE(EvidenceOf<bool>(*whole, "scan_truncated"));
}

TEST(ProcessRulesTest, UnknownDurationNeedsLongWindow) {
  // It did not run during the window but its CPU's clock was not readable: the window length is
  // the only evidence of duration, even for an NVIDIA tool (a driver call may wait seconds on a
  // lock while another tool initialises the GPUs).
  auto t = Task(4242, "nvidia-smi", "", std::nullopt, true);
  EXPECT_TRUE(EvaluateRules(WithTasks({t}, 0.25), Thresholds()).empty());
  auto d = Find(EvaluateRules(WithTasks({t}, 10.0), Thresholds()), "proc.dstate");
  ASSERT_TRUE(d);
  EXPECT_EQ(*EvidenceOf<std::string>(*d, "task1_wchan"), "unknown");
}

TEST(ProcessRulesTest, MinStuckFromConfig) {
  Thresholds t;
  t.Set("proc.dstate", "min_stuck_s", 0.001);
  EXPECT_TRUE(Find(EvaluateRules(WithTasks({Task(10, "python3", "io_schedule", 0.004)}), t),
                   "proc.dstate"));
}

TEST(ProcessRulesTest, ZombieBoundary) {
  Snapshot s = WithTasks({});
  s.host.processes->zombie_count = 199;
  EXPECT_TRUE(EvaluateRules(s, Thresholds()).empty());
  s.host.processes->zombie_count = 200;
  auto z = Find(EvaluateRules(s, Thresholds()), "proc.zombies");
  ASSERT_TRUE(z);
  EXPECT_EQ(z->severity, Severity::kWarn);
  EXPECT_EQ(*EvidenceOf<int64_t>(*z, "zombie_count"), 200);
}

}  // namespace
}  // namespace gpudoctor
