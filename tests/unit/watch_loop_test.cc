// The watch loop's rhythm and controls, on a fake clock: no test here sleeps.
#include "watch/watch_loop.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <vector>

namespace gpudoctor {
namespace {

// A clock that moves only when the loop waits or a tick "takes time"; controls scheduled at
// fake times wake the wait early.
class FakeWaiter : public LoopWaiter {
 public:
  TimePoint Now() override {
    return TimePoint() +
           std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(now_s));
  }
  LoopControl Wait(double seconds) override {
    waits.push_back(seconds);
    double until = now_s + seconds;
    auto next = controls.lower_bound(now_s);
    if (next != controls.end() && next->first <= until) {
      now_s = next->first;
      LoopControl c = next->second;
      controls.erase(next);
      return c;
    }
    now_s = until;
    return LoopControl::kTimeout;
  }
  double now_s = 0;
  std::map<double, LoopControl> controls;  // fake time → control delivered then
  std::vector<double> waits;
};

TEST(WatchLoopTest, TicksKeepTheirRhythmFromEachTicksStart) {
  FakeWaiter w;
  std::vector<double> starts;
  WatchLoopHooks hooks;
  hooks.tick = [&] {
    starts.push_back(w.now_s);
    w.now_s += 0.25;  // a tick takes a quarter of the interval
  };
  EXPECT_EQ(RunWatchLoop(w, 1.0, 4, hooks), 4);
  ASSERT_EQ(starts.size(), 4u);
  for (size_t i = 0; i < starts.size(); ++i) EXPECT_NEAR(starts[i], static_cast<double>(i), 1e-9);
  for (double wait : w.waits) EXPECT_NEAR(wait, 0.75, 1e-9);
}

TEST(WatchLoopTest, ALateTickStartsTheNextAtOnceWithoutCatchUpBurst) {
  FakeWaiter w;
  std::vector<double> starts;
  WatchLoopHooks hooks;
  hooks.tick = [&] {
    starts.push_back(w.now_s);
    w.now_s += starts.size() == 1 ? 3.5 : 0.1;  // the first tick overruns three intervals
  };
  RunWatchLoop(w, 1.0, 3, hooks);
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_NEAR(starts[1], 3.5, 1e-9) << "next tick at once after a late one";
  EXPECT_NEAR(starts[2], 4.5, 1e-9) << "then the rhythm again, not three ticks to catch up";
}

TEST(WatchLoopTest, StopEndsTheWaitAndNoFurtherTickRuns) {
  FakeWaiter w;
  w.controls[2.4] = LoopControl::kStop;
  int ticks = 0;
  WatchLoopHooks hooks;
  hooks.tick = [&] { ++ticks; };
  EXPECT_EQ(RunWatchLoop(w, 1.0, 0, hooks), 3);  // ticks at 0, 1, 2; stopped at 2.4
  EXPECT_EQ(ticks, 3);
  EXPECT_NEAR(w.now_s, 2.4, 1e-9) << "stopped when the signal came, not at the next tick";
}

TEST(WatchLoopTest, ReloadKeepsWaitingAndANewIntervalAppliesToTheWaitInProgress) {
  FakeWaiter w;
  w.controls[0.5] = LoopControl::kReload;
  w.controls[7.0] = LoopControl::kStop;
  std::vector<double> starts;
  int reloads = 0;
  WatchLoopHooks hooks;
  hooks.tick = [&] { starts.push_back(w.now_s); };
  hooks.reload = [&] {
    ++reloads;
    return 3.0;  // the new config ticks every 3 s
  };
  RunWatchLoop(w, 1.0, 0, hooks);
  EXPECT_EQ(reloads, 1);
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_NEAR(starts[0], 0, 1e-9);
  EXPECT_NEAR(starts[1], 3.0, 1e-9) << "the reload at 0.5 s stretched the wait to 3 s";
  EXPECT_NEAR(starts[2], 6.0, 1e-9);
}

}  // namespace
}  // namespace gpudoctor
