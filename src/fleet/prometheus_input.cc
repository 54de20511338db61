#include "fleet/prometheus_input.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/http_get.h"
#include "core/strings.h"
#include "facts/gpu_facts.h"
#include "fleet/prom_matrix.h"
#include "rules/stored_action.h"

namespace gpudoctor::fleet {
namespace {

using nlohmann::json;

struct MetricSpec {
  const char* name;   // the metric the query reads
  const char* field;  // sm, power, util, temp, reason_bit, reasons, sbe, dbe, replays, max_sm,
                      // limit, finding, info
  double scale;
};

// What each query reads. The per-window aggregation runs in Prometheus (fleet.md "--prometheus").
struct QuerySpec {
  MetricSpec metric;
  const char* over_time;  // avg_over_time, max_over_time, last_over_time
  const char* by;         // the labels kept (others, such as instance and job, are summed away)
  bool dcgm;              // dcgm-exporter names: left out for nodes that export gpudoctor_gpu_info
  bool positive_only;     // "> 0": points that carry nothing are not sent
};

constexpr const char* kGpuBy = "hostname, gpu, pci_bus_id";
constexpr const char* kDcgmBy = "Hostname, gpu, UUID, pci_bus_id, modelName";
// Only the reasons the straggler classes use (outliers.h kHardwareReasons, kConfigReasons, the
// SW power cap).
constexpr const char* kReasonMatch =
    "{reason=~\"applications_clocks|sw_power_cap|hw_slowdown|sync_boost|hw_thermal|hw_power_brake|"
    "display_clock\"}";

constexpr QuerySpec kQueries[] = {
    {{"gpudoctor_gpu_info", "info", 1},
     "last_over_time",
     "hostname, gpu, uuid, pci_bus_id, model, serial",
     false,
     false},
    {{"gpudoctor_gpu_sm_clock_hertz", "sm", 1e-6}, "avg_over_time", kGpuBy, false, false},
    {{"gpudoctor_gpu_power_watts", "power", 1}, "avg_over_time", kGpuBy, false, false},
    {{"gpudoctor_gpu_utilization_ratio", "util", 100}, "avg_over_time", kGpuBy, false, false},
    {{"gpudoctor_gpu_temperature_celsius", "temp", 1}, "avg_over_time", kGpuBy, false, false},
    {{"gpudoctor_gpu_throttle_active", "reason_bit", 1},
     "max_over_time",
     "hostname, gpu, pci_bus_id, reason",
     false,
     true},
    {{"gpudoctor_gpu_ecc_sbe_volatile_total", "sbe", 1}, "last_over_time", kGpuBy, false, false},
    {{"gpudoctor_gpu_ecc_dbe_volatile_total", "dbe", 1}, "last_over_time", kGpuBy, false, false},
    {{"gpudoctor_gpu_pcie_replays_total", "replays", 1}, "last_over_time", kGpuBy, false, false},
    {{"gpudoctor_gpu_sm_clock_max_hertz", "max_sm", 1e-6}, "max_over_time", kGpuBy, false, false},
    {{"gpudoctor_gpu_power_limit_watts", "limit", 1}, "last_over_time", kGpuBy, false, false},
    {{"gpudoctor_finding_active", "finding", 1}, "max_over_time", nullptr, false, true},
    {{"DCGM_FI_DEV_SM_CLOCK", "sm", 1}, "avg_over_time", kDcgmBy, true, false},
    {{"DCGM_FI_DEV_POWER_USAGE", "power", 1}, "avg_over_time", kDcgmBy, true, false},
    {{"DCGM_FI_DEV_GPU_UTIL", "util", 1}, "avg_over_time", kDcgmBy, true, false},
    {{"DCGM_FI_DEV_GPU_TEMP", "temp", 1}, "avg_over_time", kDcgmBy, true, false},
    {{"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "reasons", 1}, "last_over_time", kDcgmBy, true, true},
};

struct ReasonBit {
  const char* name;
  uint32_t bit;
};
constexpr ReasonBit kReasonBits[] = {
    {"applications_clocks", 0x2}, {"sw_power_cap", 0x4},    {"hw_slowdown", 0x8},
    {"sync_boost", 0x10},         {"sw_thermal", 0x20},     {"hw_thermal", 0x40},
    {"hw_power_brake", 0x80},     {"display_clock", 0x100},
};

const MetricSpec* SpecOf(const std::string& metric) {
  for (const auto& q : kQueries) {
    if (metric == q.metric.name) return &q.metric;
  }
  return nullptr;
}

// Prometheus' own reason for an error answer ({"status":"error","error":"..."}), for the message.
std::string BodyError(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("error") || !j["error"].is_string()) return "";
  return ": " + Sanitize(j["error"].get<std::string>(), 200);
}

std::optional<Severity> SeverityOf(const std::string& label) {
  // Prometheus' alerting vocabulary as well as gpudoctor's own.
  if (label == "critical") return Severity::kCrit;
  if (label == "warning") return Severity::kWarn;
  return ParseSeverity(label);
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

std::string IdKey(const std::string& node, char kind, const std::string& id) {
  return node + '\x1f' + kind + '\x1f' + id;
}

Status AddMatrix(const MetricSpec& spec, const std::string& body, const std::string& source,
                 const GpuIdentities& ids, int64_t shift_s, FleetData& data) {
  auto& index = data.sample_at;
  const ValueRange* range = nullptr;
  const std::string f = spec.field;
  if (f == "sm" || f == "max_sm") range = &kSmClockRangeMhz;
  if (f == "power" || f == "limit") range = &kPowerRangeW;
  if (f == "util") range = &kUtilRangePct;
  if (f == "temp") range = &kTempRangeC;
  int out_of_range = 0;
  bool unnamed = false;
  auto on_series = [&](const PromLabels& m, const std::vector<PromPoint>& points) {
    std::string node = PromLabel(m, {"hostname", "Hostname", "instance"});
    if (node.empty()) {
      unnamed = true;
      return;
    }
    std::string gpu = PromLabel(m, {"gpu"});
    const std::string& field = f;
    uint32_t reason_bit = 0;
    if (field == "reason_bit") {
      std::string reason = PromLabel(m, {"reason"});
      for (const auto& r : kReasonBits) {
        if (reason == r.name) reason_bit = r.bit;
      }
      if (reason_bit == 0) return;  // a reason the straggler classes do not use
    }
    const std::string label_uuid = PromLabel(m, {"uuid", "UUID"});
    const std::string label_model = PromLabel(m, {"model", "modelName"});
    const std::string bus = CanonicalBusId(PromLabel(m, {"pci_bus_id"}));
    const std::string label_serial = SerialOrEmpty(PromLabel(m, {"serial"}));
    std::optional<int> gpu_index;
    if (!gpu.empty()) gpu_index = std::atoi(gpu.c_str());
    for (const PromPoint& point : points) {
      if (!point.valid) continue;
      int64_t t = static_cast<int64_t>(point.time_s) - shift_s;
      double v = point.value * spec.scale;
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
        e.id = PromLabel(m, {"id"});
        if (e.id.empty()) continue;
        e.severity = SeverityOf(PromLabel(m, {"severity"})).value_or(Severity::kWarn);
        e.layer = ParseLayer(PromLabel(m, {"layer"})).value_or(Layer::kHardware);
        e.action = ReadFindingAction(PromLabel(m, {"action"}), e.id, std::nullopt, "");
        e.gpu.pci_bus_id = bus;
        e.gpu.uuid = label_uuid;
        e.gpu.serial = label_serial;
        e.gpu.index = gpu_index;
        data.findings.push_back(e);
        continue;
      }
      if (gpu.empty() && label_uuid.empty()) continue;
      Card c;
      c.node = node;
      c.index = gpu_index;
      c.pci_bus_id = bus;
      c.uuid = label_uuid;
      c.serial = label_serial;
      c.model = label_model;
      // gpudoctor_gpu_info carries the serial (and, for the trimmed queries, uuid and model):
      // joined by node and bus id (or uuid, index) at this time.
      if (c.serial.empty() || c.uuid.empty() || c.model.empty()) {
        GpuIdentity id = ids.IdentityAt(node, c.pci_bus_id, c.uuid, c.index, t);
        if (c.serial.empty()) c.serial = id.serial;
        if (c.uuid.empty()) c.uuid = id.uuid;
        if (c.model.empty()) c.model = id.model;
      }
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
      float fv = static_cast<float>(v);
      uint32_t u = v < 0 ? 0 : static_cast<uint32_t>(std::min(v, 4294967295.0));
      if (field == "sm") s.sm_clock_mhz = fv;
      if (field == "power") s.power_w = fv;
      if (field == "util") s.util_pct = fv;
      if (field == "temp") s.temp_c = fv;
      if (field == "reasons") s.clock_event_reasons = s.clock_event_reasons.value_or(0) | u;
      if (field == "reason_bit" && v >= 0.5) {
        s.clock_event_reasons = s.clock_event_reasons.value_or(0) | reason_bit;
      }
      if (field == "sbe") s.ecc_sbe = u;
      if (field == "dbe") s.ecc_dbe = u;
      if (field == "replays") s.pcie_replays = u;
    }
  };
  Status st = ReadPromMatrix(spec.name, body, on_series);
  if (unnamed) {
    data.problems.push_back(
        {source, "", std::string(spec.name) + ": a series without a hostname label; skipped"});
  }
  if (out_of_range > 0) {
    data.problems.push_back({source, "",
                             std::string(spec.name) + ": " + std::to_string(out_of_range) +
                                 " value(s) out of physical range dropped"});
  }
  return st;
}

void CountGpus(FleetData& data) {
  std::map<std::pair<std::string, int64_t>, int> counts;
  for (const auto& s : data.samples) ++counts[{data.cards[s.card].node, s.time_s}];
  for (auto& r : data.reports) {
    auto it = counts.find({r.node, r.time_s});
    if (it != counts.end()) r.gpu_count = std::max(r.gpu_count, it->second);
  }
}

Status AddParsed(const MetricSpec& spec, const std::string& body, const std::string& source,
                 const GpuIdentities& ids, int64_t shift_s, FleetData& data) {
  return AddMatrix(spec, body, source, ids, shift_s, data);
}

}  // namespace

Status GpuIdentities::AddInfoMatrix(const std::string& body, int64_t shift_s) {
  std::set<std::string> touched;
  Status st =
      ReadPromMatrix(kInfo, body, [&](const PromLabels& m, const std::vector<PromPoint>& points) {
        std::string node = PromLabel(m, {"hostname", "Hostname", "instance"});
        if (node.empty()) return;
        GpuIdentity id;
        id.serial = SerialOrEmpty(PromLabel(m, {"serial"}));  // a placeholder serial is no identity
        id.uuid = PromLabel(m, {"uuid", "UUID"});
        id.model = PromLabel(m, {"model", "modelName"});
        std::string id_key = id.serial + '\x1f' + id.uuid + '\x1f' + id.model;
        auto [ix, added] = identity_index_.emplace(id_key, identities_.size());
        if (added) identities_.push_back(id);
        std::vector<std::string> keys;
        if (auto bus = CanonicalBusId(PromLabel(m, {"pci_bus_id"})); !bus.empty()) {
          keys.push_back(IdKey(node, 'b', bus));
        }
        if (!id.uuid.empty()) keys.push_back(IdKey(node, 'u', id.uuid));
        if (auto gpu = PromLabel(m, {"gpu"}); !gpu.empty()) keys.push_back(IdKey(node, 'i', gpu));
        for (const auto& k : keys) {
          auto& list = by_key_[k];
          bool have_prev = false;
          int64_t prev = 0;
          for (const PromPoint& p : points) {
            if (!p.valid) continue;  // the value is always 1; only the time matters
            int64_t t = static_cast<int64_t>(p.time_s) - shift_s;
            // A series' unbroken run (one point per step, the step being shift_s) is one entry:
            // its first time. After a gap the series starts a new run (another card may have
            // sat there in between).
            bool run = shift_s > 0 && have_prev && t > prev && t - prev <= shift_s;
            have_prev = true;
            prev = t;
            if (!run) list.emplace_back(t, ix->second);
          }
          touched.insert(k);
        }
      });
  // Time order, and a point that repeats the identity before it says nothing new.
  for (const auto& k : touched) {
    auto& list = by_key_[k];
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    size_t kept = 0;
    for (size_t i = 0; i < list.size(); ++i) {
      if (kept > 0 && list[kept - 1].second == list[i].second) continue;
      list[kept++] = list[i];
    }
    list.resize(kept);
  }
  return st;
}

GpuIdentity GpuIdentities::IdentityAt(const std::string& node, const std::string& pci_bus_id,
                                      const std::string& uuid, std::optional<int> index,
                                      int64_t t) const {
  auto at = [&](const std::string& key) -> GpuIdentity {
    auto it = by_key_.find(key);
    if (it == by_key_.end() || it->second.empty()) return {};
    const auto& points = it->second;
    // The latest point at or before t, else the first after.
    auto p = std::upper_bound(points.begin(), points.end(), t,
                              [](int64_t v, const auto& e) { return v < e.first; });
    if (p != points.begin()) --p;
    return identities_[p->second];
  };
  GpuIdentity found;
  if (!pci_bus_id.empty()) found = at(IdKey(node, 'b', pci_bus_id));
  if (found.serial.empty() && !uuid.empty()) {
    GpuIdentity by_uuid = at(IdKey(node, 'u', uuid));
    if (!by_uuid.serial.empty() || found.uuid.empty()) found = by_uuid;
  }
  if (found.serial.empty() && found.uuid.empty() && pci_bus_id.empty() && uuid.empty() && index) {
    found = at(IdKey(node, 'i', std::to_string(*index)));
  }
  return found;
}

std::string GpuIdentities::SerialAt(const std::string& node, const std::string& pci_bus_id,
                                    const std::string& uuid, std::optional<int> index,
                                    int64_t t) const {
  return IdentityAt(node, pci_bus_id, uuid, index, t).serial;
}

Status AddPrometheusMatrix(const std::string& metric, const std::string& body,
                           const std::string& source, FleetData& data) {
  return AddPrometheusMatrix(metric, body, source, GpuIdentities(), data);
}

Status AddPrometheusMatrix(const std::string& metric, const std::string& body,
                           const std::string& source, const GpuIdentities& ids, FleetData& data) {
  const MetricSpec* spec = SpecOf(metric);
  if (spec == nullptr) return InvalidArgument("unknown metric " + metric);
  Status s = AddParsed(*spec, body, source, ids, 0, data);
  CountGpus(data);
  return s;
}

std::vector<PromQl> PrometheusQueries(int64_t window_s) {
  const std::string range = "[" + std::to_string(std::max<int64_t>(1, window_s)) + "s]";
  // Nodes that export gpudoctor_gpu_info are read from the gpudoctor names; the DCGM names of
  // the same GPUs (watch --dcgm-compat) would only repeat them.
  const std::string gpudoctor_nodes = " unless on (Hostname) label_replace(max by (hostname) (" +
                                      std::string("last_over_time(gpudoctor_gpu_info") + range +
                                      ")), \"Hostname\", \"$1\", \"hostname\", \"(.*)\")";
  std::vector<PromQl> out;
  for (const auto& q : kQueries) {
    std::string selector = q.metric.name;
    if (std::string_view(q.metric.field) == "reason_bit") selector += kReasonMatch;
    std::string expr = std::string(q.over_time) + "(" + selector + range + ")";
    if (q.by != nullptr) expr = "max by (" + std::string(q.by) + ") (" + expr + ")";
    if (q.positive_only) expr += " > 0";
    if (q.dcgm) expr = "(" + expr + ")" + gpudoctor_nodes;
    out.push_back({q.metric.name, q.metric.field, expr});
  }
  return out;
}

Status ReadPrometheus(const PrometheusQuery& q, FleetData& data, PrometheusReadStats* stats) {
  if (q.url.rfind("http://", 0) != 0 && q.url.rfind("https://", 0) != 0) {
    return InvalidArgument("only http:// and https:// Prometheus URLs are supported, got " +
                           Sanitize(q.url, 80));
  }
  std::string base = q.url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  const std::string source = UrlOrigin(q.url);  // no userinfo (a password) in any output
  const std::string where = "Prometheus at " + source;
  size_t budget = q.max_total_bytes;
  const int64_t w = std::max<int64_t>(1, q.step_s);
  auto floor_div = [](int64_t a, int64_t b) {
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
  };
  // An evaluation at T aggregates (T - w, T]: the window starting at T - w, where its values are
  // filed (the analysis' window floor(t / w)). Prometheus answers at most 11,000 points per
  // series: longer spans are asked in chunks of kMaxSteps windows.
  constexpr int64_t kMaxSteps = 10000;
  const int64_t first = (floor_div(q.start_s, w) + 1) * w;
  const int64_t last = std::max(first, (floor_div(q.end_s, w) + 1) * w);
  GpuIdentities ids;
  std::vector<PromQl> queries = PrometheusQueries(w);
  // The identity first (gpudoctor_gpu_info{serial}, whole span), then the metrics joined to it.
  for (const PromQl& pq : queries) {
    const bool info = pq.metric == GpuIdentities::kInfo;
    for (int64_t from = first; from <= last; from += kMaxSteps * w) {
      int64_t to = std::min(last, from + (kMaxSteps - 1) * w);
      HttpGetRequest req;
      req.url = base + "/api/v1/query_range?query=" + UrlEncode(pq.expr) +
                "&start=" + std::to_string(from) + "&end=" + std::to_string(to) +
                "&step=" + std::to_string(w);
      req.deadline = q.deadline;
      req.max_body_bytes = std::min(q.max_answer_bytes, budget);
      req.ca_file = q.auth.ca_file;
      req.bearer_token = q.auth.bearer_token;
      req.basic_user = q.auth.basic_user;
      req.basic_password = q.auth.basic_password;
      auto res = HttpGet(req);
      if (stats != nullptr) ++stats->queries;
      if (!res.ok()) {
        const Status& e = res.status();
        std::string hint;
        if (e.message().find("TLS: ") != std::string::npos && q.auth.ca_file.empty()) {
          hint = " (a private CA? --prometheus-ca FILE)";
        }
        return Status(e.code(),
                      where + (e.code() == StatusCode::kIoError ? " did not answer: " : ": ") +
                          e.message() + hint + " (query " + pq.metric + ")");
      }
      if (stats != nullptr) stats->bytes += res->body.size();
      if (res->status == 401 || res->status == 403) {
        return PermissionDenied(
            where + " answered HTTP " + std::to_string(res->status) +
            (res->status == 401 ? " (unauthorized)" : " (forbidden)") +
            (q.auth.bearer_token.empty() && q.auth.basic_user.empty()
                 ? ": it wants credentials (--prometheus-token-file, or --prometheus-user with "
                   "--prometheus-password-file)"
                 : ": the credentials given were refused") +
            " (query " + pq.metric + ")");
      }
      if (res->status != 200) {
        return IoError(where + " answered HTTP " + std::to_string(res->status) + " for " +
                       pq.metric + BodyError(res->body));
      }
      budget -= std::min(budget, res->body.size());
      Status s = info ? ids.AddInfoMatrix(res->body, w)
                      : AddParsed(*SpecOf(pq.metric), res->body, source, ids, w, data);
      if (!s.ok()) data.problems.push_back({source, "", s.message()});
    }
  }
  CountGpus(data);
  return Status::Ok();
}

}  // namespace gpudoctor::fleet
