// Reads gpudoctor series (and dcgm-exporter series where they carry the fields) from a
// Prometheus server's HTTP API (GET /api/v1/query_range, one query per metric name) into
// FleetData: one GpuSample per (GPU, step), one NodeReport per (hostname, step), and a
// FindingEvent per gpudoctor_finding_active{id,severity,layer,...} == 1 point.
// Units: gpudoctor_* Hz -> MHz, ratio -> %, watts; DCGM_FI_DEV_SM_CLOCK MHz, POWER_USAGE W,
// GPU_UTIL %, GPU_TEMP C. Labels: hostname|Hostname, gpu, uuid|UUID, pci_bus_id,
// model|modelName, serial. Plain http only (no TLS). Every request has a connect timeout of
// 2 s and a read timeout of `timeout_s`; the first failed request ends the read (a down or slow
// server costs at most one timeout) and is returned as an error naming the URL. A metric the
// server does not have is simply absent. Blocking; not thread-safe on one FleetData.
#pragma once

#include <string>

#include "core/status.h"
#include "fleet/fleet_model.h"

namespace gpudoctor::fleet {

struct PrometheusQuery {
  std::string url;  // http://host:port[/prefix]
  int64_t start_s = 0, end_s = 0, step_s = 300;
  double timeout_s = 10;
};

Status ReadPrometheus(const PrometheusQuery& query, FleetData& data);

// Parses one query_range answer for `metric` into data (exposed for tests and fuzzing).
Status AddPrometheusMatrix(const std::string& metric, const std::string& body,
                           const std::string& source, FleetData& data);

}  // namespace gpudoctor::fleet
