#include "fleet/prometheus_input.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "core/http_get.h"
#include "core/strings.h"
#include "facts/gpu_facts.h"
#include "rules/stored_action.h"

namespace gpudoctor::fleet {
namespace {

using nlohmann::json;

struct MetricSpec {
  const char* name;
  const char* field;  // sm, power, util, temp, reasons, sbe, dbe, replays, max_sm, limit, finding
  double scale;
};

constexpr MetricSpec kMetrics[] = {
    {"gpudoctor_gpu_sm_clock_hertz", "sm", 1e-6},
    {"gpudoctor_gpu_power_watts", "power", 1},
    {"gpudoctor_gpu_utilization_ratio", "util", 100},
    {"gpudoctor_gpu_temperature_celsius", "temp", 1},
    {"gpudoctor_gpu_clock_event_reasons", "reasons", 1},
    {"gpudoctor_gpu_ecc_sbe_volatile_total", "sbe", 1},
    {"gpudoctor_gpu_ecc_dbe_volatile_total", "dbe", 1},
    {"gpudoctor_gpu_pcie_replays_total", "replays", 1},
    {"gpudoctor_gpu_sm_clock_max_hertz", "max_sm", 1e-6},
    {"gpudoctor_gpu_power_limit_watts", "limit", 1},
    {"gpudoctor_finding_active", "finding", 1},
    {"DCGM_FI_DEV_SM_CLOCK", "sm", 1},
    {"DCGM_FI_DEV_POWER_USAGE", "power", 1},
    {"DCGM_FI_DEV_GPU_UTIL", "util", 1},
    {"DCGM_FI_DEV_GPU_TEMP", "temp", 1},
};

std::string Label(const json& m, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    auto it = m.find(k);
    if (it != m.end() && it->is_string()) return it->get<std::string>();
  }
  return {};
}

const MetricSpec* SpecOf(const std::string& metric) {
  for (const auto& s : kMetrics) {
    if (metric == s.name) return &s;
  }
  return nullptr;
}

void EnsureReport(FleetData& data, const std::string& node, int64_t t, const std::string& src) {
  auto [it, inserted] = data.seen.emplace(std::make_pair(node, t), src);
  if (!inserted) return;
  NodeReport r;
  r.node = node;
  r.source = src;
  r.time_s = t;
  data.reports.push_back(r);
}

// data.result of a successful query_range answer, or the error.
Result<const json*> MatrixResult(const std::string& metric, const json& body) {
  if (!body.is_object() || body.value("status", "") != "success") {
    std::string err = body.is_object() ? body.value("error", "") : "";
    return ParseError("Prometheus answered with an error for " + metric +
                      (err.empty() ? "" : ": " + err));
  }
  if (auto d = body.find("data"); d != body.end() && d->is_object()) {
    if (auto r = d->find("result"); r != d->end() && r->is_array()) return &*r;
  }
  return ParseError("no data.result in the answer for " + metric);
}

std::string IdKey(const std::string& node, char kind, const std::string& id) {
  return node + '\x1f' + kind + '\x1f' + id;
}

Status AddMatrix(const MetricSpec& spec, const json& body, const std::string& source,
                 const GpuIdentities& ids, FleetData& data) {
  auto matrix = MatrixResult(spec.name, body);
  if (!matrix.ok()) return matrix.status();
  const json* result = *matrix;
  auto& index = data.sample_at;
  const ValueRange* range = nullptr;
  const std::string f = spec.field;
  if (f == "sm" || f == "max_sm") range = &kSmClockRangeMhz;
  if (f == "power" || f == "limit") range = &kPowerRangeW;
  if (f == "util") range = &kUtilRangePct;
  if (f == "temp") range = &kTempRangeC;
  int out_of_range = 0;
  for (const auto& series : *result) {
    if (!series.is_object()) continue;
    auto m = series.find("metric");
    auto vals = series.find("values");
    if (m == series.end() || !m->is_object() || vals == series.end() || !vals->is_array()) continue;
    std::string node = Label(*m, {"hostname", "Hostname", "instance"});
    if (node.empty()) {
      data.problems.push_back({source, "",
                               std::string(spec.name) + ": a series without a "
                                                        "hostname label; skipped"});
      continue;
    }
    std::string gpu = Label(*m, {"gpu"});
    std::string field = spec.field;
    for (const auto& point : *vals) {
      if (!point.is_array() || point.size() != 2 || !point[0].is_number() ||
          !point[1].is_string()) {
        continue;
      }
      int64_t t = static_cast<int64_t>(point[0].get<double>());
      char* end = nullptr;
      std::string text = point[1].get<std::string>();
      double v = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || !std::isfinite(v)) continue;
      v *= spec.scale;
      if (range != nullptr && !range->Contains(v)) {
        ++out_of_range;  // a broken reading, never a measurement
        continue;
      }
      EnsureReport(data, node, t, source);
      if (field == "finding") {
        if (v < 0.5) continue;
        FindingEvent e;
        e.node = node;
        e.time_s = t;
        e.id = Label(*m, {"id"});
        if (e.id.empty()) continue;
        e.severity = ParseSeverity(Label(*m, {"severity"})).value_or(Severity::kWarn);
        e.layer = ParseLayer(Label(*m, {"layer"})).value_or(Layer::kHardware);
        e.action = ReadFindingAction(Label(*m, {"action"}), e.id, std::nullopt, "");
        e.gpu.pci_bus_id = CanonicalBusId(Label(*m, {"pci_bus_id"}));
        e.gpu.uuid = Label(*m, {"uuid", "UUID"});
        e.gpu.serial = SerialOrEmpty(Label(*m, {"serial"}));
        if (!gpu.empty()) e.gpu.index = std::atoi(gpu.c_str());
        data.findings.push_back(e);
        continue;
      }
      if (gpu.empty() && Label(*m, {"uuid", "UUID"}).empty()) continue;
      Card c;
      c.node = node;
      if (!gpu.empty()) c.index = std::atoi(gpu.c_str());
      c.uuid = Label(*m, {"uuid", "UUID"});
      c.pci_bus_id = CanonicalBusId(Label(*m, {"pci_bus_id"}));
      c.serial = SerialOrEmpty(Label(*m, {"serial"}));
      // Only gpudoctor_gpu_info carries the serial: joined by node and bus id (or uuid, index).
      if (c.serial.empty()) c.serial = ids.SerialAt(node, c.pci_bus_id, c.uuid, c.index, t);
      c.model = Label(*m, {"model", "modelName"});
      uint32_t card = data.InternCard(c);
      if (field == "max_sm") {
        data.cards[card].max_sm_clock_mhz = static_cast<float>(v);
        continue;
      }
      if (field == "limit") {
        data.cards[card].power_limit_w = static_cast<float>(v);
        continue;
      }
      auto [it, inserted] = index.emplace(std::make_pair(card, t), data.samples.size());
      if (inserted) {
        GpuSample s;
        s.card = card;
        s.time_s = t;
        data.samples.push_back(s);
      }
      GpuSample& s = data.samples[it->second];
      float f = static_cast<float>(v);
      uint32_t u = v < 0 ? 0 : static_cast<uint32_t>(std::min(v, 4294967295.0));
      if (field == "sm") s.sm_clock_mhz = f;
      if (field == "power") s.power_w = f;
      if (field == "util") s.util_pct = f;
      if (field == "temp") s.temp_c = f;
      if (field == "reasons") s.clock_event_reasons = u;
      if (field == "sbe") s.ecc_sbe = u;
      if (field == "dbe") s.ecc_dbe = u;
      if (field == "replays") s.pcie_replays = u;
    }
  }
  if (out_of_range > 0) {
    data.problems.push_back({source, "",
                             std::string(spec.name) + ": " + std::to_string(out_of_range) +
                                 " value(s) out of physical range dropped"});
  }
  return Status::Ok();
}

void CountGpus(FleetData& data) {
  std::map<std::pair<std::string, int64_t>, int> counts;
  for (const auto& s : data.samples) ++counts[{data.cards[s.card].node, s.time_s}];
  for (auto& r : data.reports) {
    auto it = counts.find({r.node, r.time_s});
    if (it != counts.end()) r.gpu_count = std::max(r.gpu_count, it->second);
  }
}

}  // namespace

Status GpuIdentities::AddInfoMatrix(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) return ParseError("invalid JSON from Prometheus for " + std::string(kInfo));
  try {
    auto matrix = MatrixResult(kInfo, j);
    if (!matrix.ok()) return matrix.status();
    for (const auto& series : **matrix) {
      if (!series.is_object()) continue;
      auto m = series.find("metric");
      auto vals = series.find("values");
      if (m == series.end() || !m->is_object() || vals == series.end() || !vals->is_array()) {
        continue;
      }
      std::string node = Label(*m, {"hostname", "Hostname", "instance"});
      std::string serial = SerialOrEmpty(Label(*m, {"serial"}));
      if (node.empty() || serial.empty()) continue;  // a placeholder serial is no identity
      std::vector<std::string> keys;
      if (auto bus = CanonicalBusId(Label(*m, {"pci_bus_id"})); !bus.empty()) {
        keys.push_back(IdKey(node, 'b', bus));
      }
      if (auto uuid = Label(*m, {"uuid", "UUID"}); !uuid.empty()) {
        keys.push_back(IdKey(node, 'u', uuid));
      }
      if (auto gpu = Label(*m, {"gpu"}); !gpu.empty()) keys.push_back(IdKey(node, 'i', gpu));
      for (const auto& point : *vals) {
        if (!point.is_array() || point.size() != 2 || !point[0].is_number()) continue;
        double t = point[0].get<double>();
        if (!(t >= -9e18 && t <= 9e18)) continue;
        for (const auto& k : keys) by_key_[k][static_cast<int64_t>(t)] = serial;
      }
    }
  } catch (const std::exception& e) {
    return ParseError(std::string("unexpected answer shape: ") + e.what());
  }
  return Status::Ok();
}

std::string GpuIdentities::SerialAt(const std::string& node, const std::string& pci_bus_id,
                                    const std::string& uuid, std::optional<int> index,
                                    int64_t t) const {
  auto at = [&](const std::string& key) -> std::string {
    auto it = by_key_.find(key);
    if (it == by_key_.end() || it->second.empty()) return {};
    const auto& points = it->second;
    auto p = points.upper_bound(t);  // the latest point at or before t, else the first after
    if (p != points.begin()) --p;
    return p->second;
  };
  if (!pci_bus_id.empty()) {
    if (auto s = at(IdKey(node, 'b', pci_bus_id)); !s.empty()) return s;
  }
  if (!uuid.empty()) {
    if (auto s = at(IdKey(node, 'u', uuid)); !s.empty()) return s;
  }
  if (pci_bus_id.empty() && uuid.empty() && index)
    return at(IdKey(node, 'i', std::to_string(*index)));
  return {};
}

Status AddPrometheusMatrix(const std::string& metric, const std::string& body,
                           const std::string& source, FleetData& data) {
  return AddPrometheusMatrix(metric, body, source, GpuIdentities(), data);
}

Status AddPrometheusMatrix(const std::string& metric, const std::string& body,
                           const std::string& source, const GpuIdentities& ids, FleetData& data) {
  const MetricSpec* spec = SpecOf(metric);
  if (spec == nullptr) return InvalidArgument("unknown metric " + metric);
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) return ParseError("invalid JSON from Prometheus for " + metric);
  try {
    Status s = AddMatrix(*spec, j, source, ids, data);
    CountGpus(data);
    return s;
  } catch (const std::exception& e) {
    return ParseError(std::string("unexpected answer shape: ") + e.what());
  }
}

Status ReadPrometheus(const PrometheusQuery& q, FleetData& data) {
  if (q.url.rfind("http://", 0) != 0 && q.url.rfind("https://", 0) != 0) {
    return InvalidArgument("only http:// and https:// Prometheus URLs are supported, got " +
                           Sanitize(q.url, 80));
  }
  std::string base = q.url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  size_t budget = q.max_total_bytes;
  GpuIdentities ids;
  // The identity first (gpudoctor_gpu_info{serial}), then the metrics joined to it.
  const MetricSpec info{GpuIdentities::kInfo, "info", 1};
  std::vector<const MetricSpec*> specs = {&info};
  for (const auto& spec : kMetrics) specs.push_back(&spec);
  for (const MetricSpec* sp : specs) {
    const MetricSpec& spec = *sp;
    HttpGetRequest req;
    req.url = base + "/api/v1/query_range?query=" + UrlEncode(spec.name) +
              "&start=" + std::to_string(q.start_s) + "&end=" + std::to_string(q.end_s) +
              "&step=" + std::to_string(std::max<int64_t>(1, q.step_s));
    req.deadline = q.deadline;
    req.max_body_bytes = std::min(q.max_answer_bytes, budget);
    auto res = HttpGet(req);
    if (!res.ok()) {
      const Status& e = res.status();
      return Status(e.code(), "Prometheus at " + Sanitize(q.url, 120) +
                                  (e.code() == StatusCode::kIoError ? " did not answer: " : ": ") +
                                  e.message() + " (query " + spec.name + ")");
    }
    if (res->status != 200) {
      return IoError("Prometheus at " + Sanitize(q.url, 120) + " answered HTTP " +
                     std::to_string(res->status) + " for " + spec.name);
    }
    budget -= std::min(budget, res->body.size());
    Status s = sp == &info ? ids.AddInfoMatrix(res->body)
                           : AddPrometheusMatrix(spec.name, res->body, q.url, ids, data);
    if (!s.ok()) data.problems.push_back({q.url, "", s.message()});
  }
  return Status::Ok();
}

}  // namespace gpudoctor::fleet
