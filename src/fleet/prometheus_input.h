// Reads gpudoctor series (and dcgm-exporter series where they carry the fields) from a
// Prometheus server's HTTP API into FleetData: one GpuSample per (GPU, window), one NodeReport
// per (hostname, window), and a FindingEvent per gpudoctor_finding_active{id,severity,...} window.
//
// The per-window aggregation runs in Prometheus, never here: one /api/v1/query_range per query
// of PrometheusQueries() (a fixed set, whatever the number of GPUs or nodes; spans longer than
// 10,000 windows are asked in chunks), step = the window, each point an `_over_time` aggregate of
// the window (T - window, T], filed at the window's start T - window. avg_over_time for SM clock,
// power, utilisation and temperature; max_over_time of gpudoctor_gpu_throttle_active per reason
// (only reasons active in the window are sent) and of gpudoctor_finding_active (> 0 only);
// last_over_time for counters (ECC, PCIe replays), the power limit and gpudoctor_gpu_info; max of
// the max SM clock. GPU series are reduced to the labels the join needs (`max by (hostname, gpu,
// pci_bus_id)`), so an answer is O(GPUs x windows) numbers plus one short label set per GPU.
// dcgm-exporter names are read only for nodes without gpudoctor_gpu_info (a watch with
// --dcgm-compat is read once).
//
// Units: gpudoctor_* Hz -> MHz, ratio -> %, watts; DCGM_FI_DEV_SM_CLOCK MHz, POWER_USAGE W,
// GPU_UTIL %, GPU_TEMP C. Labels: hostname|Hostname, gpu, uuid|UUID, pci_bus_id,
// model|modelName, serial. The serial (and uuid and model of the trimmed series) is on
// gpudoctor_gpu_info (queried first): every other series gets the identity of the info series
// with the same node and bus id (else uuid, else GPU index) at that time (GpuIdentities), so a
// card moved between slots, and the faults named by bus id, follow its serial. Values outside the
// physical ranges (fleet_model.h) are dropped and counted in one input problem per metric.
//
// http or https (core/http_get, libcurl): `auth` gives the CA file, bearer token or basic auth;
// credentials never appear in errors. All the requests together end by `deadline` (a slow or
// trickling server cannot hold fleet past --deadline); each answer is at most max_answer_bytes and
// all of them together max_total_bytes (an endless answer is aborted). The first failed request
// ends the read and is returned as an error naming the URL (no userinfo) and the bound, the HTTP
// status (401/403: permission_denied, saying whether credentials were given) or the TLS failure.
// A metric the server does not have is simply absent. Blocking; not thread-safe on one FleetData.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "fleet/fleet_model.h"

namespace gpudoctor::fleet {

struct PrometheusAuth {
  std::string ca_file;                     // PEM CA bundle for https; empty: the system trust store
  std::string bearer_token;                // Authorization: Bearer (empty: none)
  std::string basic_user, basic_password;  // basic auth when basic_user is set
};

struct PrometheusQuery {
  std::string url;  // http[s]://host:port[/prefix]
  int64_t start_s = 0, end_s = 0;
  int64_t step_s = 300;  // the window, seconds (>= 1)
  TimePoint deadline = SteadyClock::now() + std::chrono::seconds(10);
  // One metric of 4,096 GPUs x 49 windows is 4.3 MiB of JSON (measured; ~21 bytes per GPU and
  // window): 256 MiB holds 100,000 GPUs x ~120 windows (10 h of 5-minute windows).
  size_t max_answer_bytes = size_t{256} << 20;
  size_t max_total_bytes = size_t{4} << 30;
  PrometheusAuth auth;
};

// What one read cost: HTTP requests made and answer bytes received.
struct PrometheusReadStats {
  int queries = 0;
  size_t bytes = 0;
};

Status ReadPrometheus(const PrometheusQuery& query, FleetData& data,
                      PrometheusReadStats* stats = nullptr);

// One query of the read: the metric it reads, the field it fills and the PromQL expression.
struct PromQl {
  std::string metric, field, expr;
};
// The queries ReadPrometheus makes for this window (seconds), in order (gpudoctor_gpu_info
// first).
std::vector<PromQl> PrometheusQueries(int64_t window_s);

// A GPU's identity as gpudoctor_gpu_info names it (empty fields: unknown; a placeholder serial
// is empty).
struct GpuIdentity {
  std::string serial, uuid, model;
};

// Identities over time from gpudoctor_gpu_info{hostname, pci_bus_id, uuid, gpu, serial, model}
// (placeholder serials are empty), keyed by node and bus id (canonical), uuid and GPU index.
class GpuIdentities {
 public:
  static constexpr const char* kInfo = "gpudoctor_gpu_info";
  // Adds one query_range answer for gpudoctor_gpu_info; its times are filed `shift_s` earlier
  // (the window's start, as ReadPrometheus files every point).
  Status AddInfoMatrix(const std::string& body, int64_t shift_s = 0);
  // The identity of the GPU so named on `node` at `t`: from the info point at or before t, else
  // the first one after; by bus id, else uuid (also when the bus id's has no serial), else
  // (with neither) index. Empty fields when unknown.
  GpuIdentity IdentityAt(const std::string& node, const std::string& pci_bus_id,
                         const std::string& uuid, std::optional<int> index, int64_t t) const;
  // The serial of the GPU so named on `node` at `t`: from the info point at or before t, else
  // the first one after; by bus id, else uuid, else (with neither) index. Empty when unknown.
  std::string SerialAt(const std::string& node, const std::string& pci_bus_id,
                       const std::string& uuid, std::optional<int> index, int64_t t) const;

 private:
  // Identities interned once; per key the (time, identity) points in time order with repeats of
  // the previous identity left out (100,000 GPUs x 3 keys x windows would otherwise hold millions
  // of copies of the same strings).
  std::vector<GpuIdentity> identities_;
  std::map<std::string, uint32_t> identity_index_;
  std::map<std::string, std::vector<std::pair<int64_t, uint32_t>>> by_key_;
};

// Parses one query_range answer for `metric` into data, serials joined from `ids` (exposed for
// tests and fuzzing).
Status AddPrometheusMatrix(const std::string& metric, const std::string& body,
                           const std::string& source, const GpuIdentities& ids, FleetData& data);
// The same without identities (the series' own serial labels only).
Status AddPrometheusMatrix(const std::string& metric, const std::string& body,
                           const std::string& source, FleetData& data);

}  // namespace gpudoctor::fleet
