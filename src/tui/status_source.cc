#include "tui/status_source.h"

#include <chrono>

#include "check/run_check.h"
#include "core/http_get.h"
#include "report/report.h"
#include "tui/status_check.h"

namespace gpudoctor {

StatusFetcher LocalStatusFetcher(std::shared_ptr<const Settings> settings) {
  return [settings]() -> Result<nlohmann::json> {
    auto j = nlohmann::json::parse(RenderJson(RunCheck(settings)), nullptr, false);
    if (j.is_discarded()) return Internal("the report did not render as JSON");
    return j;
  };
}

StatusFetcher DaemonStatusFetcher(std::string base_url, std::string token, double timeout_s) {
  while (!base_url.empty() && base_url.back() == '/') base_url.pop_back();
  std::string url = base_url + "/api/v1/status";
  return [url, token, timeout_s]() -> Result<nlohmann::json> {
    HttpGetRequest req;
    req.url = url;
    req.deadline = SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                                            std::chrono::duration<double>(timeout_s));
    req.max_body_bytes = kMaxStatusBytes;
    req.connect_timeout_s = timeout_s;
    if (!token.empty()) req.headers.push_back("Authorization: Bearer " + token);
    auto res = HttpGet(req);
    if (!res.ok()) return res.status();
    if (res->status == 401) {
      return IoError(url + ": HTTP 401: " +
                     (token.empty() ? "the daemon needs a token (--token-file or $GPUDOCTOR_TOKEN)"
                                    : "the daemon refused the token"));
    }
    if (res->status != 200) return IoError(url + ": HTTP " + std::to_string(res->status));
    auto j = nlohmann::json::parse(res->body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      return ParseError(url + ": the body is not a JSON object");
    }
    if (Status s = CheckStatusDocument(j); !s.ok()) {
      return ParseError(url + ": status refused: " + s.message());
    }
    return j;
  };
}

}  // namespace gpudoctor
