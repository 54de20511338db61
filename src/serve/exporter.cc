#include "serve/exporter.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <string_view>
#include <unordered_map>

#include "core/strings.h"
#include "core/version.h"

namespace gpudoctor {

std::string EscapeLabelValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size();) {
    const char c = v[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      // Prometheus refuses the whole page for one label value that is not UTF-8 (a mount point
      // named with a 0xFF byte): such a byte becomes U+FFFD.
      if (size_t n = Utf8SequenceLength(v, i); n > 0) {
        out.append(v.substr(i, n));
        i += n;
      } else {
        out += "\xEF\xBF\xBD";
        ++i;
      }
      continue;
    }
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
    ++i;
  }
  return out;
}

std::string EscapeHelp(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatSampleValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 9.0e15) {
    auto r = std::to_chars(buf, buf + sizeof(buf), static_cast<int64_t>(v));
    return std::string(buf, r.ptr);
  }
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

std::string DcgmBusId(std::string_view bus_id) {
  if (bus_id.empty()) return "";
  size_t colons = std::count(bus_id.begin(), bus_id.end(), ':');
  std::string domain = colons >= 2 ? std::string(bus_id.substr(0, bus_id.find(':'))) : "";
  std::string rest(colons >= 2 ? bus_id.substr(bus_id.find(':') + 1) : bus_id);
  std::string out = domain.size() < 8 ? std::string(8 - domain.size(), '0') + domain : domain;
  out += ':';
  out += rest;
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

namespace {

using Labels = std::vector<std::pair<std::string_view, std::string>>;

void AppendSample(std::string& out, std::string_view name, const Labels& labels, double value) {
  out += name;
  if (!labels.empty()) {
    out += '{';
    bool first = true;
    for (const auto& [k, v] : labels) {
      if (!first) out += ',';
      first = false;
      out += k;
      out += "=\"";
      out += EscapeLabelValue(v);
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  out += FormatSampleValue(value);
  out += '\n';
}

void AppendHeader(std::string& out, std::string_view name, std::string_view help,
                  std::string_view type) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += EscapeHelp(help);
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

const GpuFacts* FindGpu(const Snapshot& s, int index) {
  for (const GpuFacts& g : s.gpu.gpus) {
    if (g.index == index) return &g;
  }
  return nullptr;
}

// One /metrics page: the tick's points in metric-table order, the findings' state, the
// exporter's own series, and the dcgm-exporter twins when asked for.
class MetricsPage {
 public:
  MetricsPage(const TickResult& tick, const ExporterOptions& options)
      : tick_(tick),
        snap_(tick.report.snapshot),
        options_(options),
        hostname_(options.hostname.empty() ? snap_.hostname : options.hostname) {
    for (const MetricPoint& p : tick.points) {
      if (p.info != nullptr) by_name_[p.info->name].push_back(&p);
    }
    out_.reserve(tick.points.size() * 160 + 4096);
  }

  std::string Render() && {
    for (const MetricInfo* info : AllMetrics()) {
      if (!Special(info)) Points(info);
    }
    if (options_.dcgm_compat) {
      DcgmTwins();
      DcgmLastXid();
    }
    return std::move(out_);
  }

 private:
  Labels Identity(int gpu) const {
    Labels l;
    if (gpu >= 0) {
      l.emplace_back("gpu", std::to_string(gpu));
      if (const GpuFacts* g = FindGpu(snap_, gpu)) {
        l.emplace_back("uuid", g->uuid);
        l.emplace_back("pci_bus_id", g->pci_bus_id);
        l.emplace_back("model", g->name);
      }
    }
    l.emplace_back("hostname", hostname_);
    return l;
  }

  // A finding's labels: `leading` first, then the GPU or host identity, the bus id and uuid of a
  // GPU known only by them (lost at enumeration), and the subject.
  Labels FindingLabels(const Finding& d, Labels leading, bool with_serial) const {
    int gpu = d.gpu && d.gpu->index ? *d.gpu->index : -1;
    Labels id = Identity(gpu);
    leading.insert(leading.end(), id.begin(), id.end());
    if (gpu < 0 && d.gpu) {
      leading.emplace_back("pci_bus_id", d.gpu->pci_bus_id);
      leading.emplace_back("uuid", d.gpu->uuid);
    }
    // The card, as the notifier's alerts name it (a placeholder serial is none).
    if (with_serial && d.gpu && !SerialOrEmpty(d.gpu->serial).empty()) {
      leading.emplace_back("serial", d.gpu->serial);
    }
    if (!d.subject.empty()) leading.emplace_back("subject", d.subject);
    return leading;
  }

  // One sample per open finding, labelled by the finding's identity without the labels that
  // change while it stays open.
  template <typename Value>
  void FindingState(const MetricInfo* info, Value value) {
    AppendHeader(out_, info->name, info->help, MetricTypeName(info->type));
    for (const TrackedFinding& f : tick_.findings) {
      if (f.state != FindingState::kOpen) continue;
      Labels l = FindingLabels(f.last, {{"id", f.last.id}, {"layer", LayerName(f.last.layer)}},
                               /*with_serial=*/true);
      AppendSample(out_, info->name, l, value(f));
    }
  }

  // The series not made of points (findings, build, tick); true when `info` is one of them.
  bool Special(const MetricInfo* info) {
    if (info == &kFindingSeverity) {
      FindingState(info, [](const TrackedFinding& f) {
        return f.last.severity == Severity::kCrit   ? 3.0
               : f.last.severity == Severity::kWarn ? 2.0
                                                    : 1.0;
      });
    } else if (info == &kFindingAcknowledged) {
      FindingState(info, [](const TrackedFinding& f) { return f.acked ? 1.0 : 0.0; });
    } else if (info == &kFindingSilenced) {
      FindingState(info, [this](const TrackedFinding& f) {
        return f.silenced_until_ms > tick_.unix_ms ? 1.0 : 0.0;
      });
    } else if (info == &kFindingOpenedTimestampSeconds) {
      FindingState(
          info, [](const TrackedFinding& f) { return static_cast<double>(f.opened_ms) / 1000.0; });
    } else if (info == &kBuildInfo) {
      AppendHeader(out_, info->name, info->help, MetricTypeName(info->type));
      AppendSample(out_, info->name,
                   {{"version", GpudoctorVersion()},
                    {"revision", GpudoctorRevision()},
                    {"driver_version", DriverVersion()},
                    {"hostname", hostname_}},
                   1);
    } else if (info == &kLastTickTimestampSeconds) {
      AppendHeader(out_, info->name, info->help, MetricTypeName(info->type));
      AppendSample(out_, info->name, {{"hostname", hostname_}},
                   static_cast<double>(tick_.unix_ms) / 1000.0);
    } else if (info == &kTickIntervalSeconds) {
      if (options_.interval_s <= 0) return true;
      AppendHeader(out_, info->name, info->help, MetricTypeName(info->type));
      AppendSample(out_, info->name, {{"hostname", hostname_}}, options_.interval_s);
    } else if (info == &kFindingActive) {
      AppendHeader(out_, info->name, info->help, MetricTypeName(info->type));
      for (const TrackedFinding& f : tick_.findings) {
        if (f.state != FindingState::kOpen) continue;
        const Finding& d = f.last;
        Labels l = FindingLabels(d,
                                 {{"id", d.id},
                                  {"severity", SeverityName(d.severity)},
                                  {"layer", LayerName(d.layer)},
                                  {"action", ActionName(d.action)}},
                                 /*with_serial=*/false);
        AppendSample(out_, info->name, l, 1);
      }
    } else {
      return false;
    }
    return true;
  }

  void Points(const MetricInfo* info) {
    auto it = by_name_.find(info->name);
    if (it == by_name_.end()) return;
    AppendHeader(out_, info->name, info->help, MetricTypeName(info->type));
    for (const MetricPoint* p : it->second) {
      Labels l = Identity(p->gpu);
      for (const auto& [k, v] : p->labels) l.emplace_back(k, v);
      AppendSample(out_, info->name, l, p->value);
    }
  }

  // dcgm-exporter's labels, in its order: the bus id in DCGM's spelling, the driver version as
  // its DCGM_FI_DRIVER_VERSION label.
  Labels DcgmLabels(int gpu) const {
    Labels l = {{"gpu", std::to_string(gpu)}};
    const GpuFacts* g = FindGpu(snap_, gpu);
    l.emplace_back("UUID", g ? g->uuid : "");
    l.emplace_back("pci_bus_id", DcgmBusId(g ? g->pci_bus_id : ""));
    l.emplace_back("device", "nvidia" + std::to_string(gpu));
    l.emplace_back("modelName", g ? g->name : "");
    l.emplace_back("Hostname", hostname_);
    l.emplace_back("DCGM_FI_DRIVER_VERSION", DriverVersion());
    return l;
  }

  std::string DriverVersion() const {
    return snap_.gpu.driver.driver_version.empty() ? snap_.gpu.driver.kernel_module_version
                                                   : snap_.gpu.driver.driver_version;
  }

  // value × scale, with the rounding error of a unit round trip (mJ -> J -> mJ) taken off.
  static double Scaled(double value, double scale) {
    double v = value * scale;
    double r = std::round(v);
    return std::fabs(v - r) <= 1e-9 * std::max(1.0, std::fabs(v)) ? r : v;
  }

  // Every GPU metric with a dcgm-exporter twin under its name (and its other name where DCGM
  // renamed the field), typed and scaled as dcgm-exporter does.
  void DcgmTwins() {
    for (const MetricInfo* info : AllMetrics()) {
      if (info->dcgm_name.empty()) continue;
      auto it = by_name_.find(info->name);
      if (it == by_name_.end()) continue;
      const std::string help = DcgmHelp(*info);
      const char* type = MetricTypeName(info->dcgm_type.value_or(info->type));
      for (std::string_view name : {info->dcgm_name, info->dcgm_alias}) {
        if (name.empty()) continue;
        bool header = false;
        for (const MetricPoint* p : it->second) {
          if (p->gpu < 0 || !p->labels.empty()) continue;
          if (!header) {
            AppendHeader(out_, name, help, type);
            header = true;
          }
          AppendSample(out_, name, DcgmLabels(p->gpu), Scaled(p->value, info->dcgm_scale));
        }
      }
    }
  }

  // The last Xid per GPU, as dcgm-exporter's gauge: under watch the code of the ledger's most
  // recent occurrence (kernel log or NVML event); without tallies the highest code seen.
  // 0 when none.
  void DcgmLastXid() {
    std::map<int, int> xid;
    for (const GpuFacts& g : snap_.gpu.gpus) xid[g.index] = 0;
    if (snap_.gpu.xid_tallies) {
      std::map<int, int64_t> when;
      for (const XidTally& t : *snap_.gpu.xid_tallies) {
        if (!t.gpu_index || t.count == 0 || t.xid > 1u << 30) continue;
        auto w = when.find(*t.gpu_index);
        if (w == when.end() || t.last_unix_ms >= w->second) {
          when[*t.gpu_index] = t.last_unix_ms;
          xid[*t.gpu_index] = static_cast<int>(t.xid);
        }
      }
    } else if (auto it = by_name_.find(kGpuXidErrorsTotal.name); it != by_name_.end()) {
      for (const MetricPoint* p : it->second) {
        for (const auto& [k, v] : p->labels) {
          if (k == "xid" && p->value > 0) xid[p->gpu] = std::max(xid[p->gpu], std::atoi(v.c_str()));
        }
      }
    }
    if (xid.empty()) return;
    AppendHeader(out_, "DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.",
                 "gauge");
    for (const auto& [gpu, code] : xid) {
      AppendSample(out_, "DCGM_FI_DEV_XID_ERRORS", DcgmLabels(gpu), code);
    }
  }

  const TickResult& tick_;
  const Snapshot& snap_;
  const ExporterOptions& options_;
  const std::string hostname_;
  std::unordered_map<std::string_view, std::vector<const MetricPoint*>> by_name_;
  std::string out_;
};

}  // namespace

std::string RenderMetrics(const TickResult& tick, const ExporterOptions& options) {
  return MetricsPage(tick, options).Render();
}

}  // namespace gpudoctor

namespace gpudoctor {

std::string MetricsMarkdown() {
  std::string out =
      "# gpudoctor metrics\n\n"
      "Generated from the metric tables (src/metrics/metric_table.cc) by `MetricsMarkdown()`; "
      "tests/unit/exporter_test.cc keeps it in sync (`GPUDOCTOR_UPDATE_GOLDEN=1` rewrites it).\n\n"
      "Served by `gpudoctor watch` on `GET /metrics` (default 127.0.0.1:9835). Every sample has "
      "`hostname`; GPU samples add `gpu` (NVML index), `uuid`, `pci_bus_id`, `model`. Absent facts "
      "are not exported (never 0 for unsupported). With `--dcgm-compat` the GPU metrics that have "
      "a dcgm-exporter twin are also written under that name (and its older or newer name where "
      "DCGM renamed the field), in dcgm-exporter's unit and type, with its labels `gpu`, `UUID`, "
      "`pci_bus_id` (DCGM's spelling, `00000000:2A:00.0`), `device`, `modelName`, `Hostname`, "
      "`DCGM_FI_DRIVER_VERSION`; `DCGM_FI_DEV_XID_ERRORS` is the code of the GPU's last Xid (0 "
      "when none).\n\n"
      "| metric | type | extra labels | help | dcgm-exporter twin (scale, type) |\n"
      "|---|---|---|---|---|\n";
  for (const MetricInfo* m : AllMetrics()) {
    if (m->name.empty()) continue;
    std::string twin;
    if (!m->dcgm_name.empty()) {
      twin = "`" + std::string(m->dcgm_name) + "`";
      if (!m->dcgm_alias.empty()) twin += " and `" + std::string(m->dcgm_alias) + "`";
      std::string notes;
      if (m->dcgm_scale != 1) notes = "x" + FormatSampleValue(m->dcgm_scale);
      if (m->dcgm_type && *m->dcgm_type != m->type) {
        notes += std::string(notes.empty() ? "" : ", ") + MetricTypeName(*m->dcgm_type);
      }
      if (!notes.empty()) twin += " (" + notes + ")";
    }
    std::string labels;
    std::string_view l = m->labels;
    while (!l.empty()) {
      size_t comma = l.find(',');
      if (!labels.empty()) labels += ", ";
      labels += "`" + std::string(l.substr(0, comma)) + "`";
      l = comma == std::string_view::npos ? std::string_view() : l.substr(comma + 1);
    }
    std::string help(m->help);
    for (char& c : help) {
      if (c == '|') c = '/';
    }
    out += "| `" + std::string(m->name) + "` | " + MetricTypeName(m->type) + " | " + labels +
           " | " + help + " | " + twin + " |\n";
  }
  out +=
      "| `DCGM_FI_DEV_XID_ERRORS` | gauge |  | --dcgm-compat only: the code of the GPU's last Xid "
      "(kernel log or NVML event), as dcgm-exporter. | |\n";
  return out;
}

}  // namespace gpudoctor
