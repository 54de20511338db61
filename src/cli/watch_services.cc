#include "cli/watch_services.h"

#include <chrono>

#include "core/hostname.h"
#include "core/log.h"

namespace gpudoctor {
namespace {

constexpr const char* kLog = "watch";

std::vector<NotifierConfig> NotifierConfigsOf(const Settings& s) {
  std::vector<NotifierConfig> configs;
  for (const Settings::NotifySetting& n : s.notify) {
    NotifierConfig c;
    c.kind = n.kind == "exec"           ? NotifierKind::kExec
             : n.kind == "alertmanager" ? NotifierKind::kAlertmanager
                                        : NotifierKind::kWebhook;
    c.url = n.url;
    c.argv = n.argv;
    c.min_severity = ParseSeverity(n.min_severity).value_or(Severity::kWarn);
    c.timeout_s = n.timeout_s;
    configs.push_back(std::move(c));
  }
  return configs;
}

bool SameNotify(const Settings& a, const Settings& b) {
  if (a.notify.size() != b.notify.size()) return false;
  for (size_t i = 0; i < a.notify.size(); ++i) {
    const auto &x = a.notify[i], &y = b.notify[i];
    if (x.kind != y.kind || x.url != y.url || x.argv != y.argv ||
        x.min_severity != y.min_severity || x.timeout_s != y.timeout_s) {
      return false;
    }
  }
  return true;
}

Result<std::unique_ptr<NotifierHub>> MakeHub(const Settings& s) {
  std::vector<NotifierConfig> configs = NotifierConfigsOf(s);
  if (configs.empty()) return std::unique_ptr<NotifierHub>();
  NotifierHubOptions no;
  no.hostname = LocalHostname();
  return NotifierHub::Create(configs, no);
}

// The HTTP options `s` asks for, with the token read from its file.
Result<HttpOptions> HttpOptionsOf(const Settings& s) {
  HttpOptions ho;
  ho.listen = s.watch_listen;
  ho.dcgm_compat = s.watch_dcgm_compat;
  ho.interval_s = s.watch_interval_s;
  ho.plans = s.thresholds;  // [network] plan_mbps for /api/v1/report/bandwidth
  if (!s.watch_token_file.empty()) {
    auto token = ReadTokenFile(s.watch_token_file);
    if (!token.ok()) return token.status();
    ho.token = *token;
  }
  return ho;
}

// How long an API history request waits for the store to commit its queued ticks (usually a
// few milliseconds); past it the reader sees the history as last committed.
constexpr std::chrono::milliseconds kReaderCommitWait{250};

// Starts a server for `ho`; null (and logged) when the default address is busy and was not
// asked for.

Result<std::unique_ptr<WatchHttpServer>> StartServer(const HttpOptions& ho, const std::string& db,
                                                     HistoryStore* history, bool listen_requested,
                                                     const WatchDaemon& daemon) {
  auto open_reader = [db, history]() {
    if (history) (void)history->CommitQueued(kReaderCommitWait);
    return HistoryReader::Open(db);
  };
  auto server = WatchHttpServer::Start(
      ho, [&daemon] { return daemon.Latest(); }, std::move(open_reader));
  if (!server.ok()) {
    if (listen_requested) return server.status();
    LogError(kLog, "http: " + server.status().message() +
                       "; continuing without HTTP (give --listen ADDR or --listen off)");
    return std::unique_ptr<WatchHttpServer>();
  }
  LogInfo(kLog, "http: listening on " + ho.listen.substr(0, ho.listen.rfind(':')) + ":" +
                    std::to_string((*server)->port()) +
                    (ho.token.empty() ? "" : " (bearer token required)"));
  return server;
}

}  // namespace

WatchOptions WatchOptionsOf(const Settings& s) {
  WatchOptions options;
  options.interval_s = s.watch_interval_s;
  options.slow_interval_s = s.watch_slow_interval_s;
  options.rate_window_s = s.watch_rate_window_s;
  return options;
}

Status StartWatchServices(const Settings& s, bool listen_requested, const WatchDaemon& daemon,
                          WatchServices& out) {
  auto hub = MakeHub(s);
  if (!hub.ok()) return hub.status();
  out.hub = std::move(*hub);
  if (s.watch_listen == "off") return Status::Ok();
  Result<HttpOptions> ho = HttpOptionsOf(s);
  if (!ho.ok()) return ho.status();
  auto server = StartServer(*ho, s.db_path, out.history, listen_requested, daemon);
  if (!server.ok()) return server.status();
  out.server = std::move(*server);
  out.token = ho->token;
  return Status::Ok();
}

Status CheckReloadable(const Settings& a, const Settings& b) {
  auto refuse = [](const char* what) {
    return InvalidArgument(std::string(what) +
                           " cannot change while watch runs; restart it to apply");
  };
  if (a.db_path != b.db_path) return refuse("[watch] db");
  if (a.watch_raw_retention_h != b.watch_raw_retention_h) return refuse("[watch] raw_retention_h");
  if (a.watch_rollup_retention_d != b.watch_rollup_retention_d) {
    return refuse("[watch] rollup_retention_d");
  }
  if (a.nvml_lib != b.nvml_lib) return refuse("the NVML library (--nvml-lib, [gpu] library)");
  if (a.only_probes != b.only_probes || a.probe_enabled != b.probe_enabled) {
    return refuse("the probe set (--probes, [probes])");
  }
  return Status::Ok();
}

Status ReloadWatchServices(const Settings& old_settings, const Settings& next,
                           bool listen_requested, const WatchDaemon& daemon, WatchServices& live,
                           std::vector<std::string>* changed) {
  if (Status s = CheckReloadable(old_settings, next); !s.ok()) return s;
  // 1. Build every new part; nothing live is touched until all of them exist.
  std::optional<HttpOptions> ho;
  if (next.watch_listen != "off") {
    Result<HttpOptions> r = HttpOptionsOf(next);  // reads the token file again: a revoked
    if (!r.ok()) return r.status();               // token stops working now
    ho = *r;
  }
  bool notify_changed = !SameNotify(old_settings, next);
  std::unique_ptr<NotifierHub> new_hub;
  if (notify_changed) {
    auto hub = MakeHub(next);
    if (!hub.ok()) return hub.status();
    new_hub = std::move(*hub);
  }
  bool listen_changed = next.watch_listen != old_settings.watch_listen;
  std::unique_ptr<WatchHttpServer> new_server;
  if (ho && (listen_changed || live.server == nullptr)) {
    auto server = StartServer(*ho, next.db_path, live.history, listen_requested, daemon);
    if (!server.ok()) return server.status();
    new_server = std::move(*server);
  }

  // 2. Swap.
  std::vector<std::string> what;
  if (listen_changed) what.push_back("listen");
  std::string next_token = ho ? ho->token : std::string();
  if (next_token != live.token) what.push_back("token");
  live.token = next_token;
  if (old_settings.watch_dcgm_compat != next.watch_dcgm_compat) what.push_back("dcgm_compat");
  if (old_settings.watch_interval_s != next.watch_interval_s ||
      old_settings.watch_slow_interval_s != next.watch_slow_interval_s ||
      old_settings.watch_rate_window_s != next.watch_rate_window_s) {
    what.push_back("intervals");
  }
  if (notify_changed) {
    what.push_back("notify");
    // What the old notifiers had not delivered goes on with the same notifier in the new set
    // (matched by fingerprint); only deliveries of a removed notifier are dropped, and counted.
    std::vector<PendingDelivery> pending;
    if (live.hub) {
      pending = live.hub->Shutdown(0);
      std::vector<HistoryEvent> left = live.hub->DrainDeliveryEvents();
      live.carried_events.insert(live.carried_events.end(), left.begin(), left.end());
    }
    live.hub = std::move(new_hub);
    if (!pending.empty()) {
      size_t total = pending.size();
      size_t dropped = live.hub ? live.hub->Requeue(std::move(pending)) : total;
      LogInfo("watch",
              "reload: " + std::to_string(total - dropped) + " undelivered notification(s) kept" +
                  (dropped ? ", " + std::to_string(dropped) + " of removed notifiers dropped"
                           : std::string()));
    }
  }
  if (!ho) {
    if (live.server) live.server->Stop();
    live.server.reset();
  } else if (new_server) {
    if (live.server) live.server->Stop();
    live.server = std::move(new_server);
  } else {
    live.server->Reconfigure(*ho);
  }
  if (changed) *changed = std::move(what);
  return Status::Ok();
}

}  // namespace gpudoctor
