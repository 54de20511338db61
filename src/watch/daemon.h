// WatchDaemon: one tick of `gpudoctor watch` at a time (issue 9): run the due probes
// (ProbeScheduler), judge the snapshot with the same rules as `check`, follow findings through
// their lifecycle (finding_lifecycle.h), derive history events, hand the immutable TickResult
// to the store and to listeners (HTTP server, notifiers), and keep it as the latest.
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
#include "watch/counter_window.h"
#include "watch/daemon_health.h"
#include "watch/history_store.h"
#include "watch/probe_scheduler.h"
#include "watch/tick_events.h"
#include "watch/watch_types.h"
#include "watch/xid_ledger.h"

namespace gpudoctor {

struct WatchOptions {
  double interval_s = 1;        // fast probes
  double slow_interval_s = 30;  // slow probes (disk, pci_gpu, suspicious, reachability)
  double rate_window_s = 300;   // counter rates (ECC, replays, NVLink) over this window
};

class WatchDaemon {
 public:
  using Listener = std::function<void(const std::shared_ptr<const TickResult>&)>;

  // `store` may be null (no history). `stored` seeds the lifecycle and the reboot check with
  // what the history already knows (open findings, the last boot id).
  WatchDaemon(std::shared_ptr<const Settings> settings, WatchOptions options, HistoryStore* store,
              std::vector<TrackedFinding> stored_findings, std::string stored_boot_id);
  ~WatchDaemon();

  // Runs one tick now and publishes it. Returns by about interval_s whatever the probes do.
  std::shared_ptr<const TickResult> Tick();
  // The last published tick; null before the first.
  std::shared_ptr<const TickResult> Latest() const;
  // Called after each tick, on the tick thread; must not block (queue work elsewhere).
  void AddListener(Listener listener);
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
  HistoryStore* store_;
  ProbeScheduler scheduler_;
  CadencePlan cadence_;
  CounterWindow counters_;
  std::vector<TrackedFinding> tracked_;
  // Per GPU (identity key): the utilisation of the last ticks, for the static-batching pattern.
  std::map<std::string, std::deque<double>> util_history_;
  std::string stored_boot_id_;
  std::string last_boot_id_;
  EventBaseline baseline_;
  ClockStepDetector clock_;  // wall-clock steps: an event and gpudoctor.clock.step
  XidLedger xids_;
  uint64_t tick_ = 0;
  TimePoint started_;
  std::vector<Listener> listeners_;
  mutable std::mutex latest_mu_;
  std::shared_ptr<const TickResult> latest_;
};

// Appends gpu.util.sawtooth for GPUs whose utilisation over the last ticks (kept in `history`,
// per GPU identity, the newest value from `snap`) shows the busy/idle cycles of static batching.
void AddSawToothFindings(const Snapshot& snap, std::map<std::string, std::deque<double>>& history,
                         std::vector<Finding>& findings);

// /proc/sys/kernel/random/boot_id through the settings' RootFs; empty when unreadable.
std::string ReadBootId(const Settings& settings);

}  // namespace gpudoctor
