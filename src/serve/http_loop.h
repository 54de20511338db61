// HttpLoop: the connection layer of the watch HTTP server. One thread polls the listening socket
// and every open connection; it receives request heads into per-connection buffers bounded by
// http_request.h (8 KiB line, 32 KiB head), with one deadline per connection for the whole head
// (from accept, or from the end of the previous answer on keep-alive), and writes answers
// without blocking. A connection that has not sent a complete head costs a buffer and a pollfd,
// never a thread, so slow or idle clients cannot starve anyone.
//
// Bounds, all before authentication:
// - open connections: at `max_connections` one is closed to make room, so a new client always
//   gets in: an error answer still draining first, then the one that has waited longest for its
//   head, then the answer whose client has read nothing for longest (at least kStalledWriteMs:
//   a client that pipelines requests and never reads its answers holds no slot); only when
//   every connection is being served or written to a reading client does a new one get 503;
// - memory: the buffers of all connections together (heads arriving, pipelined bytes waiting)
//   stay under `head_budget_bytes` (the biggest is closed first, so normal requests never pay
//   for huge ones), and buffers are freed once a head is complete;
// - time: `request_timeout_s` for a head, `write_timeout_s` without progress for an answer (a
//   large answer to a slow but reading client is not cut); then it is closed;
// - descriptors: when accept(2) fails for want of descriptors or memory, the listener rests
//   kAcceptPauseMs instead of waking the loop at once again (no busy loop at EMFILE).
// A malformed or oversized head gets 400/414/431/505 and the connection is closed; so does any
// request announcing a body (the server takes none), which also rules out request smuggling.
//
// A complete head goes to `gate` on the loop thread (cheap answers: auth failures, /healthz,
// errors); when it returns nothing the request runs on one of `workers` handler threads, and
// its answer is written by the loop. One request per connection at a time (pipelined requests
// wait their turn in the buffer).
//
// Stop() drops requests still queued (their connections are closed unanswered) and waits only for
// those being handled.
//
// Thread-safety: Start/Stop/port/stats from the owning thread; `gate` is called on the loop
// thread, `handler` on worker threads concurrently.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "serve/http_request.h"

namespace gpudoctor {

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra, e.g. Retry-After
  bool close = false;                                        // close after this answer
};

// An answer whose client has read nothing for this long may be closed to make room.
inline constexpr int64_t kStalledWriteMs = 1000;
// How long the listener rests after accept(2) failed for want of descriptors or memory.
inline constexpr int64_t kAcceptPauseMs = 100;

// {"error": message, "status": status} with that status.
HttpResponse JsonErrorResponse(int status, std::string_view message);

struct HttpLoopOptions {
  int workers = 4;
  int max_connections = 512;
  size_t head_budget_bytes = 2 * 1024 * 1024;
  double request_timeout_s = 5;  // a whole head, also the keep-alive idle time
  double write_timeout_s = 10;   // without progress: each accepted send starts it again
  int keep_alive_max_requests = 100;
  // Requests for which it returns true (the scrape: /metrics) go ahead of the others, and one
  // worker is kept for them: with 2 or more workers at most workers - 1 other requests run at
  // once, so a few slow history queries never make a scrape wait. Empty: one queue.
  std::function<bool(const HttpRequest&)> urgent;
  // The methods a request's path takes, as an Allow header says them ("GET, HEAD", "POST"),
  // for the answer to a request announcing a body: 400 when its method is one of them (the
  // server reads no bodies: values go in the query string), else 405 with this Allow. Empty:
  // "GET, HEAD" for every path.
  std::function<std::string(const HttpRequest&)> allowed_methods;
};

struct HttpLoopStats {
  uint64_t requests = 0;       // complete heads answered (gate or handler)
  uint64_t bad_heads = 0;      // 400/414/431/505 answers
  uint64_t timed_out = 0;      // closed at their deadline
  uint64_t evicted = 0;        // closed to make room (connections or head bytes)
  uint64_t shed = 0;           // new connections answered 503 at once
  uint64_t accept_paused = 0;  // times accept(2) failed for want of descriptors or memory
};

class HttpLoop {
 public:
  using Gate = std::function<std::optional<HttpResponse>(const HttpRequest&)>;
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  // Binds host:port (port 0: any) and starts the loop and the workers. Errors: io_error
  // "cannot listen on HOST:PORT: in use" (or: not an address of this machine, permission denied,
  // host does not resolve).
  static Result<std::unique_ptr<HttpLoop>> Start(const std::string& host, int port,
                                                 const HttpLoopOptions& options, Gate gate,
                                                 Handler handler);
  ~HttpLoop();  // Stop()
  HttpLoop(const HttpLoop&) = delete;
  HttpLoop& operator=(const HttpLoop&) = delete;

  // Closes the listener and every connection, drops queued requests, waits for running
  // handlers, joins. Idempotent.
  void Stop();
  int port() const { return port_; }
  HttpLoopStats stats() const;

  class Impl;

 private:
  HttpLoop() = default;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace gpudoctor
