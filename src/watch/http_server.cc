#include "watch/http_server.h"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "watch/web_assets.h"

// cpp-httplib (Debian libcpp-httplib-dev, a shared library): header and URI limits are its
// compiled-in 8 KiB each.
#include <httplib.h>

#include "report/report.h"
#include "watch/exporter.h"

namespace gpudoctor {

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  ListenAddress a;
  std::string_view port_text;
  if (text.empty()) return InvalidArgument("listen address is empty; want HOST:PORT");
  if (text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return InvalidArgument("listen address '" + std::string(text) + "': want [IPV6]:PORT");
    }
    a.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
    if (a.host.empty())
      return InvalidArgument("listen address '" + std::string(text) + "': empty host");
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      return InvalidArgument("listen address '" + std::string(text) + "': want HOST:PORT");
    }
    a.host = std::string(text.substr(0, colon));
    if (a.host.find(':') != std::string::npos) {
      return InvalidArgument("listen address '" + std::string(text) +
                             "': an IPv6 host needs brackets, [::1]:9835");
    }
    if (a.host.empty()) a.host = "0.0.0.0";
    port_text = text.substr(colon + 1);
  }
  for (char c : a.host) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' ||
              c == '%' || c == '_';
    if (!ok) return InvalidArgument("listen address '" + std::string(text) + "': bad host");
  }
  if (port_text.empty() || port_text.size() > 5) {
    return InvalidArgument("listen address '" + std::string(text) + "': bad port");
  }
  int port = 0;
  auto r = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (r.ec != std::errc() || r.ptr != port_text.data() + port_text.size() || port < 0 ||
      port > 65535) {
    return InvalidArgument("listen address '" + std::string(text) + "': port must be 0-65535");
  }
  a.port = port;
  return a;
}

Result<int64_t> ParseDurationSeconds(std::string_view text) {
  if (text.empty() || text.size() > 12)
    return InvalidArgument("bad duration '" + std::string(text) + "'");
  int64_t unit = 1;
  std::string_view digits = text;
  switch (text.back()) {
    case 's':
      unit = 1;
      digits.remove_suffix(1);
      break;
    case 'm':
      unit = 60;
      digits.remove_suffix(1);
      break;
    case 'h':
      unit = 3600;
      digits.remove_suffix(1);
      break;
    case 'd':
      unit = 86400;
      digits.remove_suffix(1);
      break;
    case 'w':
      unit = 7 * 86400;
      digits.remove_suffix(1);
      break;
    default:
      break;
  }
  int64_t n = 0;
  auto r = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (digits.empty() || r.ec != std::errc() || r.ptr != digits.data() + digits.size() || n <= 0) {
    return InvalidArgument("bad duration '" + std::string(text) + "'; want e.g. 90s, 30m, 6h, 2d");
  }
  constexpr int64_t kMax = 400LL * 86400;
  if (n > kMax / unit)
    return InvalidArgument("duration '" + std::string(text) + "' is over 400 days");
  return n * unit;
}

Result<SeriesQuery> ParseHistoryQuery(const std::multimap<std::string, std::string>& params,
                                      int64_t now_unix_s) {
  SeriesQuery q;
  int64_t since_s = 3600;
  bool have_metric = false;
  std::map<std::string, int> seen;
  for (const auto& [k, v] : params) {
    if (++seen[k] > 1) return InvalidArgument("query parameter '" + k + "' given twice");
    if (k == "metric") {
      if (FindMetric(v) == nullptr) {
        return InvalidArgument("unknown metric '" + v.substr(0, 200) + "' (see docs/metrics.md)");
      }
      q.metric = v;
      have_metric = true;
    } else if (k == "gpu") {
      int g = -1;
      auto r = std::from_chars(v.data(), v.data() + v.size(), g);
      if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size() || g < 0 || g > 4095) {
        return InvalidArgument("gpu must be an index 0-4095");
      }
      q.gpu = g;
    } else if (k == "since") {
      Result<int64_t> d = ParseDurationSeconds(v);
      if (!d.ok()) return d.status();
      since_s = *d;
    } else if (k == "labels") {
      if (v.size() > 512) return InvalidArgument("labels is too long");
      q.labels = v;
    } else if (k == "max_points") {
      int n = 0;
      auto r = std::from_chars(v.data(), v.data() + v.size(), n);
      if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size() || n < 1 || n > 10000) {
        return InvalidArgument("max_points must be 1-10000");
      }
      q.max_points = n;
    } else {
      return InvalidArgument("unknown query parameter '" + k.substr(0, 100) +
                             "'; want metric, gpu, labels, since, max_points");
    }
  }
  if (!have_metric) return InvalidArgument("query parameter 'metric' is required");
  q.since_unix_s = now_unix_s - since_s;
  q.until_unix_s = 0;
  return q;
}

Result<std::string> ParseTokenFileContent(std::string_view content) {
  size_t nl = content.find('\n');
  std::string_view line = content.substr(0, nl);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
    line.remove_suffix(1);
  }
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  if (line.empty()) return InvalidArgument("token file: the first line is empty");
  if (line.size() > 4096) return InvalidArgument("token file: token is over 4096 bytes");
  for (char c : line) {
    if (c < 0x21 || c > 0x7e) return InvalidArgument("token file: token must be printable ASCII");
  }
  return std::string(line);
}

Result<std::string> ReadTokenFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return NotFound("token file " + path + ": cannot stat");
  if (!S_ISREG(st.st_mode)) return InvalidArgument("token file " + path + ": not a regular file");
  if (st.st_mode & 0077) {
    return PermissionDenied("token file " + path + ": readable by group or others; chmod 600 it");
  }
  if (st.st_size > 64 * 1024) return InvalidArgument("token file " + path + ": too large");
  std::ifstream in(path, std::ios::binary);
  if (!in) return PermissionDenied("token file " + path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  Result<std::string> t = ParseTokenFileContent(ss.str());
  if (!t.ok()) return InvalidArgument(path + ": " + t.status().message());
  return t;
}

namespace {

thread_local bool t_shed = false;  // this connection runs beyond the worker limit: answer 503

// Fixed workers + a bounded backlog. A connection counts against workers + backlog from the
// moment it is accepted until it is closed (also while it idles in keep-alive on a worker), so
// the decision to shed does not depend on how fast the workers wake up: the (workers + backlog +
// 1)th open connection is shed at once, however the accept loop and the workers interleave.
// (Counting only the queue length made it a race: when the accept loop outran the workers, idle
// connections took the shed threads and a later request queued behind idle ones for a whole
// keep-alive timeout, about half the time.) A shed connection is served in "shed" mode (503 to
// its request, then close) on one of at most `max_shed` short-lived threads; beyond that on the
// accept thread itself, so the accept loop slows down instead of threads piling up. Every path
// is bounded by the read/keep-alive timeouts.
class BoundedPool : public httplib::TaskQueue {
 public:
  BoundedPool(int workers, int max_queued, int max_shed)
      : max_in_service_(static_cast<size_t>(workers) + static_cast<size_t>(max_queued)),
        max_shed_(max_shed) {
    for (int i = 0; i < workers; ++i) {
      threads_.emplace_back([this] { Work(); });
    }
  }
  ~BoundedPool() override = default;

  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!stop_ && in_service_ < max_in_service_) {
        ++in_service_;
        jobs_.push_back(std::move(fn));
        cv_.notify_one();
        return;
      }
      if (shedding_ < max_shed_) {
        ++shedding_;
        try {
          std::thread([this, fn = std::move(fn)] {
            t_shed = true;
            fn();
            std::lock_guard<std::mutex> l(mu_);
            --shedding_;
            cv_.notify_all();
          }).detach();
          return;
        } catch (const std::system_error&) {
          --shedding_;
        }
      }
    }
    t_shed = true;
    fn();
    t_shed = false;
  }

  void shutdown() override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      stop_ = true;
      cv_.notify_all();
      cv_.wait(lock, [this] { return shedding_ == 0; });
    }
    for (auto& t : threads_) t.join();
  }

 private:
  void Work() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
        if (stop_ && jobs_.empty()) return;
        fn = std::move(jobs_.front());
        jobs_.pop_front();
      }
      fn();  // the whole connection, keep-alive included
      std::lock_guard<std::mutex> lock(mu_);
      --in_service_;
    }
  }

  const size_t max_in_service_;
  const int max_shed_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t in_service_ = 0;  // accepted, not yet closed: queued or on a worker
  int shedding_ = 0;
  bool stop_ = false;
};

void JsonError(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  nlohmann::ordered_json j;
  j["error"] = message;
  j["status"] = status;
  res.set_content(j.dump() + "\n", "application/json");
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ b[i % (b.empty() ? 1 : b.size())];
  return diff == 0 && !b.empty();
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string IsoMs(int64_t ms) {
  if (ms <= 0) return "";
  return FormatUtc(std::chrono::system_clock::time_point(std::chrono::milliseconds(ms)));
}

// Why binding host:port fails, from a bind(2) of our own (cpp-httplib does not keep errno).
std::string BindFailureReason(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  std::string service = std::to_string(port);
  if (::getaddrinfo(host.c_str(), service.c_str(), &hints, &res) != 0 || res == nullptr) {
    return "host does not resolve";
  }
  std::string why = "not permitted";
  int fd = ::socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
  if (fd >= 0) {
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (::bind(fd, res->ai_addr, res->ai_addrlen) != 0) {
      why = errno == EADDRINUSE      ? "in use"
            : errno == EADDRNOTAVAIL ? "not an address of this machine"
            : errno == EACCES        ? "permission denied (ports below 1024 need privileges)"
                                     : std::strerror(errno);
    } else if (::listen(fd, 1) != 0) {
      why = errno == EADDRINUSE ? "in use" : std::strerror(errno);
    } else {
      why = "in use";  // free again now: another process held it a moment ago
    }
    ::close(fd);
  }
  ::freeaddrinfo(res);
  return why;
}

}  // namespace

class WatchHttpServer::Impl {
 public:
  HttpOptions options;
  LatestFn latest;
  OpenReaderFn open_reader;
  httplib::Server server;
  std::thread thread;
  std::atomic<uint64_t> served{0};
  int port = 0;
  bool stopped = false;

  void Routes();

  // The newest kMaxEvents history events of the last 7 days (reboots, Xids, GPUs gone, acks),
  // oldest first; an empty array without a store or when it cannot be read.
  nlohmann::ordered_json RecentEvents(int64_t now_unix_s) const {
    constexpr size_t kMaxEvents = 200;
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    if (!open_reader) return arr;
    Result<std::unique_ptr<HistoryReader>> reader = open_reader();
    if (!reader.ok()) return arr;
    Result<std::vector<HistoryEvent>> events =
        (*reader)->QueryEvents(now_unix_s - 7 * 86400, kMaxEvents);
    if (!events.ok()) return arr;
    for (const HistoryEvent& e : *events) arr.push_back(HistoryEventToJson(e));
    return arr;
  }
};

void WatchHttpServer::Impl::Routes() {
  server.new_task_queue = [this] {
    return new BoundedPool(options.max_connections, options.max_queued_connections,
                           options.max_connections);
  };
  server.set_read_timeout(options.read_timeout_s, 0);
  server.set_write_timeout(options.write_timeout_s, 0);
  server.set_idle_interval(0, 0);
  server.set_keep_alive_max_count(static_cast<size_t>(options.keep_alive_max_requests));
  server.set_keep_alive_timeout(options.keep_alive_timeout_s);
  server.set_payload_max_length(options.max_body_bytes);
  // cpp-httplib writes the headers and the body separately: with Nagle on, the body waits for
  // the client's delayed ACK of the headers (40 ms on Linux) on every keep-alive request.
  server.set_tcp_nodelay(true);
  // SO_REUSEADDR only: cpp-httplib's default also sets SO_REUSEPORT, which would let a second
  // daemon share the port silently.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });

  server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    served.fetch_add(1, std::memory_order_relaxed);
    if (t_shed) {
      res.set_header("Connection", "close");
      res.set_header("Retry-After", "1");
      JsonError(res, 503, "too many connections");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.method != "GET" && req.method != "HEAD") {
      res.set_header("Allow", "GET, HEAD");
      JsonError(res, 405, "method " + req.method.substr(0, 16) + " not allowed; only GET");
      return httplib::Server::HandlerResponse::Handled;
    }
    // The dashboard's own files (the page, its scripts and styles) hold no data and must load
    // before a browser can send the token; every data path needs it.
    bool static_asset = req.path == "/" || req.path.rfind("/assets/", 0) == 0;
    if (!options.token.empty() && req.path != "/healthz" && !static_asset) {
      std::string auth = req.get_header_value("Authorization");
      constexpr std::string_view kBearer = "Bearer ";
      bool ok = auth.size() > kBearer.size() && auth.compare(0, kBearer.size(), kBearer) == 0 &&
                ConstantTimeEquals(std::string_view(auth).substr(kBearer.size()), options.token);
      if (!ok) {
        res.set_header("WWW-Authenticate", "Bearer realm=\"gpudoctor\"");
        JsonError(res, 401, "missing or wrong bearer token");
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string why = res.status == 404
                          ? "no such path: " + req.path.substr(0, 200)
                          : (res.status == 400   ? std::string("malformed request")
                             : res.status == 413 ? std::string("request too large")
                             : res.status == 414 ? std::string("request URI too long")
                                                 : "http status " + std::to_string(res.status));
    JsonError(res, res.status, why);
  });

  auto no_params = [](const httplib::Request& req, httplib::Response& res) {
    if (req.params.empty()) return true;
    JsonError(
        res, 400,
        "this path takes no query parameters ('" + req.params.begin()->first.substr(0, 100) + "')");
    return false;
  };
  auto need_tick = [this](httplib::Response& res) -> std::shared_ptr<const TickResult> {
    std::shared_ptr<const TickResult> t = latest ? latest() : nullptr;
    if (!t) JsonError(res, 503, "no tick completed yet");
    return t;
  };

  server.Get("/metrics",
             [this, no_params, need_tick](const httplib::Request& req, httplib::Response& res) {
               if (!no_params(req, res)) return;
               std::shared_ptr<const TickResult> t = need_tick(res);
               if (!t) return;
               ExporterOptions eo;
               eo.dcgm_compat = options.dcgm_compat;
               eo.hostname = options.hostname;
               res.set_content(RenderMetrics(*t, eo), "text/plain; version=0.0.4; charset=utf-8");
             });

  server.Get("/healthz", [this](const httplib::Request& req, httplib::Response& res) {
    std::shared_ptr<const TickResult> t = latest ? latest() : nullptr;
    nlohmann::ordered_json j;
    int64_t now = NowMs();
    double max_age_s = 3 * options.interval_s;
    if (!t) {
      j["status"] = "starting";
      j["error"] = "no tick completed yet";
      res.status = 503;
    } else {
      double age_s = (now - t->unix_ms) / 1000.0;
      j["tick"] = t->tick;
      j["age_s"] = age_s;
      j["max_age_s"] = max_age_s;
      bool fresh = age_s <= max_age_s;
      j["status"] = !fresh ? "stale" : t->history_degraded.empty() ? "ok" : "degraded";
      if (!fresh) j["error"] = "last tick is older than 3 x interval";
      // Still 200: judging and serving work; the history is what is missing.
      j["history"] = t->history_degraded.empty() ? "ok" : "degraded";
      if (!t->history_degraded.empty()) j["history_error"] = t->history_degraded;
      res.status = fresh ? 200 : 503;
    }
    res.set_content(j.dump() + "\n", "application/json");
  });

  server.Get("/api/v1/status",
             [no_params, need_tick](const httplib::Request& req, httplib::Response& res) {
               if (!no_params(req, res)) return;
               std::shared_ptr<const TickResult> t = need_tick(res);
               if (!t) return;
               res.set_content(RenderJson(t->report), "application/json");
             });

  server.Get("/api/v1/findings",
             [this, no_params, need_tick](const httplib::Request& req, httplib::Response& res) {
               if (!no_params(req, res)) return;
               std::shared_ptr<const TickResult> t = need_tick(res);
               if (!t) return;
               nlohmann::ordered_json j;
               j["time"] = IsoMs(t->unix_ms);
               j["tick"] = t->tick;
               nlohmann::ordered_json arr = nlohmann::ordered_json::array();
               for (const TrackedFinding& f : t->findings) {
                 if (f.state == FindingState::kPending) continue;
                 arr.push_back(TrackedFindingToJson(f));
               }
               j["findings"] = std::move(arr);
               j["events"] = RecentEvents(t->unix_ms / 1000);
               res.set_content(j.dump() + "\n", "application/json");
             });

  server.Get("/api/v1/history", [this](const httplib::Request& req, httplib::Response& res) {
    Result<SeriesQuery> q = ParseHistoryQuery(req.params, NowMs() / 1000);
    if (!q.ok()) return JsonError(res, 400, q.status().message());
    if (!open_reader) return JsonError(res, 503, "no history store");
    Result<std::unique_ptr<HistoryReader>> reader = open_reader();
    if (!reader.ok()) return JsonError(res, 503, "history store: " + reader.status().message());
    Result<std::vector<Series>> series = (*reader)->QuerySeries(*q);
    if (!series.ok()) return JsonError(res, 500, "history query: " + series.status().message());
    res.set_content(SeriesToJson(*series).dump() + "\n", "application/json");
  });

  // The dashboard (web/, embedded at build time).
  auto serve_asset = [](const httplib::Request& req, httplib::Response& res) {
    const WebAsset* asset = FindWebAsset(req.path);
    if (asset == nullptr) return JsonError(res, 404, "no such path");
    res.set_header("Cache-Control", req.path == "/" ? "no-cache" : "max-age=3600");
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_content(std::string(asset->body), std::string(asset->content_type));
  };
  server.Get("/", [no_params, serve_asset](const httplib::Request& req, httplib::Response& res) {
    if (!no_params(req, res)) return;
    serve_asset(req, res);
  });
  server.Get(R"(/assets/[A-Za-z0-9._-]+)", serve_asset);
}

WatchHttpServer::WatchHttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WatchHttpServer::~WatchHttpServer() { Stop(); }

Result<std::unique_ptr<WatchHttpServer>> WatchHttpServer::Start(const HttpOptions& options,
                                                                LatestFn latest,
                                                                OpenReaderFn open_reader) {
  Result<ListenAddress> addr = ParseListenAddress(options.listen);
  if (!addr.ok()) return addr.status();
  if (options.max_connections < 1 || options.max_queued_connections < 0) {
    return InvalidArgument("http: max_connections must be >= 1");
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->latest = std::move(latest);
  impl->open_reader = std::move(open_reader);
  try {
    impl->Routes();
    int port = addr->port == 0
                   ? impl->server.bind_to_any_port(addr->host)
                   : (impl->server.bind_to_port(addr->host, addr->port) ? addr->port : -1);
    if (port < 0) {
      return IoError("cannot listen on " + options.listen + ": " +
                     BindFailureReason(addr->host, addr->port));
    }
    impl->port = port;
    Impl* raw = impl.get();
    impl->thread = std::thread([raw] { raw->server.listen_after_bind(); });
    // Stop() only interrupts a running accept loop: wait (bounded) until it runs.
    for (int i = 0; i < 2000 && !impl->server.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  } catch (const std::exception& e) {
    return Internal(std::string("http: ") + e.what());
  }
  return std::unique_ptr<WatchHttpServer>(new WatchHttpServer(std::move(impl)));
}

void WatchHttpServer::Stop() {
  if (!impl_ || impl_->stopped) return;
  impl_->stopped = true;
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

int WatchHttpServer::port() const { return impl_->port; }
uint64_t WatchHttpServer::requests_served() const {
  return impl_->served.load(std::memory_order_relaxed);
}

}  // namespace gpudoctor
