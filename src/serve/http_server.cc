#include "serve/http_server.h"

#include <sys/stat.h>

#include <cctype>
#include <charconv>
#include <chrono>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <vector>

#include "core/json_text.h"
#include "core/time_spec.h"
#include "metrics/metric_table.h"
#include "report/report.h"
#include "serve/bandwidth_route.h"
#include "serve/exporter.h"
#include "serve/job_push.h"
#include "serve/status_json.h"
#include "serve/web_assets.h"
#include "serve/why_route.h"

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

Result<SeriesQuery> ParseHistoryQuery(const std::multimap<std::string, std::string>& params,
                                      int64_t now_unix_s) {
  SeriesQuery q;
  int64_t since = now_unix_s - 3600;
  int64_t until = 0;
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
    } else if (k == "since" || k == "until") {
      std::optional<int64_t> t = ParseTimeSpec(v, now_unix_s);
      if (!t) {
        return InvalidArgument("bad time " + k + "='" + v.substr(0, 40) + "'; want " +
                               TimeSpecExpectation());
      }
      (k == "since" ? since : until) = *t;
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
                             "'; want metric, gpu, labels, since, until, max_points");
    }
  }
  if (!have_metric) return InvalidArgument("query parameter 'metric' is required");
  if (until != 0 && until < since) return InvalidArgument("until is before since");
  q.since_unix_s = since;
  q.until_unix_s = until;
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

HttpResponse Content(std::string body, std::string content_type) {
  HttpResponse r;
  r.body = std::move(body);
  r.content_type = std::move(content_type);
  return r;
}

bool IsAssetPath(std::string_view path) {
  constexpr std::string_view kPrefix = "/assets/";
  if (path.rfind(kPrefix, 0) != 0 || path.size() == kPrefix.size()) return false;
  for (char c : path.substr(kPrefix.size())) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return false;
    }
  }
  return true;
}

// The data paths, answered on a worker thread.
bool IsDataPath(std::string_view path) {
  return path == "/metrics" || path == "/api/v1/status" || path == "/api/v1/findings" ||
         path == "/api/v1/history" || path == "/api/v1/series" || path == "/api/v1/why" ||
         path == kBandwidthPath;
}

}  // namespace

class WatchHttpServer::Impl {
 public:
  LatestFn latest;
  OpenReaderFn open_reader;
  std::unique_ptr<HttpLoop> loop;

  std::shared_ptr<const HttpOptions> Options() const {
    std::lock_guard<std::mutex> lock(options_mu);
    return options;
  }
  void SetOptions(HttpOptions o) {
    auto next = std::make_shared<const HttpOptions>(std::move(o));
    std::lock_guard<std::mutex> lock(options_mu);
    options = std::move(next);
  }

  // On the loop thread: everything that needs no tick and no store, so it never waits behind
  // a worker (authentication failures, /healthz, the dashboard's files, errors).
  std::optional<HttpResponse> Gate(const HttpRequest& req) const;
  // On a worker thread: the data paths.
  HttpResponse Serve(const HttpRequest& req) const;

 private:
  mutable std::mutex options_mu;
  std::shared_ptr<const HttpOptions> options;

  HttpResponse Healthz(const HttpOptions& o) const;
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

HttpResponse WatchHttpServer::Impl::Healthz(const HttpOptions& o) const {
  std::shared_ptr<const TickResult> t = latest ? latest() : nullptr;
  nlohmann::ordered_json j;
  int64_t now = NowMs();
  double max_age_s = 3 * o.interval_s;
  HttpResponse r;
  if (!t) {
    j["status"] = "starting";
    j["error"] = "no tick completed yet";
    r.status = 503;
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
    r.status = fresh ? 200 : 503;
  }
  r.body = JsonText(j) + "\n";
  return r;
}

std::optional<HttpResponse> WatchHttpServer::Impl::Gate(const HttpRequest& req) const {
  std::shared_ptr<const HttpOptions> o = Options();
  // The one path that takes a POST: a job's step mark (serve/job_push.h).
  std::optional<std::string> job_step = JobStepPathName(req.path);
  if (job_step && req.method != "POST") {
    HttpResponse r = JsonErrorResponse(
        405, "method " + req.method.substr(0, 16) + " not allowed; a step mark is a POST");
    r.headers.emplace_back("Allow", "POST");
    return r;
  }
  if (!job_step && req.method != "GET" && req.method != "HEAD") {
    HttpResponse r =
        JsonErrorResponse(405, "method " + req.method.substr(0, 16) + " not allowed; only GET");
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  // The dashboard's own files (the page, its scripts and styles) hold no data and must load
  // before a browser can send the token; every data path needs it.
  bool static_asset = req.path == "/" || IsAssetPath(req.path);
  if (!o->token.empty() && req.path != "/healthz" && !static_asset) {
    std::optional<std::string_view> auth = req.Header("authorization");
    std::optional<std::string_view> cred = auth ? BearerCredentials(*auth) : std::nullopt;
    if (!cred || !ConstantTimeEquals(*cred, o->token)) {
      HttpResponse r = JsonErrorResponse(401, "missing or wrong bearer token");
      r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"gpudoctor\"");
      return r;
    }
  }
  if (job_step) {
    // A browser sends Origin on every cross-site POST (and Sec-Fetch-Site where it can): a web
    // page the operator visits must not push step marks to 127.0.0.1 (a forged mark raises or
    // hides job.slowdown). Training scripts and curl send neither.
    std::optional<std::string_view> site = req.Header("sec-fetch-site");
    if (req.Header("origin") || (site && *site != "same-origin" && *site != "none")) {
      return JsonErrorResponse(403, "a step mark is not taken from a web page (Origin header)");
    }
    return HandleJobStep(*job_step, req.query, NowMs());
  }
  Result<std::multimap<std::string, std::string>> params = ParseQueryString(req.query);
  if (!params.ok()) return JsonErrorResponse(400, params.status().message());
  if (req.path != "/api/v1/history" && req.path != "/api/v1/why" && req.path != kBandwidthPath &&
      !params->empty()) {
    return JsonErrorResponse(400, "this path takes no query parameters ('" +
                                      params->begin()->first.substr(0, 100) + "')");
  }
  if (req.path == "/healthz") return Healthz(*o);
  if (static_asset) {
    const WebAsset* asset = FindWebAsset(req.path);
    if (asset == nullptr) return JsonErrorResponse(404, "no such path");
    HttpResponse r = Content(std::string(asset->body), std::string(asset->content_type));
    r.headers.emplace_back("Cache-Control", req.path == "/" ? "no-cache" : "max-age=3600");
    r.headers.emplace_back("X-Content-Type-Options", "nosniff");
    return r;
  }
  if (!IsDataPath(req.path))
    return JsonErrorResponse(404, "no such path: " + req.path.substr(0, 200));
  if (req.path == "/api/v1/history") {
    Result<SeriesQuery> q = ParseHistoryQuery(*params, NowMs() / 1000);
    if (!q.ok()) return JsonErrorResponse(400, q.status().message());
    if (!open_reader) return JsonErrorResponse(503, "no history store");
  } else if (req.path == "/api/v1/why") {
    Result<WhyRequest> q = ParseWhyQuery(*params, NowMs() / 1000);
    if (!q.ok()) return JsonErrorResponse(400, q.status().message());
    if (!open_reader) return JsonErrorResponse(503, "no history store");
  } else if (req.path == kBandwidthPath) {
    Result<BandwidthRequest> q = ParseBandwidthQuery(*params, NowMs() / 1000);
    if (!q.ok()) return JsonErrorResponse(400, q.status().message());
    if (!open_reader) return JsonErrorResponse(503, "no history store");
  } else if (req.path != "/api/v1/series" && (!latest || !latest())) {
    return JsonErrorResponse(503, "no tick completed yet");
  }
  return std::nullopt;
}

HttpResponse WatchHttpServer::Impl::Serve(const HttpRequest& req) const {
  std::shared_ptr<const HttpOptions> o = Options();
  if (req.path == "/api/v1/history") {
    Result<std::multimap<std::string, std::string>> params = ParseQueryString(req.query);
    if (!params.ok()) return JsonErrorResponse(400, params.status().message());
    Result<SeriesQuery> q = ParseHistoryQuery(*params, NowMs() / 1000);
    if (!q.ok()) return JsonErrorResponse(400, q.status().message());
    Result<std::unique_ptr<HistoryReader>> reader = open_reader();
    if (!reader.ok()) return JsonErrorResponse(503, "history store: " + reader.status().message());
    Result<std::vector<Series>> series = (*reader)->QuerySeries(*q);
    if (!series.ok()) return JsonErrorResponse(500, "history query: " + series.status().message());
    std::string body = SeriesJsonText(*series);
    body += '\n';
    return Content(std::move(body), "application/json");
  }
  if (req.path == "/api/v1/why") {
    Result<std::multimap<std::string, std::string>> params = ParseQueryString(req.query);
    if (!params.ok()) return JsonErrorResponse(400, params.status().message());
    Result<WhyRequest> q = ParseWhyQuery(*params, NowMs() / 1000);
    if (!q.ok()) return JsonErrorResponse(400, q.status().message());
    Result<std::unique_ptr<HistoryReader>> reader = open_reader();
    if (!reader.ok()) return JsonErrorResponse(503, "history store: " + reader.status().message());
    return ServeWhy(**reader, *q);
  }
  if (req.path == kBandwidthPath) {
    Result<std::multimap<std::string, std::string>> params = ParseQueryString(req.query);
    if (!params.ok()) return JsonErrorResponse(400, params.status().message());
    Result<BandwidthRequest> q = ParseBandwidthQuery(*params, NowMs() / 1000);
    if (!q.ok()) return JsonErrorResponse(400, q.status().message());
    Result<std::unique_ptr<HistoryReader>> reader = open_reader();
    if (!reader.ok()) return JsonErrorResponse(503, "history store: " + reader.status().message());
    return ServeBandwidth(**reader, *q, o->plans);
  }
  if (req.path == "/api/v1/series") {
    // What the history can plot by metric name alone, from the metric table (the dashboard's
    // choice of metric): [{"metric","help","unit","per_gpu","type"}], table order.
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const PlottableMetric& m : PlottableMetrics()) {
      arr.push_back({{"metric", m.info->name},
                     {"help", m.info->help},
                     {"unit", m.unit},
                     {"per_gpu", m.per_gpu},
                     {"type", MetricTypeName(m.info->type)}});
      if (!m.info->labels.empty()) arr.back()["labels"] = m.info->labels;
    }
    return Content(JsonText(arr) + "\n", "application/json");
  }
  std::shared_ptr<const TickResult> t = latest ? latest() : nullptr;
  if (!t) return JsonErrorResponse(503, "no tick completed yet");
  if (req.path == "/metrics") {
    ExporterOptions eo;
    eo.dcgm_compat = o->dcgm_compat;
    eo.hostname = o->hostname;
    eo.interval_s = o->interval_s;
    return Content(RenderMetrics(*t, eo), "text/plain; version=0.0.4; charset=utf-8");
  }
  if (req.path == "/api/v1/status") return Content(RenderStatusJson(*t), "application/json");
  // /api/v1/findings
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
  return Content(JsonText(j) + "\n", "application/json");
}

WatchHttpServer::WatchHttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WatchHttpServer::~WatchHttpServer() { Stop(); }

Result<std::unique_ptr<WatchHttpServer>> WatchHttpServer::Start(const HttpOptions& options,
                                                                LatestFn latest,
                                                                OpenReaderFn open_reader) {
  Result<ListenAddress> addr = ParseListenAddress(options.listen);
  if (!addr.ok()) return addr.status();
  if (options.workers < 1 || options.max_connections < 2) {
    return InvalidArgument("http: workers must be >= 1 and max_connections >= 2");
  }
  auto impl = std::make_unique<Impl>();
  impl->SetOptions(options);
  impl->latest = std::move(latest);
  impl->open_reader = std::move(open_reader);
  HttpLoopOptions lo;
  lo.workers = options.workers;
  lo.max_connections = options.max_connections;
  lo.head_budget_bytes = options.head_budget_bytes;
  lo.request_timeout_s = options.request_timeout_s;
  lo.write_timeout_s = options.write_timeout_s;
  lo.keep_alive_max_requests = options.keep_alive_max_requests;
  // The scrape never waits behind history queries (serve/http_loop.h).
  lo.urgent = [](const HttpRequest& r) { return r.path == "/metrics"; };
  lo.allowed_methods = [](const HttpRequest& r) {
    return std::string(JobStepPathName(r.path) ? "POST" : "GET, HEAD");
  };
  Impl* raw = impl.get();
  Result<std::unique_ptr<HttpLoop>> loop = HttpLoop::Start(
      addr->host, addr->port, lo, [raw](const HttpRequest& r) { return raw->Gate(r); },
      [raw](const HttpRequest& r) { return raw->Serve(r); });
  if (!loop.ok()) {
    // Name the address as it was asked for.
    std::string msg = loop.status().message();
    size_t colon = msg.find(": ", std::string("cannot listen on ").size());
    if (msg.rfind("cannot listen on ", 0) == 0 && colon != std::string::npos) {
      return IoError("cannot listen on " + options.listen + msg.substr(colon));
    }
    return loop.status();
  }
  impl->loop = std::move(*loop);
  return std::unique_ptr<WatchHttpServer>(new WatchHttpServer(std::move(impl)));
}

void WatchHttpServer::Stop() {
  if (impl_ && impl_->loop) impl_->loop->Stop();
}

void WatchHttpServer::Reconfigure(const HttpOptions& options) {
  HttpOptions next = *impl_->Options();
  next.token = options.token;
  next.dcgm_compat = options.dcgm_compat;
  next.hostname = options.hostname;
  next.interval_s = options.interval_s;
  impl_->SetOptions(std::move(next));
}

int WatchHttpServer::port() const { return impl_->loop->port(); }
uint64_t WatchHttpServer::requests_served() const { return impl_->loop->stats().requests; }
HttpLoopStats WatchHttpServer::stats() const { return impl_->loop->stats(); }

}  // namespace gpudoctor
