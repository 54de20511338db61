// WatchLoop: the rhythm of `gpudoctor watch`. It runs a tick, then waits until the next tick is
// due, waking early for the operator's controls (stop, reload), and repeats. What a tick does
// (the engine's Tick, the sinks, the notifiers) and how the loop waits (a real clock and signals
// in production, a fake clock in tests) are injected, so the loop's timing is tested without
// sleeping.
//
// Timing: ticks keep their rhythm from the start of the previous tick (CadencePlan): a tick that
// took 0.3 s of a 1 s interval is followed 0.7 s later; a tick that overran starts the next one
// at once, never a burst of catch-up ticks. A reload may change the interval; it takes effect for
// the wait in progress.
// Thread-safety: Run() on one thread; the waiter and the callbacks are called on that thread.
#pragma once

#include <cstdint>
#include <functional>

#include "core/deadline.h"

namespace gpudoctor {

// What woke the loop while it waited for the next tick.
enum class LoopControl {
  kTimeout,  // the wait ran out: the next tick is due
  kStop,     // stop after the tick in progress (SIGTERM, SIGINT)
  kReload,   // reload the configuration (SIGHUP), then keep waiting
};

// The loop's view of time and the operator: a monotonic clock and a wait that returns early on a
// control. Production: the steady clock and sigtimedwait (cli/watch_command.cc); tests: a fake.
class LoopWaiter {
 public:
  virtual ~LoopWaiter() = default;
  virtual TimePoint Now() = 0;
  // Waits up to `seconds` (> 0); returns what woke it.
  virtual LoopControl Wait(double seconds) = 0;
};

struct WatchLoopHooks {
  // Runs one tick: the engine and everything that consumes its result.
  std::function<void()> tick;
  // A reload was asked for. Returns the interval (seconds) from now on.
  std::function<double()> reload;
};

// Runs ticks every `interval_s` until a stop control, or `max_ticks` ticks when it is > 0.
// Returns the number of ticks run.
int64_t RunWatchLoop(LoopWaiter& waiter, double interval_s, int64_t max_ticks,
                     const WatchLoopHooks& hooks);

}  // namespace gpudoctor
