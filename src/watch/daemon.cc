#include "watch/daemon.h"

#include <algorithm>

#include "core/strings.h"
#include "probes/registry.h"
#include "rules/engine.h"
#include "rules/sawtooth_rule.h"
#include "rules/thresholds.h"
#include "watch/daemon_health.h"
#include "watch/finding_lifecycle.h"

namespace gpudoctor {
namespace {

int64_t UnixMs(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace

WatchDaemon::WatchDaemon(std::shared_ptr<const Settings> settings, WatchOptions options,
                         std::vector<TickSink*> sinks, std::vector<TrackedFinding> stored_findings,
                         std::string stored_boot_id)
    : settings_(settings),
      options_(options),
      sinks_(std::move(sinks)),
      scheduler_(EnabledProbes(*settings), settings),
      cadence_(options.interval_s, options.slow_interval_s),
      counters_(options.rate_window_s),
      tracked_(std::move(stored_findings)),
      stored_boot_id_(std::move(stored_boot_id)),
      started_(SteadyClock::now()) {}

WatchDaemon::~WatchDaemon() = default;

void WatchDaemon::Reload(std::shared_ptr<const Settings> settings, WatchOptions options) {
  settings_ = settings;
  scheduler_.UpdateSettings(std::move(settings));
  if (options.interval_s != options_.interval_s ||
      options.slow_interval_s != options_.slow_interval_s) {
    cadence_ = CadencePlan(options.interval_s, options.slow_interval_s);
  }
  counters_.set_window_s(options.rate_window_s);
  options_ = options;
}

void WatchDaemon::MergeAcks(const std::vector<TrackedFinding>& from_store) {
  for (TrackedFinding& t : tracked_) {
    for (const TrackedFinding& s : from_store) {
      if (s.key != t.key) continue;
      if (s.acked && !t.acked) {
        t.acked = true;
        t.acked_ms = s.acked_ms;
        t.ack_note = s.ack_note;
      }
      t.silenced_until_ms = std::max(t.silenced_until_ms, s.silenced_until_ms);
    }
  }
}

std::shared_ptr<const TickResult> WatchDaemon::Latest() const {
  std::lock_guard<std::mutex> lock(latest_mu_);
  return latest_;
}

std::shared_ptr<const TickResult> WatchDaemon::Tick() {
  TimePoint start = SteadyClock::now();
  double now_s = std::chrono::duration<double>(start - started_).count();
  ++tick_;
  // Probes get most of the interval; whatever is still running then is left running.
  double budget_s = std::max(0.2, options_.interval_s * 0.8);
  TimePoint deadline =
      start + std::chrono::duration_cast<SteadyClock::duration>(
                  std::chrono::duration<double>(std::min(budget_s, settings_->deadline_s)));

  auto result = std::make_shared<TickResult>();
  result->tick = tick_;
  Snapshot snap = scheduler_.Tick(tick_, cadence_.SlowDue(now_s), deadline);
  counters_.Apply(snap, now_s);
  result->unix_ms = UnixMs(snap.time);
  result->mono_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(start.time_since_epoch()).count();
  std::optional<int64_t> clock_step = clock_.Observe(result->unix_ms, result->mono_ms);
  xids_.Apply(snap, result->unix_ms);

  result->boot_id = snap.boot_id;
  Report& report = result->report;
  report.snapshot = std::move(snap);
  report.findings = EvaluateRules(report.snapshot, settings_->thresholds);
  for (TickSink* sink : sinks_) sink->Judge(report.findings, *result);
  clock_.AddFinding(result->mono_ms, report.findings);
  AddSawToothFindings(report.snapshot, util_history_, report.findings);
  windows_.Add(report.snapshot, now_s, Thresholds(settings_->thresholds), report.findings);
  SortFindings(report.findings);
  report.duration_ms =
      std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();
  result->points = FlattenSnapshot(report.snapshot);

  LifecycleInput in;
  in.tracked = std::move(tracked_);
  in.fired = report.findings;
  in.now_ms = result->unix_ms;
  in.mono_ms = result->mono_ms;
  in.boot_id = result->boot_id;
  in.previous_boot_id = last_boot_id_.empty() ? stored_boot_id_ : last_boot_id_;
  if (const LogTime& load = report.snapshot.kernel.last_driver_load; load.wall_us) {
    in.driver_loaded_ms = *load.wall_us / 1000;
  }
  LifecycleOutput out = StepLifecycle(in, Thresholds(settings_->thresholds));
  tracked_ = out.tracked;
  result->findings = std::move(out.tracked);
  result->transitions = std::move(out.transitions);

  result->events =
      DeriveEvents(baseline_, report.snapshot, result->boot_id, stored_boot_id_, result->unix_ms);
  if (clock_step) {
    HistoryEvent e;
    e.unix_ms = result->unix_ms;
    e.kind = "clock_step";
    e.detail = "wall clock stepped " + std::string(*clock_step > 0 ? "forward" : "back") + " by " +
               std::to_string((*clock_step > 0 ? *clock_step : -*clock_step) / 1000) +
               " s against the monotonic clock";
    result->events.push_back(std::move(e));
  }
  baseline_ = BaselineOf(report.snapshot, result->boot_id);
  last_boot_id_ = result->boot_id;

  std::shared_ptr<const TickResult> published = result;
  for (TickSink* sink : sinks_) sink->OnTick(published);
  {
    std::lock_guard<std::mutex> lock(latest_mu_);
    latest_ = published;
  }
  return published;
}

}  // namespace gpudoctor
