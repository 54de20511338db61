#include "net/http_prober.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <thread>

#include "core/deadline.h"
#include "core/strings.h"

namespace gpudoctor {
namespace {

constexpr size_t kMaxBodyBytes = 64 * 1024;
constexpr auto kSlack = std::chrono::milliseconds(100);

bool CurlReady() {
  static std::once_flag once;
  static bool ok = false;
  std::call_once(once, [] { ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; });
  return ok;
}

struct Request {
  CURL* easy = nullptr;
  int index = 0;
  char errbuf[CURL_ERROR_SIZE] = {};
  size_t body_bytes = 0;
  bool cut = false;  // body cut at kMaxBodyBytes: not an error
  curl_slist* resolve = nullptr;
};

size_t Discard(char*, size_t size, size_t n, void* userdata) {
  auto* r = static_cast<Request*>(userdata);
  r->body_bytes += size * n;
  if (r->body_bytes > kMaxBodyBytes) {
    r->cut = true;
    return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
  }
  return size * n;
}

std::string KindOf(CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_CONNECT:
      return "connect";
    case CURLE_OPERATION_TIMEDOUT:
      return "timeout";
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_USE_SSL_FAILED:
      return "tls";
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_PARTIAL_FILE:
      return "protocol";
    default:
      return "other";
  }
}

double Ms(curl_off_t us) { return static_cast<double>(us) / 1000.0; }

HttpRequestResult Collect(Request& r, CURLcode rc, bool https) {
  HttpRequestResult out;
  long code = 0;
  curl_easy_getinfo(r.easy, CURLINFO_RESPONSE_CODE, &code);
  curl_off_t lookup = 0, connect = 0, app = 0, pre = 0, first = 0;
  curl_easy_getinfo(r.easy, CURLINFO_NAMELOOKUP_TIME_T, &lookup);
  curl_easy_getinfo(r.easy, CURLINFO_CONNECT_TIME_T, &connect);
  curl_easy_getinfo(r.easy, CURLINFO_APPCONNECT_TIME_T, &app);
  curl_easy_getinfo(r.easy, CURLINFO_PRETRANSFER_TIME_T, &pre);
  curl_easy_getinfo(r.easy, CURLINFO_STARTTRANSFER_TIME_T, &first);
  if (connect > 0) out.connect_ms = Ms(std::max<curl_off_t>(0, connect - lookup));
  if (https && app > 0 && app >= connect) out.tls_ms = Ms(app - connect);
  // A response: a status line came, whatever happened to the body afterwards.
  if (code > 0) {
    out.status = static_cast<int>(code);
    if (first > 0) {
      out.ttfb_ms = Ms(first);
      if (pre > 0 && first >= pre) out.wait_ms = Ms(first - pre);
    }
    return out;
  }
  out.error_kind = rc == CURLE_OK ? "protocol" : KindOf(rc);
  std::string detail = r.errbuf[0] != '\0' ? std::string(r.errbuf) : curl_easy_strerror(rc);
  out.error = rc == CURLE_OK ? "no HTTP status in the response" : Sanitize(detail, 200);
  return out;
}

}  // namespace

std::chrono::milliseconds HttpSeriesBudget(const HttpProbeOptions& opts) {
  int count = std::max(opts.count, 1);
  return (count - 1) * opts.interval + opts.timeout + kSlack;
}

std::vector<HttpRequestResult> HttpProbeSeries(const Target& target, const ResolvedAddress& addr,
                                               const HttpProbeOptions& opts) {
  std::vector<HttpRequestResult> results;
  const int count = std::max(opts.count, 0);
  if (!target.IsUrl() || count == 0) return results;
  if (!CurlReady()) {
    HttpRequestResult failed;
    failed.error = "libcurl could not be initialised";
    failed.error_kind = "other";
    results.assign(count, failed);
    return results;
  }
  const bool https = target.method == ProbeMethod::kHttps;
  const std::string url = target.Url();
  std::string pin;
  if (!target.numeric) {
    std::string a = AddressToString(addr);
    if (addr.family() == AF_INET6) a = "[" + a + "]";
    pin = target.host + ":" + std::to_string(*target.port) + ":" + a;
  }
  CURLM* multi = curl_multi_init();
  if (multi == nullptr) return results;
  std::vector<std::optional<HttpRequestResult>> done(count);
  std::vector<std::unique_ptr<Request>> running;
  const TimePoint t0 = SteadyClock::now();
  const TimePoint series_end = t0 + HttpSeriesBudget(opts);
  int next = 0;
  auto finish = [&](Request& r, HttpRequestResult res) {
    done[r.index] = std::move(res);
    curl_multi_remove_handle(multi, r.easy);
    curl_easy_cleanup(r.easy);
    curl_slist_free_all(r.resolve);
    r.easy = nullptr;
  };

  while (next < count || !running.empty()) {
    TimePoint now = SteadyClock::now();
    if (next < count && now >= t0 + next * opts.interval) {
      auto r = std::make_unique<Request>();
      r->index = next++;
      r->easy = curl_easy_init();
      if (r->easy == nullptr) continue;
      CURL* e = r->easy;
      curl_easy_setopt(e, CURLOPT_URL, url.c_str());
#if LIBCURL_VERSION_NUM >= 0x075500  // 7.85: the string form; older libcurl has the bitmask
      curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#else
      curl_easy_setopt(e, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
      curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
      curl_easy_setopt(e, CURLOPT_PROXY, "");  // measure the service, not a proxy from the env
      curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
      curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
      curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
      curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(opts.timeout.count()));
      curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(opts.timeout.count()));
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, opts.tls_verify ? 1L : 0L);
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, opts.tls_verify ? 2L : 0L);
      curl_easy_setopt(e, CURLOPT_USERAGENT, "gpudoctor-check");
      curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
      curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, Discard);
      curl_easy_setopt(e, CURLOPT_WRITEDATA, r.get());
      curl_easy_setopt(e, CURLOPT_PRIVATE, r.get());
      if (!pin.empty()) {
        r->resolve = curl_slist_append(nullptr, pin.c_str());
        curl_easy_setopt(e, CURLOPT_RESOLVE, r->resolve);
      }
      if (curl_multi_add_handle(multi, e) != CURLM_OK) {
        curl_easy_cleanup(e);
        curl_slist_free_all(r->resolve);
        continue;
      }
      running.push_back(std::move(r));
      continue;
    }
    int still = 0;
    curl_multi_perform(multi, &still);
    int left = 0;
    while (CURLMsg* m = curl_multi_info_read(multi, &left)) {
      if (m->msg != CURLMSG_DONE) continue;
      Request* r = nullptr;
      curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &r);
      if (r == nullptr) continue;
      CURLcode rc = m->data.result;
      if (rc == CURLE_WRITE_ERROR && r->cut) rc = CURLE_OK;
      finish(*r, Collect(*r, rc, https));
    }
    now = SteadyClock::now();
    if (now >= series_end) {
      // curl's own timeouts should have ended every request by now; never wait longer.
      for (auto& r : running) {
        if (r->easy == nullptr) continue;
        HttpRequestResult cut;
        cut.error = "no answer before the end of the series";
        cut.error_kind = "timeout";
        finish(*r, cut);
      }
    }
    std::erase_if(running, [](const std::unique_ptr<Request>& r) { return r->easy == nullptr; });
    if (next >= count && running.empty()) break;
    TimePoint wake = next < count ? t0 + next * opts.interval : series_end;
    wake = std::min(wake, series_end);
    auto wait_ms = std::chrono::ceil<std::chrono::milliseconds>(wake - now).count();
    wait_ms = std::clamp<int64_t>(wait_ms, 0, 50);
    if (running.empty()) {
      if (wait_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    } else {
      curl_multi_poll(multi, nullptr, 0, static_cast<int>(wait_ms), nullptr);
    }
  }
  curl_multi_cleanup(multi);
  for (auto& d : done) {
    if (d) results.push_back(std::move(*d));
  }
  return results;
}

}  // namespace gpudoctor
