#include "serve/why_route.h"

#include "core/json_text.h"
#include "core/time_spec.h"
#include "job/step_inbox.h"

namespace gpudoctor {

Result<WhyRequest> ParseWhyQuery(const std::multimap<std::string, std::string>& params,
                                 int64_t now_unix_s) {
  WhyRequest req;
  req.since_unix_s = now_unix_s - 86400;
  req.until_unix_s = now_unix_s;
  for (const auto& [k, v] : params) {
    if (params.count(k) > 1) return InvalidArgument("parameter '" + k.substr(0, 40) + "' repeated");
    if (k == "job") {
      if (!ValidJobName(v)) return InvalidArgument("parameter 'job': not a job name");
      req.job = v;
    } else if (k == "since" || k == "until" || k == "at") {
      auto t = ParseTimeSpec(v, now_unix_s);
      if (!t) return InvalidArgument("parameter '" + k + "': expected " + TimeSpecExpectation());
      (k == "since"   ? req.since_unix_s
       : k == "until" ? req.until_unix_s
                      : req.at_unix_s.emplace()) = *t;
    } else {
      return InvalidArgument("unknown parameter '" + k.substr(0, 40) + "' (job, since, until, at)");
    }
  }
  if (req.until_unix_s < req.since_unix_s) return InvalidArgument("until is before since");
  return req;
}

HttpResponse ServeWhy(HistoryReader& reader, const WhyRequest& req) {
  Result<WhyResult> r = RunWhy(reader, req);
  if (!r.ok()) {
    int status = r.status().code() == StatusCode::kNotFound          ? 404
                 : r.status().code() == StatusCode::kInvalidArgument ? 400
                                                                     : 500;
    return JsonErrorResponse(status, r.status().message());
  }
  HttpResponse out;
  out.body = JsonText(WhyToJson(*r)) + "\n";
  return out;
}

}  // namespace gpudoctor
