// The services `gpudoctor watch` runs beside its tick loop, built from Settings: the HTTP server
// and the notifiers. Started once; on SIGHUP the whole set is rebuilt from the new settings and
// swapped in only when every part of it worked (token file read, notifiers valid, the new
// address bound when it changed), so a reload applies every key or none.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/settings.h"
#include "core/status.h"
#include "notify/notifier.h"
#include "serve/http_server.h"
#include "store/history_store.h"
#include "watch/daemon.h"

namespace gpudoctor {

struct WatchServices {
  std::unique_ptr<WatchHttpServer> server;  // null: listen "off" or the default address busy
  std::unique_ptr<NotifierHub> hub;         // null: no notifiers
  std::string token;  // the bearer token served now (to tell a reload that it changed)
  // Delivery events a replaced hub had not handed over yet; the loop stores them.
  std::vector<HistoryEvent> carried_events;
  // The daemon's history (not owned; null: history off), set before StartWatchServices: the
  // HTTP API's history readers have it commit its queued ticks first, so that they see every
  // tick up to now (quiet ticks are committed in batches: StoreOptions::commit_interval_ms).
  HistoryStore* history = nullptr;
};

// The tick intervals of `s`.
WatchOptions WatchOptionsOf(const Settings& s);

// Starts the HTTP server (unless listen is "off") and the notifiers. A token file that cannot
// be read is an error (serving without the token would be open). A bind failure is an error
// ("cannot listen on ADDR: in use") when the address was asked for (`listen_requested`); on the
// built-in default address it is logged and watch goes on without HTTP.
Status StartWatchServices(const Settings& s, bool listen_requested, const WatchDaemon& daemon,
                          WatchServices& out);

// Keys a running daemon cannot take: the history database and its retention (the store is
// open), the NVML library (loaded) and the probe set. invalid_argument naming the first one.
Status CheckReloadable(const Settings& old_settings, const Settings& next);

// Builds everything `next` asks for and swaps it into `live`; on any error `live` is untouched
// and the error says what failed. `changed` lists what differs ("listen", "token", "notify",
// "interval", ...), for the log line.
Status ReloadWatchServices(const Settings& old_settings, const Settings& next,
                           bool listen_requested, const WatchDaemon& daemon, WatchServices& live,
                           std::vector<std::string>* changed);

}  // namespace gpudoctor
