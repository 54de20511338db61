// WatchDaemon: the watch engine, one tick at a time: run the due probes (ProbeScheduler), judge
// the snapshot with the same rules as `check`, follow findings through their lifecycle
// (finding_lifecycle.h), derive history events, hand the immutable TickResult to its sinks
// (tick_sink.h: the history store) and keep it as the latest (the HTTP server and the notifiers
// read it there).
//
// The loop (sleeping, signals) lives in the watch command; the daemon only ticks, so tests
// drive it tick by tick. Thread-safety: Tick/Reload from one thread; Latest() from any thread.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/settings.h"
#include "rules/gpu_window_rules.h"
#include "watch/counter_window.h"
#include "watch/daemon_health.h"
#include "watch/probe_scheduler.h"
#include "watch/tick_events.h"
#include "watch/tick_sink.h"
#include "watch/watch_types.h"
#include "watch/xid_ledger.h"

namespace gpudoctor {

struct WatchOptions {
  double interval_s = 1;        // fast probes
  double slow_interval_s = 30;  // slow probes (Cadence::kSlow in the probe registry)
  double rate_window_s = 300;   // counter rates (ECC, replays, NVLink) over this window
};

class WatchDaemon {
 public:
  // `sinks` (not owned, may be empty: no history) outlive the daemon. `stored_findings` and
  // `stored_boot_id` seed the lifecycle and the reboot check with what the history already knows
  // (open findings, the last boot id).
  WatchDaemon(std::shared_ptr<const Settings> settings, WatchOptions options,
              std::vector<TickSink*> sinks, std::vector<TrackedFinding> stored_findings,
              std::string stored_boot_id);
  ~WatchDaemon();

  // Runs one tick now and publishes it. Returns by about interval_s whatever the probes do.
  std::shared_ptr<const TickResult> Tick();
  // The last published tick; null before the first.
  std::shared_ptr<const TickResult> Latest() const;
  // New settings (SIGHUP): thresholds, probe options, intervals and the rate window (counter
  // reads already taken are kept); the probe set stays (the caller refuses a change of it).
  void Reload(std::shared_ptr<const Settings> settings, WatchOptions options);
  // Operator acknowledgements and silences written by other processes (`gpudoctor ack`): the
  // daemon merges acked/ack_note/silenced_until_ms of matching keys into its tracked findings.
  void MergeAcks(const std::vector<TrackedFinding>& from_store);

  const WatchOptions& options() const { return options_; }

 private:
  std::shared_ptr<const Settings> settings_;
  WatchOptions options_;
  std::vector<TickSink*> sinks_;
  ProbeScheduler scheduler_;
  CadencePlan cadence_;
  CounterWindow counters_;
  std::vector<TrackedFinding> tracked_;
  // Per GPU (identity key): the utilisation of the last ticks, for the static-batching pattern.
  std::map<std::string, std::deque<double>> util_history_;
  // Per GPU: the readings of the last minutes, for gpu.util.underused and gpu.memory.thrashing.
  GpuWindows windows_;
  std::string stored_boot_id_;
  std::string last_boot_id_;
  EventBaseline baseline_;
  ClockStepDetector clock_;  // wall-clock steps: an event and gpudoctor.clock.step
  XidLedger xids_;
  uint64_t tick_ = 0;
  TimePoint started_;
  mutable std::mutex latest_mu_;
  std::shared_ptr<const TickResult> latest_;
};

}  // namespace gpudoctor
