#include "report/gpu_report.h"

#include <cstdio>

#include "core/strings.h"
#include "facts/pci_bus_id.h"
#include "metrics/metric_table.h"
#include "report/json_util.h"

namespace gpudoctor {
namespace {

using json = nlohmann::ordered_json;

json CountersJson(const GpuCounterRead& c) {
  json j = json::object();
  PutFacts(j, GpuCounterFieldTable(), c);
  return j;
}

json GpuJson(const GpuFacts& g) {
  json j;
  j["index"] = g.index;
  PutIfNotEmpty(j, "uuid", g.uuid);
  PutIfNotEmpty(j, "serial", g.serial);
  PutIfNotEmpty(j, "pci_bus_id", g.pci_bus_id);
  PutIfNotEmpty(j, "name", g.name);
  PutIfNotEmpty(j, "vbios", g.vbios);
  PutFacts(j, GpuFieldTable(), g);  // the descriptor table: same facts as /metrics
  if (!g.nvlinks.empty()) {
    json links = json::array();
    for (const auto& l : g.nvlinks) {
      json lj{{"link", l.link}};
      PutIfKnown(lj, "active", l.active);
      links.push_back(std::move(lj));
    }
    j["nvlinks"] = std::move(links);
  }
  if (g.processes) {
    json procs = json::array();
    for (const auto& p : *g.processes) {
      json pj{{"pid", p.pid}};
      PutIfKnown(pj, "used_bytes", p.used_bytes);
      PutIfNotEmpty(pj, "comm", p.comm);
      PutIfNotEmpty(pj, "user", p.user);
      procs.push_back(std::move(pj));
    }
    j["processes"] = std::move(procs);
  }
  if (json c = CountersJson(g.first); !c.empty()) j["counters_first"] = std::move(c);
  if (json c = CountersJson(g.second); !c.empty()) j["counters_second"] = std::move(c);
  PutIfKnown(j, "window_s", g.window_s);
  if (g.lost) {
    j["lost"] = true;
    PutIfNotEmpty(j, "lost_call", g.lost_call);
  }
  if (g.hung) j["hung"] = true;
  if (g.unfinished) j["unfinished"] = true;
  if (!g.errors.empty()) {
    json errs = json::array();
    for (const auto& e : g.errors)
      errs.push_back({{"call", e.call}, {"code", e.code}, {"text", e.text}});
    j["nvml_errors"] = std::move(errs);
  }
  j["nvml_calls"] = g.nvml_calls;
  return j;
}

std::string Cell(const std::optional<uint32_t>& v, const char* unit) {
  return v ? std::to_string(*v) + unit : "-";
}

}  // namespace

nlohmann::ordered_json GpuFactsToJson(const GpuLayerFacts& f) {
  json out;
  json gpus = json::array();
  for (const auto& g : f.gpus) gpus.push_back(GpuJson(g));
  out["gpus"] = std::move(gpus);
  json driver = json::object();
  PutIfNotEmpty(driver, "driver_version", f.driver.driver_version);
  PutIfNotEmpty(driver, "nvml_version", f.driver.nvml_version);
  PutIfKnown(driver, "cuda_driver_version", f.driver.cuda_driver_version);
  PutIfNotEmpty(driver, "kernel_module_version", f.driver.kernel_module_version);
  PutIfNotEmpty(driver, "library_path", f.nvml.library_path);
  PutIfNotEmpty(driver, "library_version", f.nvml.library_version);
  out["driver"] = std::move(driver);
  json nvml{{"state", NvmlStateName(f.nvml.state)}, {"system_calls", f.nvml.system_calls}};
  PutIfKnown(nvml, "init_return", f.nvml.init_return);
  PutIfNotEmpty(nvml, "error", f.nvml.error);
  PutIfKnown(nvml, "device_count", f.nvml.device_count);
  out["nvml"] = std::move(nvml);
  if (!f.hangs.empty()) {
    json hangs = json::array();
    for (const auto& h : f.hangs) {
      json hj{{"call", h.call}, {"waited_ms", h.waited_ms}};
      PutIfKnown(hj, "gpu_index", h.gpu_index);
      if (h.check_deadline) hj["check_deadline"] = true;
      PutIfNotEmpty(hj, "uuid", h.uuid);
      PutIfNotEmpty(hj, "pci_bus_id", h.pci_bus_id);
      PutIfNotEmpty(hj, "serial", h.serial);
      hangs.push_back(std::move(hj));
    }
    out["nvml_hangs"] = std::move(hangs);
  }
  if (!f.nvml_xid_events.empty()) {
    json ev = json::array();
    for (const auto& e : f.nvml_xid_events) {
      json ej{{"xid", e.xid}};
      PutIfKnown(ej, "gpu_index", e.gpu_index);
      ev.push_back(std::move(ej));
    }
    out["nvml_xid_events"] = std::move(ev);
  }
  if (f.pci_devices) {
    json pci = json::array();
    for (const auto& d : *f.pci_devices) {
      pci.push_back({{"pci_bus_id", d.bus_id}, {"device_id", d.device_id}, {"driver", d.driver}});
    }
    out["pci_gpus"] = std::move(pci);
  }
  return out;
}

std::string GpuTable(const GpuLayerFacts& f, const std::vector<Finding>& findings) {
  if (f.gpus.empty()) return "";
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-3s %-24s %-12s %-14s %5s %11s %5s %19s %9s %s\n", "GPU",
                "NAME", "BUS ID", "SERIAL", "TEMP", "POWER W", "UTIL", "MEMORY", "PCIE", "STATE");
  out += line;
  for (const auto& g : f.gpus) {
    std::string power = "-";
    if (g.power_mw) {
      power = FormatDouble(*g.power_mw / 1000.0, 0);
      if (g.power_limit_mw) power += "/" + FormatDouble(*g.power_limit_mw / 1000.0, 0);
    }
    std::string mem = "-";
    if (g.memory_used_bytes && g.memory_total_bytes) {
      mem = FormatDouble(*g.memory_used_bytes / 1073741824.0, 1) + "/" +
            FormatDouble(*g.memory_total_bytes / 1073741824.0, 0) + " GiB";
    }
    std::string pcie = "-";
    if (g.pcie_gen && g.pcie_width) {
      pcie = "Gen";
      pcie += std::to_string(*g.pcie_gen);
      pcie += " x";
      pcie += std::to_string(*g.pcie_width);
    }
    // The worst finding about this GPU (by index or slot), so the table alone shows which card
    // needs attention.
    std::optional<Severity> worst;
    bool refused = false;  // the driver answers this GPU with errors (NvmlErrorRule, readings)
    for (const auto& fi : findings) {
      if (!fi.gpu) continue;
      bool same = (fi.gpu->index && *fi.gpu->index == g.index) ||
                  (!fi.gpu->index && !fi.gpu->pci_bus_id.empty() &&
                   NormalizePciBusId(fi.gpu->pci_bus_id) == g.pci_bus_id);
      if (same && (!worst || fi.severity > *worst)) worst = fi.severity;
      if (same && (fi.id == "gpu.nvml_error" || fi.id == "gpu.readings_failed" ||
                   (fi.subject.rfind("nvml_return_", 0) == 0 && fi.id.rfind("driver.", 0) == 0))) {
        refused = true;
      }
    }
    std::string state = g.hung                               ? "HUNG"
                        : g.unfinished                       ? "UNFINISHED"
                        : g.lost                             ? "LOST"
                        : refused                            ? "ERROR"
                        : worst && *worst == Severity::kCrit ? "CRIT"
                        : worst && *worst == Severity::kWarn ? "WARN"
                                                             : "ok";
    std::string temp = "-";
    if (g.temp_c) temp = std::to_string(*g.temp_c) + "C";
    std::snprintf(line, sizeof line, "%-3d %-24.24s %-12.12s %-14.14s %5s %11s %5s %19s %9s %s\n",
                  g.index, g.name.empty() ? "-" : g.name.c_str(),
                  g.pci_bus_id.empty() ? "-" : g.pci_bus_id.c_str(),
                  g.serial.empty() ? "-" : g.serial.c_str(), temp.c_str(), power.c_str(),
                  Cell(g.util_gpu_pct, "%").c_str(), mem.c_str(), pcie.c_str(), state.c_str());
    out += line;
  }
  std::string drv = "driver ";
  drv += f.driver.driver_version.empty() ? "-" : f.driver.driver_version;
  if (f.driver.cuda_driver_version) {
    int v = *f.driver.cuda_driver_version;
    drv += ", CUDA " + std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
  }
  if (!f.driver.nvml_version.empty()) drv += ", NVML " + f.driver.nvml_version;
  out += drv + "\n";
  return out;
}

}  // namespace gpudoctor
