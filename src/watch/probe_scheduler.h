// ProbeScheduler: runs the registered probes tick after tick for `watch`.
//
// - Fast probes run every tick; slow probes when Tick() is told so (every slow_interval_s, see
//   CadencePlan). Between runs of a slow probe its last facts are applied again, so every
//   Snapshot carries the latest facts of every probe.
// - Each probe gets the carry its previous run returned (ProbeContext::previous), so it samples
//   once per tick and diffs against the last one: no sampling sleep inside a tick.
// - A probe still running from an earlier tick is not started again: it is recorded as
//   `timeout` ("still running since tick N") and nothing waits on it. When it returns later,
//   its result and carry are taken on the next tick.
// - Tick() returns by its deadline whatever the probes do.
// - Threads: a probe marked ProbeSpec::cannot_hang runs on the calling thread, no worker and
//   no deadline. The others run one after another on one worker (core/job_lane.h), started
//   before the inline ones, quickest last run first: one hand-off a tick instead of one per
//   probe. A tick with a probe's first run (the first tick; costs unknown: NVML init, ...)
//   gives each probe a worker instead. A probe that runs 100 ms (a quarter of the time to the
//   deadline on short ticks) has the probes queued behind it moved to a fresh worker, so a
//   stuck probe delays the others by that much at most; a probe still queued at the deadline
//   did not start this tick (recorded `timeout`, "not started within the tick") and is
//   started on the next.
// - The host's identity (hostname, boot id) of the running kernel's procfs is read on the first
//   tick, on every tick that runs the slow probes and after a settings reload, and kept in
//   between: the running kernel's boot id cannot change under a process, and a hostname set anew
//   shows within the slow interval. A procfs tree at another path (--path.procfs: a fixture,
//   another host's tree) is read every tick: its boot id may change under us (a simulated reboot).
// Thread-safety: one thread calls Tick() (the daemon's loop). Workers touch only their own
// captured state.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/kept_file.h"
#include "facts/snapshot.h"
#include "probes/probe.h"
#include "probes/runner.h"

namespace gpudoctor {

// Which probes are due: pure, driven by a caller-supplied clock (tests use a fake one).
class CadencePlan {
 public:
  CadencePlan(double interval_s, double slow_interval_s);
  // True when slow probes are due at `now_s` (seconds on any monotonic clock): on the first
  // call and then whenever slow_interval_s has passed since the last slow run.
  bool SlowDue(double now_s);
  // Seconds from now_s until the next tick should start, given when this tick started
  // (ticks keep their rhythm; a late tick starts the next one at once, never a burst).
  double SleepUntilNext(double tick_started_s, double now_s) const;
  double interval_s() const { return interval_s_; }

 private:
  double interval_s_;
  double slow_interval_s_;
  std::optional<double> last_slow_s_;
};

class ProbeScheduler {
 public:
  ProbeScheduler(std::vector<const ProbeSpec*> probes, std::shared_ptr<const Settings> settings);
  ~ProbeScheduler();

  // Runs one tick. `run_slow`: slow probes are due. Waits for the started probes until
  // `deadline` at most. Probe records: this tick's state; for slow probes not due, their last
  // record.
  Snapshot Tick(uint64_t tick, bool run_slow, TimePoint deadline);

  // New settings (SIGHUP reload); probes keep their carries.
  void UpdateSettings(std::shared_ptr<const Settings> settings);

 private:
  struct Slot;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::shared_ptr<const Settings> settings_;
  KeptFile boot_id_;  // sys/kernel/random/boot_id (kept open), read with the identity
  std::optional<HostIdentity> identity_;  // nullopt: read on the next tick
  bool identity_every_tick_ = false;      // the procfs is not the running kernel's
};

}  // namespace gpudoctor
