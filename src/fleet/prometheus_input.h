// Reads gpudoctor series (and dcgm-exporter series where they carry the fields) from a
// Prometheus server's HTTP API (GET /api/v1/query_range, one query per metric name) into
// FleetData: one GpuSample per (GPU, step), one NodeReport per (hostname, step), and a
// FindingEvent per gpudoctor_finding_active{id,severity,layer,...} == 1 point.
// Units: gpudoctor_* Hz -> MHz, ratio -> %, watts; DCGM_FI_DEV_SM_CLOCK MHz, POWER_USAGE W,
// GPU_UTIL %, GPU_TEMP C. Labels: hostname|Hostname, gpu, uuid|UUID, pci_bus_id,
// model|modelName, serial. The serial is only on gpudoctor_gpu_info (queried first): every other
// series (gpudoctor or dcgm-compat labels) gets the serial of the info series with the same node
// and bus id (else uuid, else GPU index) at that time (GpuIdentities), so a card moved between
// slots, and the faults named by bus id, follow its serial. Values outside the physical ranges
// (fleet_model.h) are dropped and counted in one input problem per metric. http or https
// (core/http_get). All the requests together end by `deadline` (a slow or trickling server cannot
// hold fleet past --deadline); each answer is at most max_answer_bytes and all of them together
// max_total_bytes (an endless answer is aborted). The first failed request ends the read and is
// returned as an error naming the URL and the bound that was hit. A metric the server does not have
// is simply absent. Blocking; not thread-safe on one FleetData.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/deadline.h"
#include "core/status.h"
#include "fleet/fleet_model.h"

namespace gpudoctor::fleet {

struct PrometheusQuery {
  std::string url;  // http://host:port[/prefix]
  int64_t start_s = 0, end_s = 0, step_s = 300;
  TimePoint deadline = SteadyClock::now() + std::chrono::seconds(10);
  size_t max_answer_bytes = 64u << 20;
  size_t max_total_bytes = 256u << 20;
};

Status ReadPrometheus(const PrometheusQuery& query, FleetData& data);

// Serials over time from gpudoctor_gpu_info{hostname, pci_bus_id, uuid, gpu, serial} (placeholder
// serials ignored), keyed by node and bus id (canonical), uuid and GPU index.
class GpuIdentities {
 public:
  static constexpr const char* kInfo = "gpudoctor_gpu_info";
  // Adds one query_range answer for gpudoctor_gpu_info.
  Status AddInfoMatrix(const std::string& body);
  // The serial of the GPU so named on `node` at `t`: from the info point at or before t, else
  // the first one after; by bus id, else uuid, else (with neither) index. Empty when unknown.
  std::string SerialAt(const std::string& node, const std::string& pci_bus_id,
                       const std::string& uuid, std::optional<int> index, int64_t t) const;

 private:
  std::map<std::string, std::map<int64_t, std::string>> by_key_;
};

// Parses one query_range answer for `metric` into data, serials joined from `ids` (exposed for
// tests and fuzzing).
Status AddPrometheusMatrix(const std::string& metric, const std::string& body,
                           const std::string& source, const GpuIdentities& ids, FleetData& data);
// The same without identities (the series' own serial labels only).
Status AddPrometheusMatrix(const std::string& metric, const std::string& body,
                           const std::string& source, FleetData& data);

}  // namespace gpudoctor::fleet
