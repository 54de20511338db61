#include "serve/exporter.h"

#include <charconv>
#include <cmath>
#include <map>
#include <string_view>
#include <unordered_map>

#include "core/version.h"

namespace gpudoctor {

std::string EscapeLabelValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
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

}  // namespace

std::string RenderMetrics(const TickResult& tick, const ExporterOptions& options) {
  const Snapshot& snap = tick.report.snapshot;
  const std::string hostname = options.hostname.empty() ? snap.hostname : options.hostname;
  std::unordered_map<std::string_view, std::vector<const MetricPoint*>> by_name;
  for (const MetricPoint& p : tick.points) {
    if (p.info != nullptr) by_name[p.info->name].push_back(&p);
  }
  std::string out;
  out.reserve(tick.points.size() * 160 + 4096);

  auto identity = [&](int gpu) {
    Labels l;
    if (gpu >= 0) {
      l.emplace_back("gpu", std::to_string(gpu));
      if (const GpuFacts* g = FindGpu(snap, gpu)) {
        l.emplace_back("uuid", g->uuid);
        l.emplace_back("pci_bus_id", g->pci_bus_id);
        l.emplace_back("model", g->name);
      }
    }
    l.emplace_back("hostname", hostname);
    return l;
  };

  // A finding's identity without the labels that change while it stays open.
  auto finding_identity = [&](const Finding& d) {
    int gpu = d.gpu && d.gpu->index ? *d.gpu->index : -1;
    Labels l = {{"id", d.id}, {"layer", LayerName(d.layer)}};
    Labels id = identity(gpu);
    l.insert(l.end(), id.begin(), id.end());
    if (gpu < 0 && d.gpu) {  // a GPU known only by bus id or uuid (lost at enumeration)
      l.emplace_back("pci_bus_id", d.gpu->pci_bus_id);
      l.emplace_back("uuid", d.gpu->uuid);
    }
    // The card, as the notifier's alerts name it (a placeholder serial is none).
    if (d.gpu && !SerialOrEmpty(d.gpu->serial).empty()) l.emplace_back("serial", d.gpu->serial);
    if (!d.subject.empty()) l.emplace_back("subject", d.subject);
    return l;
  };
  auto finding_state = [&](const MetricInfo* info, auto value) {
    AppendHeader(out, info->name, info->help, MetricTypeName(info->type));
    for (const TrackedFinding& f : tick.findings) {
      if (f.state != FindingState::kOpen) continue;
      AppendSample(out, info->name, finding_identity(f.last), value(f));
    }
  };

  for (const MetricInfo* info : AllMetrics()) {
    if (info == &kFindingSeverity) {
      finding_state(info, [](const TrackedFinding& f) {
        return f.last.severity == Severity::kCrit   ? 3.0
               : f.last.severity == Severity::kWarn ? 2.0
                                                    : 1.0;
      });
      continue;
    }
    if (info == &kFindingAcknowledged) {
      finding_state(info, [](const TrackedFinding& f) { return f.acked ? 1.0 : 0.0; });
      continue;
    }
    if (info == &kFindingSilenced) {
      finding_state(info, [&](const TrackedFinding& f) {
        return f.silenced_until_ms > tick.unix_ms ? 1.0 : 0.0;
      });
      continue;
    }
    if (info == &kBuildInfo) {
      AppendHeader(out, info->name, info->help, MetricTypeName(info->type));
      AppendSample(out, info->name,
                   {{"version", GpudoctorVersion()},
                    {"revision", GpudoctorRevision()},
                    {"driver_version", snap.gpu.driver.driver_version.empty()
                                           ? snap.gpu.driver.kernel_module_version
                                           : snap.gpu.driver.driver_version},
                    {"hostname", hostname}},
                   1);
      continue;
    }
    if (info == &kLastTickTimestampSeconds) {
      AppendHeader(out, info->name, info->help, MetricTypeName(info->type));
      AppendSample(out, info->name, {{"hostname", hostname}},
                   static_cast<double>(tick.unix_ms) / 1000.0);
      continue;
    }
    if (info == &kTickIntervalSeconds) {
      if (options.interval_s <= 0) continue;
      AppendHeader(out, info->name, info->help, MetricTypeName(info->type));
      AppendSample(out, info->name, {{"hostname", hostname}}, options.interval_s);
      continue;
    }
    if (info == &kFindingActive) {
      AppendHeader(out, info->name, info->help, MetricTypeName(info->type));
      for (const TrackedFinding& f : tick.findings) {
        if (f.state != FindingState::kOpen) continue;
        const Finding& d = f.last;
        int gpu = d.gpu && d.gpu->index ? *d.gpu->index : -1;
        Labels l = {{"id", d.id},
                    {"severity", SeverityName(d.severity)},
                    {"layer", LayerName(d.layer)},
                    {"action", ActionName(d.action)}};
        Labels id = identity(gpu);
        l.insert(l.end(), id.begin(), id.end());
        if (gpu < 0 && d.gpu) {  // a GPU known only by bus id or uuid (lost at enumeration)
          l.emplace_back("pci_bus_id", d.gpu->pci_bus_id);
          l.emplace_back("uuid", d.gpu->uuid);
        }
        if (!d.subject.empty()) l.emplace_back("subject", d.subject);
        AppendSample(out, info->name, l, 1);
      }
      continue;
    }
    auto it = by_name.find(info->name);
    if (it == by_name.end()) continue;
    AppendHeader(out, info->name, info->help, MetricTypeName(info->type));
    for (const MetricPoint* p : it->second) {
      Labels l = identity(p->gpu);
      for (const auto& [k, v] : p->labels) l.emplace_back(k, v);
      AppendSample(out, info->name, l, p->value);
    }
  }

  if (options.dcgm_compat) {
    auto dcgm_labels = [&](int gpu) {
      Labels l = {{"gpu", std::to_string(gpu)}};
      const GpuFacts* g = FindGpu(snap, gpu);
      l.emplace_back("UUID", g ? g->uuid : "");
      l.emplace_back("device", "nvidia" + std::to_string(gpu));
      l.emplace_back("modelName", g ? g->name : "");
      l.emplace_back("Hostname", hostname);
      l.emplace_back("pci_bus_id", g ? g->pci_bus_id : "");
      return l;
    };
    for (const MetricInfo* info : AllMetrics()) {
      if (info->dcgm_name.empty()) continue;
      auto it = by_name.find(info->name);
      if (it == by_name.end()) continue;
      bool header = false;
      for (const MetricPoint* p : it->second) {
        if (p->gpu < 0 || !p->labels.empty()) continue;
        if (!header) {
          AppendHeader(out, info->dcgm_name, std::string(info->help) + " (dcgm-exporter name)",
                       "gauge");
          header = true;
        }
        AppendSample(out, info->dcgm_name, dcgm_labels(p->gpu), p->value * info->dcgm_scale);
      }
    }
    // The last Xid per GPU, as dcgm-exporter's gauge: under watch the code of the ledger's most
    // recent occurrence (kernel log or NVML event); without tallies the highest code seen.
    // 0 when none.
    std::map<int, int> xid;
    for (const GpuFacts& g : snap.gpu.gpus) xid[g.index] = 0;
    if (snap.gpu.xid_tallies) {
      std::map<int, int64_t> when;
      for (const XidTally& t : *snap.gpu.xid_tallies) {
        if (!t.gpu_index || t.count == 0 || t.xid > 1u << 30) continue;
        auto w = when.find(*t.gpu_index);
        if (w == when.end() || t.last_unix_ms >= w->second) {
          when[*t.gpu_index] = t.last_unix_ms;
          xid[*t.gpu_index] = static_cast<int>(t.xid);
        }
      }
    } else if (auto it = by_name.find(kGpuXidErrorsTotal.name); it != by_name.end()) {
      for (const MetricPoint* p : it->second) {
        for (const auto& [k, v] : p->labels) {
          if (k == "xid" && p->value > 0) xid[p->gpu] = std::max(xid[p->gpu], std::atoi(v.c_str()));
        }
      }
    }
    if (!xid.empty()) {
      AppendHeader(out, "DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.",
                   "gauge");
      for (const auto& [gpu, code] : xid) {
        AppendSample(out, "DCGM_FI_DEV_XID_ERRORS", dcgm_labels(gpu), code);
      }
    }
  }
  return out;
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
      "a dcgm-exporter twin are also written under that name, in dcgm-exporter's unit, with its "
      "labels `gpu`, `UUID`, `device`, `modelName`, `Hostname`, `pci_bus_id`; "
      "`DCGM_FI_DEV_XID_ERRORS` is the code of the GPU's last Xid (0 when none).\n\n"
      "| metric | type | extra labels | help | dcgm-exporter twin (scale) |\n"
      "|---|---|---|---|---|\n";
  for (const MetricInfo* m : AllMetrics()) {
    if (m->name.empty()) continue;
    std::string twin;
    if (!m->dcgm_name.empty()) {
      twin = "`" + std::string(m->dcgm_name) + "`";
      if (m->dcgm_scale != 1) twin += " (x" + FormatSampleValue(m->dcgm_scale) + ")";
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
