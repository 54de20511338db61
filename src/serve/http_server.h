// WatchHttpServer: the HTTP endpoint of `gpudoctor watch`, owned by the daemon.
//
//   GET /metrics             Prometheus text of the last published tick (serve/exporter.h)
//   GET /healthz             200 when the last tick is younger than 3 x interval, else 503
//   GET /api/v1/status       the last tick's report, exactly `check --json` (RenderJson)
//   GET /api/v1/findings     open and recently resolved findings (state, times, acked) and
//                            "events": the history's last 200 events of 7 days (reboots, Xids)
//   GET /api/v1/history?metric=NAME&gpu=N&since=6h&until=T   series from the history store;
//                            since/until in the time grammar of the CLI (core/time_spec.h)
//   GET /api/v1/why?job=NAME&since=24h&at=T   `gpudoctor why --json` (serve/why_route.h)
//   GET /api/v1/report/bandwidth?since=30d&nic=X&plan_mbps=N   `gpudoctor report bandwidth
//                            --json` with each NIC's 5-minute points (serve/bandwidth_route.h)
//   POST /api/v1/job/NAME/step?seconds=S&step=N   a job's step mark (serve/job_push.h)
//   GET /, /assets/*         the web dashboard (src/serve/web_assets.h)
//
// Requests never wait on a probe: handlers read the shared_ptr the daemon published. With a
// token, every path but /healthz and the dashboard's static files needs
// "Authorization: Bearer <token>" (scheme case-insensitive; 401 otherwise). The connection layer
// (serve/http_loop.h) bounds everything before authentication: head sizes (8 KiB request line and
// header line, 32 KiB head), the time to send a head, open connections and their buffers; idle or
// slow clients cost no thread. Authentication, /healthz and errors are answered on the loop
// thread, so they never queue behind data requests. Errors are JSON {"error": "..."} with a
// 4xx/5xx status; methods other than GET/HEAD get 405. Binds only where told (default
// 127.0.0.1:9835).
//
// Thread-safety: Start/Stop/Reconfigure/port from the owning thread; the callbacks are called
// from the server's threads concurrently and must be thread-safe (latest() returns an immutable
// tick).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "core/status.h"
#include "core/threshold_overrides.h"
#include "serve/http_loop.h"
#include "store/history_store.h"
#include "watch/watch_types.h"

namespace gpudoctor {

struct HttpOptions {
  std::string listen = "127.0.0.1:9835";  // "HOST:PORT", "[v6]:PORT" or ":PORT"; port 0 = any
  std::string token;                      // empty: no authentication
  bool dcgm_compat = false;
  std::string hostname;      // exported `hostname` label; empty: the snapshot's
  double interval_s = 10;    // tick interval; /healthz allows 3 x this
  ThresholdOverrides plans;  // the config's [network] plan_mbps (report bandwidth's plan)
  // Connection layer (serve/http_loop.h); fixed at Start.
  int workers = 4;            // threads answering the data paths
  int max_connections = 512;  // open at once; at the limit the slowest head is dropped
  size_t head_budget_bytes = 2 * 1024 * 1024;  // all unfinished request heads together
  double request_timeout_s = 5;  // to send a whole request head; also the keep-alive idle time
  double write_timeout_s = 10;
  int keep_alive_max_requests = 100;
};

struct ListenAddress {
  std::string host;  // "127.0.0.1", "::1", "0.0.0.0"
  int port = 0;
};
// "127.0.0.1:9835", "[::1]:9835", ":9835" (= 0.0.0.0), "localhost:80". Port 0-65535.
Result<ListenAddress> ParseListenAddress(std::string_view text);

// Query parameters of /api/v1/history: metric (required, a known gpudoctor_* name), gpu
// (0-4095), labels (LabelsKey text), since and until (ParseTimeSpec: "6h", unix seconds, ISO
// 8601 UTC; since defaults to 1 h ago, until to now), max_points (1-10000).
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

  // Stops accepting, closes every connection, waits for running handlers, joins. Idempotent.
  void Stop();
  // Applies token, dcgm_compat, hostname and interval_s of `options` to the requests that
  // follow (SIGHUP); the address and the connection limits need a new server.
  void Reconfigure(const HttpOptions& options);
  int port() const;
  uint64_t requests_served() const;
  HttpLoopStats stats() const;

  class Impl;

 private:
  explicit WatchHttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpudoctor
