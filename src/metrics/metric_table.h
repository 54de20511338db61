// Metric descriptor tables: one table per facts struct, naming every numeric fact once — its
// JSON key in `check --json`, its metric name, type, unit and help, and its dcgm-exporter twin —
// with a reader that returns the value in the metric's base unit. The same tables feed the
// exporter (/metrics), the history store (series names) and docs/metrics.md, so a fact cannot be
// spelled two ways. Pure data and pure functions; thread-safe.
//
// Names follow gpudoctor_<subsystem>_<name>_<unit> with Prometheus base units (seconds, bytes,
// watts, hertz, celsius, ratio 0-1); counters end in _total. Absent facts produce no point:
// "unsupported" is never exported as 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "facts/snapshot.h"

namespace gpudoctor {

enum class MetricType { kGauge, kCounter };
const char* MetricTypeName(MetricType t);  // "gauge", "counter"

struct MetricInfo {
  std::string_view name;  // gpudoctor_gpu_temperature_celsius
  MetricType type = MetricType::kGauge;
  std::string_view help;
  std::string_view labels;     // extra labels beyond the subject's identity, e.g. "reason"
  std::string_view dcgm_name;  // DCGM_FI_DEV_GPU_TEMP; empty when dcgm-exporter has none
  double dcgm_scale = 1;       // our value × scale = dcgm-exporter's unit (hertz → MHz: 1e-6)
  // The twin's type as dcgm-exporter's counters file types it; absent: the same as ours.
  std::optional<MetricType> dcgm_type;
  // A second dcgm-exporter name for the same field (DCGM renamed it; both are written).
  std::string_view dcgm_alias;
};

// The twin's HELP text: ours without the "(0-1)" ratio note, with dcgm-exporter's unit
// ("(in %)", "(in MiB)", "(in MHz)", "(in W)", "(in C)", "(in mJ)", "(in B/s)") from the
// name's unit suffix and the scale.
std::string DcgmHelp(const MetricInfo& m);

// A fact's own value with its own type (counts stay exact integers, flags stay booleans): JSON
// writes it as is; metrics and the store take AsDouble() × the descriptor's scale.
struct FactValue {
  enum class Kind { kInt, kUint, kDouble, kBool };
  Kind kind = Kind::kDouble;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  bool b = false;
  double AsDouble() const;
};

template <typename T>
std::optional<FactValue> Fact(const std::optional<T>& v) {
  if (!v) return std::nullopt;
  FactValue f;
  if constexpr (std::is_same_v<T, bool>) {
    f.kind = FactValue::Kind::kBool;
    f.b = *v;
  } else if constexpr (std::is_floating_point_v<T>) {
    f.kind = FactValue::Kind::kDouble;
    f.d = *v;
  } else if constexpr (std::is_signed_v<T>) {
    f.kind = FactValue::Kind::kInt;
    f.i = *v;
  } else {
    f.kind = FactValue::Kind::kUint;
    f.u = *v;
  }
  return f;
}

// One numeric fact of a facts struct: where it goes in `check --json` and which metric it is.
template <typename Facts>
struct FieldDescriptor {
  std::string_view json_key;  // key in the struct's JSON object; empty: not in the JSON
  MetricInfo metric;          // metric.name empty: not exported
  double scale = 1;           // metric value = fact value × scale (mW → W: 1e-3)
  std::optional<FactValue> (*read)(const Facts&);
};

// Writes every descriptor with a json_key whose fact is known into `j`, in table order.
template <typename Facts, typename Json>
void PutFacts(Json& j, const std::vector<FieldDescriptor<Facts>>& table, const Facts& facts) {
  for (const auto& f : table) {
    if (f.json_key.empty()) continue;
    std::optional<FactValue> v = f.read(facts);
    if (!v) continue;
    std::string key(f.json_key);
    switch (v->kind) {
      case FactValue::Kind::kInt:
        j[key] = v->i;
        break;
      case FactValue::Kind::kUint:
        j[key] = v->u;
        break;
      case FactValue::Kind::kDouble:
        j[key] = v->d;
        break;
      case FactValue::Kind::kBool:
        j[key] = v->b;
        break;
    }
  }
}

// The subject a point is about: which GPU (index; -1 for the host) and extra labels such as
// {"nic","eth0"}, {"target","10.0.0.1"}, {"mount","/"}, {"reason","hw_slowdown"}, {"xid","79"}.
using MetricLabels = std::vector<std::pair<std::string, std::string>>;

struct MetricPoint {
  const MetricInfo* info = nullptr;
  int gpu = -1;
  MetricLabels labels;
  double value = 0;
};

const std::vector<FieldDescriptor<GpuFacts>>& GpuFieldTable();
// Counters read at both ends of a window; exported from the later read.
const std::vector<FieldDescriptor<GpuCounterRead>>& GpuCounterFieldTable();
const std::vector<FieldDescriptor<CpuFacts>>& CpuFieldTable();
const std::vector<FieldDescriptor<MemoryFacts>>& MemoryFieldTable();
const std::vector<FieldDescriptor<MountFacts>>& MountFieldTable();         // label mount
const std::vector<FieldDescriptor<NicFacts>>& NicFieldTable();             // label nic
const std::vector<FieldDescriptor<IbPortFacts>>& IbPortFieldTable();       // device, port
const std::vector<FieldDescriptor<TargetProbeFacts>>& TargetFieldTable();  // label target
const std::vector<FieldDescriptor<PressureLine>>& PressureFieldTable();    // resource, kind
// Inlet/ambient and board temperature sensors; labels sensor, source.
const std::vector<FieldDescriptor<TemperatureSensor>>& TemperatureSensorFieldTable();
// [[job]] step times; label job.
const std::vector<FieldDescriptor<JobFacts>>& JobFieldTable();
// Inference servers' own metrics; labels inference, engine, model.
const std::vector<FieldDescriptor<InferenceFacts>>& InferenceFieldTable();

// Metrics computed from more than one field (throttle reasons per bit, Xid counts per code,
// finding and probe states) are described here so docs and /metrics list them too.
extern const MetricInfo kGpuThrottleActive;    // {reason}, 1 when that clock event reason is set
extern const MetricInfo kGpuXidErrorsTotal;    // {xid}, kernel-log Xid lines for this GPU
extern const MetricInfo kGpuInfo;              // 1, identity in labels (serial, vbios, driver)
extern const MetricInfo kGpuLost;              // 1 when NVML reports the GPU lost
extern const MetricInfo kGpuHung;              // 1 when an NVML call on the GPU hung
extern const MetricInfo kFindingActive;        // {id, severity, layer, action}
extern const MetricInfo kFindingSeverity;      // {id, layer}: 1 info, 2 warn, 3 crit
extern const MetricInfo kFindingAcknowledged;  // {id, layer}: 1 when acked
extern const MetricInfo kFindingSilenced;      // {id, layer}: 1 while silenced
extern const MetricInfo kFindingOpenedTimestampSeconds;  // {id, layer}: unix s it opened
extern const MetricInfo kBuildInfo;                      // {version, revision, driver_version}: 1
extern const MetricInfo kLastTickTimestampSeconds;       // unix s of the served tick
extern const MetricInfo kTickIntervalSeconds;            // configured interval (s)
extern const MetricInfo kProbeSuccess;                   // {probe}
extern const MetricInfo kProbeDurationSeconds;           // {probe}

// Every metric gpudoctor can export, table order (docs/metrics.md is generated from it).
std::vector<const MetricInfo*> AllMetrics();
const MetricInfo* FindMetric(std::string_view name);

// A series the history can plot with a metric name alone (no labels beyond the GPU): the GPU
// tables (one series per GPU), the host CPU and memory tables (one series for the host) and the
// job step-time gauges (one series per job, label job; the first job's when none is given). The
// dashboard's metric choice comes from this list (GET /api/v1/series), never a typed copy.
struct PlottableMetric {
  const MetricInfo* info = nullptr;
  bool per_gpu = false;
  std::string_view unit;  // from the name's suffix: "°C", "W", "Hz", "bytes", "0-1", "" (count)
};
std::vector<PlottableMetric> PlottableMetrics();

// Every numeric fact of the snapshot as points (GPU, host, NIC, target, mount, pressure, Xid
// counts per GPU and code, probe success/duration). Findings are not included (the exporter
// adds them from the findings it is given).
std::vector<MetricPoint> FlattenSnapshot(const Snapshot& snap);

// The points' labels as one canonical text, "nic=eth0" or "reason=hw_slowdown,xid=79" (sorted
// keys as given); the history store keys series by (name, gpu, this text).
std::string LabelsKey(const MetricLabels& labels);

}  // namespace gpudoctor
