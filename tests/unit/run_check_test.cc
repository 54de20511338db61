// RunCheck: the probes on a fixture host under the deadline, the rules, findings in
// troubleshooting order.
#include "check/run_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "host_fixture.h"

namespace gpudoctor {
namespace {

std::shared_ptr<Settings> FixtureSettings(const testing::HostFixture& fx) {
  auto s = std::make_shared<Settings>();
  s->fs = fx.fs();
  s->sample_ms = 300;
  s->deadline_s = 5;
  s->only_probes = {"cpu", "memory"};
  return s;
}

TEST(RunCheckTest, JudgesTheFixtureHostWithTheSelectedProbes) {
  testing::HostFixture fx("swap-storm");
  fx.ArmSecondSamples();
  Report r = RunCheck(FixtureSettings(fx));
  // Only the probes asked for ran; their facts are in the snapshot.
  ASSERT_TRUE(r.snapshot.host.memory);
  EXPECT_EQ(r.snapshot.host.memory->oom_kill_count, 3u);
  ASSERT_EQ(r.snapshot.probes.size(), 2u);
  for (const auto& p : r.snapshot.probes) {
    EXPECT_TRUE(p.name == "cpu" || p.name == "memory") << p.name;
    EXPECT_EQ(p.state, ProbeState::kOk) << p.name << ": " << p.reason;
  }
  EXPECT_TRUE(std::any_of(r.findings.begin(), r.findings.end(), [](const Finding& f) {
    return f.id == "host.swap.active";
  })) << "a swap storm is judged";
  // Troubleshooting order: layers never go backwards, worst first within a layer.
  for (size_t i = 1; i < r.findings.size(); ++i) {
    const Finding& a = r.findings[i - 1];
    const Finding& b = r.findings[i];
    ASSERT_LE(static_cast<int>(a.layer), static_cast<int>(b.layer)) << a.id << " before " << b.id;
    if (a.layer == b.layer) {
      EXPECT_GE(a.severity, b.severity) << a.id << " before " << b.id;
    }
  }
  EXPECT_GT(r.duration_ms, 250) << "the CPU and memory probes sample over 300 ms";
  EXPECT_LT(r.duration_ms, 5000);
}

// Time already spent before RunCheck (loading the config) counts against the deadline, and the
// probes are cut short by it, not waited for: a 3-s sampling window with 100 ms left.
TEST(RunCheckTest, TheDeadlineCountsFromTheGivenStart) {
  testing::HostFixture fx("healthy");
  auto s = FixtureSettings(fx);
  s->deadline_s = 1;
  s->sample_ms = 3000;
  TimePoint start = SteadyClock::now() - std::chrono::milliseconds(900);
  Report r = RunCheck(s, start);
  EXPECT_GE(r.duration_ms, 900) << "duration is measured from `start`";
  EXPECT_LT(r.duration_ms, 900 + 1000) << "the 3-s window was waited for";
  // Cut short either way: a probe recorded as not finished by the deadline, or the memory probe's
  // window ended by it (a probe whose second step returned just after the deadline, before the
  // runner looked, is recorded with its facts: which of the two happens is a matter of timing).
  bool cut_short = false;
  for (const auto& p : r.snapshot.probes) cut_short = cut_short || p.state != ProbeState::kOk;
  if (r.snapshot.host.memory && r.snapshot.host.memory->window_s) {
    EXPECT_LT(*r.snapshot.host.memory->window_s, 1.0);
    cut_short = true;
  }
  EXPECT_TRUE(cut_short) << "a probe that could not finish by the deadline is recorded as such";
}

}  // namespace
}  // namespace gpudoctor
