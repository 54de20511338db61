// `gpudoctor watch`: the same probes and rules as `check`, tick after tick (watch/watch_loop.h),
// with a history. Signals: SIGTERM/SIGINT stop after flushing the history; SIGHUP reloads the
// config (a bad new config is rejected with one log line and the old one kept). Logs: one line each
// on stderr with a syslog priority prefix (core/log.h).
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "cli/commands.h"
#include "cli/watch_services.h"
#include "core/log.h"
#include "core/strings.h"
#include "notify/notifier.h"
#include "notify/notify_spool.h"
#include "serve/http_server.h"
#include "store/client_history.h"
#include "store/expected_gpus.h"
#include "store/history_sink.h"
#include "store/history_store.h"
#include "watch/ack_poll.h"
#include "watch/cpu_placement.h"
#include "watch/daemon.h"
#include "watch/memory_upkeep.h"
#include "watch/sd_notify.h"
#include "watch/watch_loop.h"

namespace gpudoctor {
namespace {

constexpr const char* kLog = "watch";

// Open findings and the last boot id the history knows, to carry the lifecycle over a restart.
void LoadStoredState(const std::string& db, std::vector<TrackedFinding>& findings,
                     std::string& boot_id) {
  auto reader = HistoryReader::Open(db);
  if (!reader.ok()) return;
  if (auto open = (*reader)->QueryFindings({0, true}); open.ok()) findings = std::move(*open);
  if (auto events = (*reader)->QueryEvents(0); events.ok()) {
    for (const HistoryEvent& e : *events) {
      if (e.kind == "watch_started" && e.detail.rfind("boot ", 0) == 0) {
        boot_id = e.detail.substr(5);
      }
    }
  }
}

void LogTransitions(const TickResult& tick) {
  for (const auto& t : tick.transitions) {
    const Finding& f = t.finding.last;
    std::string gpu = f.gpu && f.gpu->index ? " gpu " + std::to_string(*f.gpu->index) : "";
    LogLevel level = f.severity == Severity::kCrit ? LogLevel::kError : LogLevel::kWarn;
    if (t.kind == TransitionKind::kResolved) level = LogLevel::kInfo;
    Log(level, kLog,
        std::string(TransitionKindName(t.kind)) + " " + f.id + gpu + " (" +
            SeverityName(f.severity) + "): " + f.summary);
  }
}

// The watch loop's clock and controls: the steady clock, and SIGTERM/SIGINT/SIGHUP taken
// synchronously (they are blocked in every thread) while it waits for the next tick.
class SignalWaiter : public LoopWaiter {
 public:
  explicit SignalWaiter(const sigset_t& signals) : signals_(signals) {}
  TimePoint Now() override { return SteadyClock::now(); }
  LoopControl Wait(double seconds) override {
    timespec ts;
    ts.tv_sec = static_cast<time_t>(seconds);
    ts.tv_nsec = static_cast<long>((seconds - std::floor(seconds)) * 1e9);
    int sig = sigtimedwait(&signals_, nullptr, &ts);
    if (sig == SIGTERM || sig == SIGINT) {
      LogInfo(kLog, std::string("stopping on ") + (sig == SIGTERM ? "SIGTERM" : "SIGINT"));
      return LoopControl::kStop;
    }
    return sig == SIGHUP ? LoopControl::kReload : LoopControl::kTimeout;
  }

 private:
  sigset_t signals_;
};

// Opens the history and reads what it already knows (open findings, the last boot id) to carry
// the lifecycle over a restart. The error names the database.
Result<std::unique_ptr<HistoryStore>> OpenHistory(const Settings& settings,
                                                  std::vector<TrackedFinding>& stored_findings,
                                                  std::string& stored_boot_id) {
  StoreOptions store_options;
  store_options.raw_retention_s = static_cast<int64_t>(settings.watch_raw_retention_h * 3600);
  store_options.rollup_retention_s =
      static_cast<int64_t>(settings.watch_rollup_retention_d * 86400);
  if (Status s = CheckDbPath(settings.db_path); !s.ok()) {
    return IoError("history database " + s.message());
  }
  auto opened = HistoryStore::Open(settings.db_path, store_options);
  if (!opened.ok()) {
    return IoError("history database " + settings.db_path + ": " + opened.status().message());
  }
  LoadStoredState(settings.db_path, stored_findings, stored_boot_id);
  return std::move(*opened);
}

// Queues again the notifications a previous stop spooled.
void RequeueSpooled(const std::string& spool, NotifierHub& hub) {
  auto pending = TakeNotifySpool(spool);
  if (!pending.ok()) {
    LogWarn(kLog, "notify spool: " + pending.status().message());
    return;
  }
  if (pending->empty()) return;
  size_t dropped = hub.Requeue(*pending);
  LogInfo(kLog, "notify spool: " + std::to_string(pending->size() - dropped) +
                    " undelivered notification(s) queued again" +
                    (dropped ? ", " + std::to_string(dropped) + " for removed notifiers dropped"
                             : std::string()));
}

// The stop sequence. systemd kills the unit TimeoutStopSec (20 s) after SIGTERM: the history is
// written first, then deliveries in flight get a bounded grace, and what is still undelivered is
// spooled for the next start instead of holding the exit up to a notifier's timeout_s (up to
// 600 s).
void Shutdown(HistoryStore* store, WatchServices& http, const std::string& spool) {
  if (http.server) http.server->Stop();
  if (store && !store->FlushWithin(HistoryStore::kShutdownFlush)) {
    LogError(kLog, "history: queued ticks dropped at shutdown (" + store->write_error() + ")");
  }
  if (http.hub) {
    std::vector<PendingDelivery> pending = http.hub->Shutdown(kNotifyShutdownGraceS);
    std::vector<HistoryEvent> delivered = http.hub->DrainDeliveryEvents();
    if (store) store->AppendEvents(std::move(delivered), 0);
    if (!pending.empty()) {
      if (spool.empty()) {
        LogWarn(kLog, std::to_string(pending.size()) +
                          " undelivered notification(s) lost (no history, so no spool)");
      } else if (Status s = WriteNotifySpool(spool, pending); !s.ok()) {
        LogError(kLog, "notify spool: " + s.message() + "; " + std::to_string(pending.size()) +
                           " undelivered notification(s) lost");
      } else {
        LogInfo(kLog, "notify spool: " + std::to_string(pending.size()) +
                          " undelivered notification(s) kept for the next start");
      }
    }
  }
  if (store) store->Close();
}

}  // namespace

int WatchCommand(const CliOptions& o) {
  // Signals are taken synchronously by the tick loop (sigtimedwait): block them before any
  // thread exists so every worker inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // The daemon's workers are short-lived and allocate little: glibc's default of up to 8 malloc
  // arenas per core only grows the resident set (about 1 MiB measured with 8 fake GPUs), and a
  // second arena still held 0.3-0.4 MiB more than one, at no measurable CPU cost (docs/cost.md).
  // An explicit MALLOC_ARENA_MAX in the environment still wins (it is read before main).
  if (getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 1);
  // The CPUs this process may use, before anything could narrow them (watch/cpu_placement.h).
  const cpu_set_t allowed_cpus = CpuPlacement::AllowedCpus();

  if (!o.positional.empty())
    return CouldNotRun("watch takes no arguments: '" + o.positional[0] + "'");
  auto built = BuildSettings(o);
  if (!built.ok()) return CouldNotRun(built.status().message());
  std::shared_ptr<const Settings> settings = *built;

  std::unique_ptr<HistoryStore> store;
  std::vector<TrackedFinding> stored_findings;
  std::string stored_boot_id;
  std::optional<int> history_gpus;
  if (!o.Has("--no-db")) {
    auto opened = OpenHistory(*settings, stored_findings, stored_boot_id);
    if (!opened.ok()) return CouldNotRun(opened.status().message());
    store = std::move(*opened);
    // Before the first tick writes the ledger: the GPUs the history last saw become [gpu]
    // expected_count when the config leaves it unset, for this whole run (store/expected_gpus.h).
    history_gpus =
        ReadLastSeenGpuCount(settings->db_path, SteadyClock::now() + std::chrono::seconds(2));
    auto with_history = std::make_shared<Settings>(*settings);
    if (ApplyHistoryGpuCount(*with_history, history_gpus)) {
      LogInfo(kLog, "expecting " + std::to_string(*history_gpus) +
                        " GPU(s), as the history last saw ([gpu] expected_count unset)");
      settings = with_history;
    }
  }

  WatchOptions options = WatchOptionsOf(*settings);
  std::unique_ptr<HistorySink> history_sink;
  std::vector<TickSink*> sinks;
  if (store) sinks.push_back((history_sink = std::make_unique<HistorySink>(*store)).get());
  // net.clients.degraded against each client network's own history (store/client_history.h):
  // seeded from the file, then from the daemon's own ticks. Thresholds as at start.
  ClientHistorySink client_history(
      store ? ReadClientHistory(
                  settings->db_path, static_cast<int64_t>(std::time(nullptr)),
                  settings->thresholds.Find("net.clients.degraded", "history_days").value_or(7),
                  SteadyClock::now() + std::chrono::seconds(2))
            : ClientHistory(),
      settings->thresholds);
  sinks.push_back(&client_history);
  WatchDaemon daemon(settings, options, sinks, std::move(stored_findings), stored_boot_id);
  // HTTP server and notifiers (cli/watch_services.h), rebuilt whole on SIGHUP.
  WatchServices http;
  http.history = store.get();
  auto listen_requested = [&o](const Settings& s) {
    return o.Value("--listen").has_value() || s.watch_listen != Settings().watch_listen;
  };
  if (Status s = StartWatchServices(*settings, listen_requested(*settings), daemon, http);
      !s.ok()) {
    if (store) store->Close();
    return CouldNotRun(s.message());
  }

  // Notifications a previous SIGTERM cut short are sent first.
  std::string spool = store ? NotifySpoolPath(settings->db_path) : std::string();
  if (http.hub && !spool.empty()) RequeueSpooled(spool, *http.hub);

  LogInfo(kLog, "started: interval " + FormatDouble(options.interval_s, 2) +
                    " s, slow probes every " + FormatDouble(options.slow_interval_s, 1) +
                    " s, history " + (store ? settings->db_path : std::string("off")));
  SdNotify("READY=1");
  MemoryUpkeepAfterTick(0);  // set-up is done: its code and heap are not needed again

  std::unique_ptr<HistoryReader> ack_reader;  // opened once, on the first ack poll
  AckPoll ack_poll(OperatorMarksPath(settings->db_path));
  bool first = true;
  CpuPlacement placement(settings->watch_one_cpu, allowed_cpus);
  std::optional<TimePoint> last_tick_start;
  WatchLoopHooks hooks;
  hooks.tick = [&] {
    // How late this tick starts: the loop keeps the rhythm from the previous tick's start.
    TimePoint tick_start = SteadyClock::now();
    double late_s = last_tick_start
                        ? std::chrono::duration<double>(tick_start - *last_tick_start).count() -
                              options.interval_s
                        : 0;
    last_tick_start = tick_start;
    if (std::string line = placement.OnTick(late_s); !line.empty()) LogInfo(kLog, line);
    std::shared_ptr<const TickResult> tick = daemon.Tick();
    if (first && store) {
      // Remembered so the next start can tell a reboot in between.
      HistoryEvent e;
      e.unix_ms = tick->unix_ms;
      e.kind = "watch_started";
      e.detail = "boot " + tick->boot_id;
      store->AppendEvents({e}, tick->mono_ms, tick->tick);
    }
    first = false;
    MemoryUpkeepAfterTick(tick->tick);
    LogTransitions(*tick);
    if (http.hub || !http.carried_events.empty()) {
      if (http.hub) http.hub->OnTransitions(*tick);
      std::vector<HistoryEvent> delivered = std::move(http.carried_events);
      http.carried_events.clear();
      if (http.hub) {
        std::vector<HistoryEvent> now = http.hub->DrainDeliveryEvents();
        delivered.insert(delivered.end(), now.begin(), now.end());
      }
      for (const HistoryEvent& e : delivered) {
        Log(e.kind == "notify_failed" ? LogLevel::kWarn : LogLevel::kInfo, kLog,
            e.kind + " " + e.detail);
      }
      if (store) store->AppendEvents(std::move(delivered), tick->mono_ms, tick->tick);
    }
    // Acknowledgements and silences written by `gpudoctor ack` / `silence` (other processes):
    // picked up within a few ticks of their marks file changing, so acked findings stop
    // re-notifying (watch/ack_poll.h).
    if (store && ack_poll.Due(tick->tick)) {
      if (ack_reader == nullptr) {
        if (auto r = HistoryReader::Open(settings->db_path); r.ok()) ack_reader = std::move(*r);
      }
      if (ack_reader != nullptr) {
        FindingsQuery acks{0, true};
        acks.acks_only = true;
        if (auto open = ack_reader->QueryFindings(acks); open.ok()) daemon.MergeAcks(*open);
      }
    }
    SdNotify("WATCHDOG=1");
  };
  hooks.reload = [&] {
    // Every key of the new config or none: a new server, token and notifiers are built first and
    // swapped in only when all of them worked.
    auto reloaded = BuildSettings(o);
    if (reloaded.ok()) ApplyHistoryGpuCount(**reloaded, history_gpus);
    std::vector<std::string> changed;
    Status applied = reloaded.ok()
                         ? ReloadWatchServices(*settings, **reloaded, listen_requested(**reloaded),
                                               daemon, http, &changed)
                         : reloaded.status();
    if (!applied.ok()) {
      LogError(kLog, "config reload rejected, keeping the old one: " + applied.message());
    } else {
      settings = *reloaded;
      options = WatchOptionsOf(*settings);
      placement.SetEnabled(settings->watch_one_cpu);
      daemon.Reload(settings, options);
      std::string what;
      for (const std::string& c : changed) what += (what.empty() ? "" : ", ") + c;
      LogInfo(kLog, "config reloaded" + (what.empty() ? std::string() : " (" + what + ")"));
    }
    return options.interval_s;
  };
  SignalWaiter waiter(signals);
  RunWatchLoop(waiter, options.interval_s, settings->watch_max_ticks, hooks);
  SdNotify("STOPPING=1");
  Shutdown(store.get(), http, spool);
  LogInfo(kLog, "stopped");
  return 0;
}

}  // namespace gpudoctor
