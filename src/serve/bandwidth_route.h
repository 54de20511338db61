// GET /api/v1/report/bandwidth?since=30d&until=T&nic=X&plan_mbps=N: `gpudoctor report bandwidth
// --json` with each NIC's 5-minute averages ("points", the dashboard's plot), read from the
// history on a worker thread. since defaults to 30 days ago, until to now (the CLI's time
// grammar, core/time_spec.h); the plan defaults to the config's [network] plan_mbps_nics /
// plan_mbps, else the link speed. Unknown or repeated parameters are errors.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "bandwidth/bandwidth_report.h"
#include "core/status.h"
#include "core/threshold_overrides.h"
#include "serve/http_loop.h"
#include "store/history_store.h"

namespace gpudoctor {

inline constexpr const char* kBandwidthPath = "/api/v1/report/bandwidth";

struct BandwidthRequest {
  int64_t since_unix_s = 0, until_unix_s = 0;
  BandwidthOptions options;  // nic, plan_mbps_flag
};

Result<BandwidthRequest> ParseBandwidthQuery(const std::multimap<std::string, std::string>& params,
                                             int64_t now_unix_s);

// 200 with BandwidthReportJson(with_points); 404 for a NIC with nothing stored; 500 on a read
// error.
HttpResponse ServeBandwidth(HistoryReader& reader, const BandwidthRequest& req,
                            const ThresholdOverrides& config);

}  // namespace gpudoctor
