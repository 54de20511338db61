#include "tui/status_source.h"

#include <chrono>

#include "check/run_check.h"
#include "report/report.h"

#ifdef GPUDOCTOR_HAVE_CURL
#include <curl/curl.h>
#endif

namespace gpudoctor {

StatusFetcher LocalStatusFetcher(std::shared_ptr<const Settings> settings) {
  return [settings]() -> Result<nlohmann::json> {
    auto j = nlohmann::json::parse(RenderJson(RunCheck(settings)), nullptr, false);
    if (j.is_discarded()) return Internal("the report did not render as JSON");
    return j;
  };
}

#ifdef GPUDOCTOR_HAVE_CURL
namespace {

size_t Append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

}  // namespace

StatusFetcher DaemonStatusFetcher(std::string base_url, std::string token, double timeout_s) {
  static const bool kInit = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  while (!base_url.empty() && base_url.back() == '/') base_url.pop_back();
  std::string url = base_url + "/api/v1/status";
  return [url, token, timeout_s]() -> Result<nlohmann::json> {
    if (!kInit) return Internal("libcurl could not be initialised");
    CURL* curl = curl_easy_init();
    if (curl == nullptr) return Internal("libcurl could not be initialised");
    std::string body;
    long timeout_ms = static_cast<long>(timeout_s * 1000);
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Append);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    struct curl_slist* headers = nullptr;
    if (!token.empty()) {
      headers = curl_slist_append(headers, ("Authorization: Bearer " + token).c_str());
      curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    }
    CURLcode rc = curl_easy_perform(curl);
    long http = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    if (rc != CURLE_OK) return IoError(url + ": " + curl_easy_strerror(rc));
    if (http == 401) {
      return IoError(url + ": HTTP 401: " +
                     (token.empty() ? "the daemon needs a token (--token-file or $GPUDOCTOR_TOKEN)"
                                    : "the daemon refused the token"));
    }
    if (http != 200) return IoError(url + ": HTTP " + std::to_string(http));
    auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return ParseError(url + ": the body is not a JSON object");
    return j;
  };
}
#else
StatusFetcher DaemonStatusFetcher(std::string base_url, std::string, double) {
  return [base_url]() -> Result<nlohmann::json> {
    return Unsupported("this gpudoctor was built without libcurl: cannot connect to " + base_url);
  };
}
#endif

}  // namespace gpudoctor
