#include "serve/job_push.h"

#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "job/step_inbox.h"

namespace gpudoctor {

std::optional<std::string> JobStepPathName(std::string_view path) {
  constexpr std::string_view kPrefix = "/api/v1/job/";
  constexpr std::string_view kSuffix = "/step";
  if (!path.starts_with(kPrefix) || !path.ends_with(kSuffix)) return std::nullopt;
  if (path.size() <= kPrefix.size() + kSuffix.size()) return std::nullopt;
  return std::string(path.substr(kPrefix.size(), path.size() - kPrefix.size() - kSuffix.size()));
}

HttpResponse HandleJobStep(const std::string& job, std::string_view query, int64_t now_unix_ms) {
  if (!ValidJobName(job)) {
    return JsonErrorResponse(400, "job name must be 1-64 characters of A-Z a-z 0-9 _ . -");
  }
  Result<StepMark> mark = ParseStepMarkQuery(query);
  if (!mark.ok()) return JsonErrorResponse(400, mark.status().message());
  mark->unix_ms = now_unix_ms;
  if (Status s = GlobalJobInbox().Push(job, *mark); !s.ok()) {
    return JsonErrorResponse(404, s.message());
  }
  HttpResponse r;
  r.status = 202;
  r.content_type = "application/json";
  r.body = JsonText(nlohmann::ordered_json{{"job", job}, {"received_unix_ms", now_unix_ms}}) + "\n";
  return r;
}

}  // namespace gpudoctor
