#include "core/http_get.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>

#include "core/strings.h"

namespace gpudoctor {
namespace {

struct Sink {
  std::string* body;
  size_t max_bytes;
  bool over = false;
};

size_t Append(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<Sink*>(user);
  size_t len = size * n;
  if (sink->body->size() + len > sink->max_bytes) {
    sink->over = true;
    return 0;  // libcurl aborts the transfer with CURLE_WRITE_ERROR
  }
  sink->body->append(data, len);
  return len;
}

bool CurlReady() {
  static const bool ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  return ok;
}

}  // namespace

Result<HttpGetAnswer> HttpGet(const HttpGetRequest& r) {
  // Errors name the URL without userinfo, query or fragment (they may carry credentials).
  std::string where = UrlOrigin(r.url);
  if (size_t sep = r.url.find("://"); sep != std::string::npos) {
    size_t path = r.url.find('/', sep + 3);
    if (path != std::string::npos) {
      where += Sanitize(r.url.substr(path, r.url.find_first_of("?#", path) - path), 200);
    }
  }
  auto left_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(r.deadline - SteadyClock::now())
          .count();
  if (left_ms <= 0) return TimeoutError(where + ": no time left before the deadline");
  if (!CurlReady()) return Internal("libcurl could not be initialised");
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return Internal("libcurl could not be initialised");
  HttpGetAnswer answer;
  Sink sink{&answer.body, r.max_body_bytes};
  long connect_ms = std::min<long>(static_cast<long>(r.connect_timeout_s * 1000), left_ms);
  char errbuf[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(curl, CURLOPT_URL, r.url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, std::max(1L, connect_ms));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(left_ms));
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "gpudoctor");
  if (r.post_empty) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, 0L);
  }
  // A declared Content-Length above the cap fails before any of the body is read.
  curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(r.max_body_bytes));
  if (!r.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, r.ca_file.c_str());
  if (!r.bearer_token.empty()) {
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BEARER));
    curl_easy_setopt(curl, CURLOPT_XOAUTH2_BEARER, r.bearer_token.c_str());
  } else if (!r.basic_user.empty()) {
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
    curl_easy_setopt(curl, CURLOPT_USERNAME, r.basic_user.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, r.basic_password.c_str());
  }
  struct curl_slist* headers = nullptr;
  for (const auto& h : r.headers) headers = curl_slist_append(headers, h.c_str());
  if (headers != nullptr) curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (sink.over || rc == CURLE_FILESIZE_EXCEEDED) {
    return InvalidArgument(where + ": answer larger than " + FormatBytes(r.max_body_bytes) +
                           "; aborted");
  }
  if (rc == CURLE_OPERATION_TIMEDOUT) {
    return TimeoutError(where + ": no complete answer within the deadline (" +
                        FormatDouble(left_ms / 1000.0, 1) + " s left; --deadline)");
  }
  if (rc != CURLE_OK) {
    std::string why = errbuf[0] ? Sanitize(errbuf, 200) : curl_easy_strerror(rc);
    bool tls = rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CONNECT_ERROR ||
               rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_CERTPROBLEM ||
               rc == CURLE_SSL_ISSUER_ERROR;
    return IoError(where + ": " + (tls ? "TLS: " : "") + why);
  }
  return answer;
}

std::string UrlEncode(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace gpudoctor
