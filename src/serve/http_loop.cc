#include "serve/http_loop.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/json_text.h"
#include "core/strings.h"
#include "core/thread_name.h"

namespace gpudoctor {
namespace {

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 202:
      return "Accepted";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Status";
  }
}

// The response's bytes. The body's own buffer carries them when it has room for the head in
// front (SeriesJsonText leaves it): a large answer is then never held twice.
std::string Serialize(HttpResponse&& r, bool head_only, bool close) {
  std::string head;
  head.reserve(256);
  head += "HTTP/1.1 " + std::to_string(r.status) + " " + Reason(r.status) + "\r\n";
  head += "Content-Type: " + r.content_type + "\r\n";
  head += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  head += close ? "Connection: close\r\n" : "Connection: keep-alive\r\n";
  for (const auto& [k, v] : r.headers) head += k + ": " + v + "\r\n";
  head += "\r\n";
  if (head_only) return head;
  std::string out = std::move(r.body);
  out.insert(0, head);
  return out;
}

std::string BindError(int err) {
  switch (err) {
    case EADDRINUSE:
      return "in use";
    case EADDRNOTAVAIL:
      return "not an address of this machine";
    case EACCES:
      return "permission denied (ports below 1024 need privileges)";
    default:
      return std::strerror(err);
  }
}

constexpr int64_t kDrainMs = 500;             // an error answer's connection reads this long
constexpr size_t kDrainMaxBytes = 64 * 1024;  // ... or this much, then closes

}  // namespace

HttpResponse JsonErrorResponse(int status, std::string_view message) {
  HttpResponse r;
  r.status = status;
  nlohmann::ordered_json j;
  j["error"] = std::string(message);
  j["status"] = status;
  r.body = JsonText(j) + "\n";
  return r;
}

class HttpLoop::Impl {
 public:
  enum class State { kReading, kServing, kWriting, kDraining };
  struct Conn {
    uint64_t id = 0;
    int fd = -1;
    State state = State::kReading;
    std::string in;  // the head arriving (and pipelined bytes after it)
    HeadScanner scanner;
    std::string out;
    size_t out_off = 0;
    bool close_after = false;
    bool head_only = false;  // the request being answered is a HEAD
    bool keep_alive = true;
    int64_t since_ms = 0;     // the current wait started (writing: the last byte sent)
    int64_t deadline_ms = 0;  // 0: none (being served)
    int requests = 0;
    size_t drained = 0;
    size_t accounted = 0;  // what this connection adds to head_bytes
  };
  struct Job {
    uint64_t id;
    HttpRequest request;
  };
  struct Done {
    uint64_t id;
    HttpResponse response;
  };

  HttpLoopOptions options;
  Gate gate;
  Handler handler;
  int listen_fd = -1;
  int wake_fd = -1;
  std::thread loop_thread;
  std::vector<std::thread> workers;
  std::atomic<bool> stopping{false};
  bool stopped = false;

  // Loop thread only.
  std::map<uint64_t, std::unique_ptr<Conn>> conns;
  uint64_t next_id = 1;
  size_t head_bytes = 0;  // capacity of every Conn::in together
  // recv buffer of OnReadable. A member, not a thread_local: a 16 KiB thread_local made every
  // thread of every command (a check starts a dozen) allocate and zero 16 KiB of TLS at start.
  char read_scratch[16 * 1024];

  std::mutex mu;  // jobs, done, stats_
  std::condition_variable cv;
  std::deque<Job> jobs;         // other requests, in arrival order
  std::deque<Job> urgent_jobs;  // options.urgent's, ahead of them
  int running_other = 0;        // `jobs` being handled now
  std::vector<Done> done;
  HttpLoopStats stats_;
  int64_t accept_paused_until_ms = 0;  // loop thread only

  void Count(uint64_t HttpLoopStats::*field) {
    std::lock_guard<std::mutex> lock(mu);
    ++(stats_.*field);
  }

  void Wake() {
    uint64_t one = 1;
    ssize_t n = ::write(wake_fd, &one, sizeof one);
    (void)n;
  }

  // Other requests that may run at once: all workers but one kept for urgent requests.
  int MaxRunningOther() const {
    return options.urgent && options.workers > 1 ? options.workers - 1 : options.workers;
  }

  // Under mu: whether a worker may take a job now.
  bool Takeable() const {
    return !urgent_jobs.empty() || (!jobs.empty() && running_other < MaxRunningOther());
  }

  void Work() {
    NameThisThread("gd-http-work");
    for (;;) {
      Job job;
      bool other = false;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [this] { return stopping.load() || Takeable(); });
        if (stopping.load()) return;  // Stop() dropped the queues
        std::deque<Job>& from = urgent_jobs.empty() ? jobs : urgent_jobs;
        other = &from == &jobs;
        job = std::move(from.front());
        from.pop_front();
        if (other) ++running_other;
      }
      HttpResponse r;
      try {
        r = handler(job.request);
      } catch (const std::exception& e) {
        r = JsonErrorResponse(500, std::string("internal error: ") + e.what());
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        done.push_back({job.id, std::move(r)});
        if (other) --running_other;
      }
      if (other) cv.notify_one();  // a waiting other request may run now
      Wake();
    }
  }

  // Keeps head_bytes equal to the sum of every connection's buffer capacity.
  void Account(Conn& c) {
    head_bytes -= c.accounted;
    c.accounted = c.in.capacity();
    head_bytes += c.accounted;
  }

  void SetInput(Conn& c, std::string&& s) {
    c.in = std::move(s);
    Account(c);
  }

  void Close(uint64_t id) {
    auto it = conns.find(id);
    if (it == conns.end()) return;
    head_bytes -= it->second->accounted;
    ::close(it->second->fd);
    conns.erase(it);
  }

  // The connection whose input buffer holds the most bytes (an unfinished head, or requests
  // pipelined behind the one being answered; the oldest of equals): the one to close when the
  // buffers together are over budget; 0 when none holds any.
  uint64_t BiggestHead() const {
    uint64_t best = 0;
    size_t best_size = 0;
    for (const auto& [id, c] : conns) {
      if (c->in.size() <= best_size) continue;
      best = id;
      best_size = c->in.size();
    }
    return best;
  }

  // The connection to sacrifice for room: an error answer draining, else the one that has
  // waited longest for its head, else the answer whose client has read nothing for longest
  // (kStalledWriteMs at least); the oldest within each kind. 0 when every connection is being
  // served or read by its client.
  uint64_t Victim(int64_t now) const {
    auto rank = [now](const Conn& c) {
      switch (c.state) {
        case State::kDraining:
          return 3;
        case State::kReading:
          return 2;
        case State::kWriting:
          return now - c.since_ms >= kStalledWriteMs ? 1 : 0;
        case State::kServing:
          return 0;
      }
      return 0;
    };
    uint64_t best = 0;
    int best_rank = 0;
    int64_t best_since = 0;
    for (const auto& [id, c] : conns) {
      const int r = rank(*c);
      if (r == 0) continue;
      if (best == 0 || r > best_rank || (r == best_rank && c->since_ms < best_since)) {
        best = id;
        best_rank = r;
        best_since = c->since_ms;
      }
    }
    return best;
  }

  void StartReading(Conn& c, int64_t now) {
    c.state = State::kReading;
    c.since_ms = now;
    c.deadline_ms = now + static_cast<int64_t>(options.request_timeout_s * 1000);
  }

  void Respond(Conn& c, HttpResponse&& r, int64_t now) {
    bool close = r.close || !c.keep_alive || c.requests >= options.keep_alive_max_requests ||
                 stopping.load();
    c.out = Serialize(std::move(r), c.head_only, close);
    c.out_off = 0;
    c.close_after = close;
    c.state = State::kWriting;
    c.since_ms = now;
    c.deadline_ms = now + static_cast<int64_t>(options.write_timeout_s * 1000);
    TryWrite(c, now);
  }

  // A head error: answer and close (the rest of the stream cannot be trusted).
  void RespondError(Conn& c, int status, std::string_view why, int64_t now) {
    Count(&HttpLoopStats::bad_heads);
    c.keep_alive = false;
    c.head_only = false;
    SetInput(c, std::string());
    HttpResponse r = JsonErrorResponse(status, why);
    r.close = true;
    Respond(c, std::move(r), now);
  }

  // Returns false when the connection was closed.
  bool TryWrite(Conn& c, int64_t now) {
    while (c.out_off < c.out.size()) {
      ssize_t n = ::send(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        c.out_off += static_cast<size_t>(n);
        // Progress: the write deadline and the stall clock start again.
        c.since_ms = now;
        c.deadline_ms = now + static_cast<int64_t>(options.write_timeout_s * 1000);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (n < 0 && errno == EINTR) continue;
      Close(c.id);
      return false;
    }
    std::string().swap(c.out);
    c.out_off = 0;
    if (c.close_after) {
      ::shutdown(c.fd, SHUT_WR);
      SetInput(c, std::string());
      c.state = State::kDraining;
      c.since_ms = now;
      c.deadline_ms = now + kDrainMs;
      return true;
    }
    StartReading(c, now);
    return Process(c, now);  // a pipelined request may be waiting
  }

  // Looks for a complete head in c.in; answers errors, hands requests on. Returns false when
  // the connection was closed.
  bool Process(Conn& c, int64_t now) {
    if (c.state != State::kReading || c.in.empty()) return true;
    const uint64_t id = c.id;  // `c` is gone once Close(id) ran
    HeadScanner::State st = c.scanner.Feed(c.in);
    if (st == HeadScanner::State::kNeedMore) return true;
    if (st == HeadScanner::State::kError) {
      RespondError(c, c.scanner.error_status(), c.scanner.error(), now);
      return conns.count(id) > 0;
    }
    size_t head_size = c.scanner.head_size();
    HeadParseError perr;
    Result<HttpRequest> req = ParseRequestHead(std::string_view(c.in).substr(0, head_size), &perr);
    // Free the head: the buffer keeps only what followed it.
    SetInput(c, c.in.size() > head_size ? c.in.substr(head_size) : std::string());
    c.scanner.Reset();
    if (!req.ok()) {
      RespondError(c, perr.status, perr.message, now);
      return conns.count(id) > 0;
    }
    ++c.requests;
    c.keep_alive = req->keep_alive;
    c.head_only = req->method == "HEAD";
    Count(&HttpLoopStats::requests);
    if (req->has_body) {
      // Never read a body: answer, then close, so its bytes are not taken for a request. A POST
      // is a method some path takes (a job's step mark): its values go in the query string.
      c.keep_alive = false;
      const std::string allow =
          options.allowed_methods ? options.allowed_methods(*req) : std::string("GET, HEAD");
      const std::vector<std::string_view> methods = Split(allow, ", ");
      const bool allowed = std::find(methods.begin(), methods.end(), req->method) != methods.end();
      HttpResponse r = allowed ? JsonErrorResponse(400,
                                                   "this server takes no request bodies; values "
                                                   "go in the query string")
                               : JsonErrorResponse(405, "method not allowed here; only " + allow);
      if (!allowed) r.headers.emplace_back("Allow", allow);
      r.close = true;
      Respond(c, std::move(r), now);
      return conns.count(id) > 0;
    }
    std::optional<HttpResponse> quick;
    try {
      quick = gate(*req);
    } catch (const std::exception& e) {
      quick = JsonErrorResponse(500, std::string("internal error: ") + e.what());
    }
    if (quick) {
      Respond(c, std::move(*quick), now);
      return conns.count(id) > 0;
    }
    c.state = State::kServing;
    c.deadline_ms = 0;
    const bool urgent = options.urgent && options.urgent(*req);
    {
      std::lock_guard<std::mutex> lock(mu);
      (urgent ? urgent_jobs : jobs).push_back({c.id, std::move(*req)});
    }
    cv.notify_one();
    return true;
  }

  void OnReadable(Conn& c, int64_t now) {
    auto& scratch = read_scratch;
    if (c.state == State::kDraining) {
      for (;;) {
        ssize_t n = ::recv(c.fd, scratch, sizeof scratch, MSG_DONTWAIT);
        if (n > 0 && (c.drained += static_cast<size_t>(n)) < kDrainMaxBytes) continue;
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
        Close(c.id);
        return;
      }
    }
    for (int round = 0; round < 4 && c.state == State::kReading; ++round) {
      // Never more than the scanner can refuse: one byte over the head limit.
      size_t room = kMaxHeadBytes + 1 > c.in.size() ? kMaxHeadBytes + 1 - c.in.size() : 0;
      if (room == 0) return;  // the scanner has refused it already
      ssize_t n = ::recv(c.fd, scratch, std::min(room, sizeof scratch), MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        Close(c.id);
        return;
      }
      if (n < 0) return;
      if (c.in.capacity() < c.in.size() + static_cast<size_t>(n)) {
        c.in.reserve(std::min(kMaxHeadBytes + 1,
                              std::max(c.in.size() + static_cast<size_t>(n), 2 * c.in.capacity())));
      }
      c.in.append(scratch, static_cast<size_t>(n));
      Account(c);
      uint64_t id = c.id;
      if (!Process(c, now)) return;
      // Over the memory budget: close the biggest unfinished heads (maybe this one), so a
      // client sending a normal request never pays for one that sends a huge one.
      while (head_bytes > options.head_budget_bytes) {
        uint64_t v = BiggestHead();
        if (v == 0) break;
        Count(&HttpLoopStats::evicted);
        Close(v);
      }
      if (conns.count(id) == 0) return;
      if (static_cast<size_t>(n) < std::min(room, sizeof scratch)) return;  // socket drained
    }
  }

  void Accept(int64_t now) {
    for (int i = 0; i < 64; ++i) {
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        // Out of descriptors or memory: the connection stays in the backlog, and the listener
        // would be readable again at once; rest it a little instead of spinning.
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          accept_paused_until_ms = now + kAcceptPauseMs;
          Count(&HttpLoopStats::accept_paused);
        }
        return;  // EAGAIN: nothing more waiting
      }
      if (static_cast<int>(conns.size()) >= options.max_connections) {
        uint64_t v = Victim(now);
        if (v == 0) {
          Count(&HttpLoopStats::shed);
          std::string bytes =
              Serialize(JsonErrorResponse(503, "too many connections"), false, true);
          ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
          (void)n;
          ::close(fd);
          continue;
        }
        Count(&HttpLoopStats::evicted);
        Close(v);
      }
      int yes = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
      auto c = std::make_unique<Conn>();
      c->id = next_id++;
      c->fd = fd;
      StartReading(*c, now);
      conns.emplace(c->id, std::move(c));
    }
  }

  void Finish() {
    std::vector<Done> finished;
    {
      std::lock_guard<std::mutex> lock(mu);
      finished.swap(done);
    }
    int64_t now = SteadyMs();
    for (Done& d : finished) {
      auto it = conns.find(d.id);
      if (it == conns.end()) continue;
      Respond(*it->second, std::move(d.response), now);
    }
  }

  void Run() {
    NameThisThread("gd-http");
    std::vector<pollfd> pfds;
    std::vector<uint64_t> ids;
    while (!stopping.load()) {
      int64_t now = SteadyMs();
      std::vector<uint64_t> expired;
      int64_t next = now + 1000;
      for (const auto& [id, c] : conns) {
        if (c->deadline_ms == 0) continue;
        if (c->deadline_ms <= now) {
          expired.push_back(id);
        } else {
          next = std::min(next, c->deadline_ms);
        }
      }
      for (uint64_t id : expired) {
        Count(&HttpLoopStats::timed_out);
        Close(id);
      }
      pfds.clear();
      ids.clear();
      pfds.push_back({wake_fd, POLLIN, 0});
      // A resting listener is polled for nothing (fd -1 is skipped by poll) until its pause ends.
      const bool listening = now >= accept_paused_until_ms;
      if (!listening) next = std::min(next, accept_paused_until_ms);
      pfds.push_back({listening ? listen_fd : -1, POLLIN, 0});
      for (const auto& [id, c] : conns) {
        short ev = c->state == State::kWriting                                   ? POLLOUT
                   : c->state == State::kReading || c->state == State::kDraining ? POLLIN
                                                                                 : 0;
        if (ev == 0) continue;
        pfds.push_back({c->fd, ev, 0});
        ids.push_back(id);
      }
      int timeout = static_cast<int>(std::max<int64_t>(1, next - now));
      int n = ::poll(pfds.data(), pfds.size(), timeout);
      if (n < 0 && errno != EINTR) break;
      if (n <= 0) continue;
      now = SteadyMs();
      if (pfds[0].revents & POLLIN) {
        uint64_t v;
        ssize_t r = ::read(wake_fd, &v, sizeof v);
        (void)r;
        Finish();
      }
      for (size_t i = 2; i < pfds.size(); ++i) {
        if (pfds[i].revents == 0) continue;
        auto it = conns.find(ids[i - 2]);
        if (it == conns.end()) continue;
        Conn& c = *it->second;
        if (c.state == State::kWriting) {
          if (pfds[i].revents & (POLLERR | POLLHUP | POLLNVAL) && !(pfds[i].revents & POLLOUT)) {
            Close(c.id);
          } else {
            TryWrite(c, now);
          }
        } else if (c.state == State::kReading || c.state == State::kDraining) {
          OnReadable(c, now);
        }
      }
      if (pfds[1].revents & POLLIN) Accept(now);
    }
  }
};

Result<std::unique_ptr<HttpLoop>> HttpLoop::Start(const std::string& host, int port,
                                                  const HttpLoopOptions& options, Gate gate,
                                                  Handler handler) {
  std::string where =
      (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  std::string service = std::to_string(port);
  if (::getaddrinfo(host.c_str(), service.c_str(), &hints, &res) != 0 || res == nullptr) {
    return IoError("cannot listen on " + where + ": host does not resolve");
  }
  int fd =
      ::socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, res->ai_protocol);
  if (fd < 0) {
    int err = errno;
    ::freeaddrinfo(res);
    return IoError("cannot listen on " + where + ": " + BindError(err));
  }
  // SO_REUSEADDR only: SO_REUSEPORT would let a second daemon share the port silently.
  int yes = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  if (::bind(fd, res->ai_addr, res->ai_addrlen) != 0 || ::listen(fd, 1024) != 0) {
    int err = errno;
    ::freeaddrinfo(res);
    ::close(fd);
    return IoError("cannot listen on " + where + ": " + BindError(err));
  }
  ::freeaddrinfo(res);
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  int actual = bound.ss_family == AF_INET6
                   ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                   : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  int wake = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake < 0) {
    ::close(fd);
    return IoError("http: eventfd: " + std::string(std::strerror(errno)));
  }
  std::unique_ptr<HttpLoop> loop(new HttpLoop());
  loop->port_ = actual;
  loop->impl_ = std::make_unique<Impl>();
  Impl* impl = loop->impl_.get();
  impl->options = options;
  impl->options.workers = std::max(1, options.workers);
  impl->options.max_connections = std::max(2, options.max_connections);
  impl->gate = std::move(gate);
  impl->handler = std::move(handler);
  impl->listen_fd = fd;
  impl->wake_fd = wake;
  try {
    for (int i = 0; i < impl->options.workers; ++i) {
      impl->workers.emplace_back([impl] { impl->Work(); });
    }
    impl->loop_thread = std::thread([impl] { impl->Run(); });
  } catch (const std::system_error& e) {
    loop->Stop();
    return Internal(std::string("http: cannot start threads: ") + e.what());
  }
  return loop;
}

HttpLoop::~HttpLoop() { Stop(); }

void HttpLoop::Stop() {
  if (!impl_ || impl_->stopped) return;
  impl_->stopped = true;
  {
    // Under the lock: a worker between its wait's check and its sleep cannot miss the wake-up.
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping.store(true);
    impl_->jobs.clear();  // queued requests are dropped, not run: shutdown waits for no query
    impl_->urgent_jobs.clear();
  }
  impl_->Wake();
  impl_->cv.notify_all();
  if (impl_->loop_thread.joinable()) impl_->loop_thread.join();
  for (auto& t : impl_->workers) t.join();
  for (auto& [id, c] : impl_->conns) ::close(c->fd);
  impl_->conns.clear();
  ::close(impl_->listen_fd);
  ::close(impl_->wake_fd);
}

HttpLoopStats HttpLoop::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->stats_;
}

}  // namespace gpudoctor
