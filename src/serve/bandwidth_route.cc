#include "serve/bandwidth_route.h"

#include "core/json_text.h"
#include "core/strings.h"
#include "core/time_spec.h"

namespace gpudoctor {

Result<BandwidthRequest> ParseBandwidthQuery(const std::multimap<std::string, std::string>& params,
                                             int64_t now_unix_s) {
  BandwidthRequest req;
  req.since_unix_s = now_unix_s - 30 * 86400;
  req.until_unix_s = now_unix_s;
  for (const auto& [k, v] : params) {
    if (params.count(k) > 1) return InvalidArgument("parameter '" + k.substr(0, 40) + "' repeated");
    if (k == "since" || k == "until") {
      auto t = ParseTimeSpec(v, now_unix_s);
      if (!t) return InvalidArgument("parameter '" + k + "': expected " + TimeSpecExpectation());
      (k == "since" ? req.since_unix_s : req.until_unix_s) = *t;
    } else if (k == "nic") {
      if (v.empty() || v.size() > 64 || v.find_first_of(",= /") != std::string::npos) {
        return InvalidArgument("parameter 'nic': not a NIC name");
      }
      req.options.nic = v;
    } else if (k == "plan_mbps") {
      std::optional<double> d = ParseDouble(v);
      if (!d || !(*d > 0) || *d > 1e7) {
        return InvalidArgument("parameter 'plan_mbps': expected Mb/s in (0, 1e7]");
      }
      req.options.plan_mbps_flag = *d;
    } else {
      return InvalidArgument("unknown parameter '" + k.substr(0, 40) +
                             "' (since, until, nic, plan_mbps)");
    }
  }
  if (req.until_unix_s < req.since_unix_s) return InvalidArgument("until is before since");
  return req;
}

HttpResponse ServeBandwidth(HistoryReader& reader, const BandwidthRequest& req,
                            const ThresholdOverrides& config) {
  Result<BandwidthReport> r =
      LoadBandwidthReport(reader, req.since_unix_s, req.until_unix_s, req.options, &config);
  if (!r.ok()) {
    return JsonErrorResponse(r.status().code() == StatusCode::kNotFound ? 404 : 500,
                             r.status().message());
  }
  HttpResponse out;
  out.body = JsonText(BandwidthReportJson(*r, true)) + "\n";
  return out;
}

}  // namespace gpudoctor
