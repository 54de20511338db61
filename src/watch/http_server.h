// WatchHttpServer: the HTTP endpoint of `gpudoctor watch` (cpp-httplib), owned by the daemon.
//
//   GET /metrics             Prometheus text of the last published tick (watch/exporter.h)
//   GET /healthz             200 when the last tick is younger than 3 x interval, else 503
//   GET /api/v1/status       the last tick's report, exactly `check --json` (RenderJson)
//   GET /api/v1/findings     open and recently resolved findings (state, times, acked) and
//                            "events": the history's last 200 events of 7 days (reboots, Xids)
//   GET /api/v1/history?metric=NAME&gpu=N&since=6h   series from the history store
//   GET /, /assets/*         the web dashboard (src/watch/web_assets.h)
//
// Requests never wait on a probe: handlers read the shared_ptr the daemon published. With a
// token, every path but /healthz needs "Authorization: Bearer <token>" (401 otherwise). Limits:
// request line + headers (cpp-httplib: 8 KiB headers, 8 KiB URI), body bytes, concurrent
// connections (worker threads, then a bounded backlog, then up to max_connections more that
// only answer 503), read/write timeouts
// and keep-alive bounds, so a slow or hostile client costs one worker for at most the timeout
// and never the daemon. Errors are JSON {"error": "..."} with a 4xx/5xx status; methods other
// than GET/HEAD get 405. Binds only where told (default 127.0.0.1:9835).
//
// Thread-safety: Start/Stop/port from the owning thread; the callbacks are called from server
// worker threads concurrently and must be thread-safe (latest() returns an immutable tick).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "core/status.h"
#include "watch/history_store.h"
#include "watch/watch_types.h"

namespace gpudoctor {

struct HttpOptions {
  std::string listen = "127.0.0.1:9835";  // "HOST:PORT", "[v6]:PORT" or ":PORT"; port 0 = any
  std::string token;                      // empty: no authentication
  bool dcgm_compat = false;
  std::string hostname;             // exported `hostname` label; empty: the snapshot's
  double interval_s = 10;           // tick interval; /healthz allows 3 x this
  int max_connections = 16;         // worker threads serving connections at once
  int max_queued_connections = 64;  // accepted but waiting for a worker; beyond: 503
  size_t max_body_bytes = 64 * 1024;
  int read_timeout_s = 5;  // per read of a request (a slow client is cut off)
  int write_timeout_s = 10;
  int keep_alive_max_requests = 100;
  int keep_alive_timeout_s = 5;  // also how long an idle new connection may hold a worker
};

struct ListenAddress {
  std::string host;  // "127.0.0.1", "::1", "0.0.0.0"
  int port = 0;
};
// "127.0.0.1:9835", "[::1]:9835", ":9835" (= 0.0.0.0), "localhost:80". Port 0-65535.
Result<ListenAddress> ParseListenAddress(std::string_view text);

// "6h", "30m", "90s", "2d", "1w", "3600" (seconds) -> seconds; 1 s to 400 days.
Result<int64_t> ParseDurationSeconds(std::string_view text);

// Query parameters of /api/v1/history: metric (required, a known gpudoctor_* name), gpu
// (0-4095), labels (LabelsKey text), since (duration, default 1h), max_points (1-10000).
// Unknown parameters and repeated ones are errors.
Result<SeriesQuery> ParseHistoryQuery(const std::multimap<std::string, std::string>& params,
                                      int64_t now_unix_s);

// Reads a token file: the first line, surrounding whitespace trimmed. Must be non-empty, at
// most 4096 bytes, printable ASCII; a file readable by group/others is refused.
Result<std::string> ReadTokenFile(const std::string& path);
// The same checks on file content (for tests and fuzzing).
Result<std::string> ParseTokenFileContent(std::string_view content);

class WatchHttpServer {
 public:
  using LatestFn = std::function<std::shared_ptr<const TickResult>()>;
  using OpenReaderFn = std::function<Result<std::unique_ptr<HistoryReader>>()>;

  // Binds and starts serving on a background thread; returns once the socket listens. Errors:
  // invalid_argument (bad address), io_error "cannot listen on ADDR: in use" (or: not an address
  // of this machine, permission denied, host does not resolve). `latest` may return null before the
  // first tick; open_reader may be empty (history answers 503).
  static Result<std::unique_ptr<WatchHttpServer>> Start(const HttpOptions& options, LatestFn latest,
                                                        OpenReaderFn open_reader);
  ~WatchHttpServer();  // Stop()
  WatchHttpServer(const WatchHttpServer&) = delete;
  WatchHttpServer& operator=(const WatchHttpServer&) = delete;

  // Stops accepting, lets running requests finish (bounded by the write timeout), joins.
  // Idempotent.
  void Stop();
  int port() const;
  uint64_t requests_served() const;

  class Impl;

 private:
  explicit WatchHttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpudoctor
