#include "watch/watch_loop.h"

#include <chrono>

#include "watch/probe_scheduler.h"

namespace gpudoctor {

int64_t RunWatchLoop(LoopWaiter& waiter, double interval_s, int64_t max_ticks,
                     const WatchLoopHooks& hooks) {
  for (int64_t ticks = 0;;) {
    TimePoint started = waiter.Now();
    hooks.tick();
    if (++ticks == max_ticks) return ticks;
    auto seconds_to_next_tick = [&] {
      double since_s = std::chrono::duration<double>(waiter.Now() - started).count();
      // The slow interval does not matter for the sleep: only the tick rhythm does.
      return CadencePlan(interval_s, interval_s).SleepUntilNext(0, since_s);
    };
    for (double wait_s = seconds_to_next_tick(); wait_s > 0; wait_s = seconds_to_next_tick()) {
      switch (waiter.Wait(wait_s)) {
        case LoopControl::kStop:
          return ticks;
        case LoopControl::kReload:
          interval_s = hooks.reload();
          break;
        case LoopControl::kTimeout:
          break;
      }
    }
  }
}

}  // namespace gpudoctor
