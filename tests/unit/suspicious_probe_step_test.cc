// The suspicious probe as a `watch` step: a run reads /proc and the socket table once, without
// sleeping the check's window, and the next run diffs against it (CPU over the time between).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "core/settings.h"
#include "facts/snapshot.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {

namespace {

TEST(SuspiciousProbeStepTest, WatchRunsDiffAgainstThePreviousRunWithoutSleeping) {
  auto settings = std::make_shared<Settings>();
  settings->sample_ms = 3000;  // `check` would sleep this long; a watch step must not
  ProbeContext ctx{settings, SteadyClock::now() + std::chrono::seconds(20)};
  ctx.continuous = true;

  auto t0 = SteadyClock::now();
  ProbeOutput first = RunSuspiciousProbe(ctx);
  EXPECT_LT(SteadyClock::now() - t0, std::chrono::milliseconds(settings->sample_ms));
  EXPECT_EQ(first.state, ProbeState::kSkipped) << first.reason;
  ASSERT_NE(first.next, nullptr);

  // Burn CPU between the runs: this process must show it over that interval.
  auto burn_until = SteadyClock::now() + std::chrono::milliseconds(400);
  volatile uint64_t spin = 0;
  while (SteadyClock::now() < burn_until) spin = spin + 1;

  ctx.previous = first.next;
  ProbeOutput second = RunSuspiciousProbe(ctx);
  ASSERT_EQ(second.state, ProbeState::kOk) << second.reason;
  EXPECT_NE(second.next, nullptr);
  Snapshot s;
  second.apply(s);
  ASSERT_TRUE(s.network.process_signs.has_value());
  EXPECT_GT(s.network.process_signs->scanned, 0);
  const auto& procs = s.network.process_signs->processes;
  auto self = std::find_if(procs.begin(), procs.end(),
                           [](const ProcessSigns& p) { return p.pid == ::getpid(); });
  ASSERT_NE(self, procs.end()) << "this busy process is not among the CPU users";
  EXPECT_GT(self->cpu_pct.value_or(0), 20.0);
}

}  // namespace
}  // namespace gpudoctor
