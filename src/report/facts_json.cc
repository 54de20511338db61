#include "report/facts_json.h"

#include "metrics/metric_table.h"
#include "report/json_util.h"

namespace gpudoctor {
namespace {

using json = nlohmann::ordered_json;

json PressureLineJson(const PressureLine& l) {
  json j = json::object();
  PutFacts(j, PressureFieldTable(), l);
  return j;
}

void PutPressure(json& j, const char* key, const std::optional<PressureResource>& r) {
  if (!r) return;
  json p = {{"some", PressureLineJson(r->some)}};
  if (r->full) p["full"] = PressureLineJson(*r->full);
  j[key] = p;
}

}  // namespace

nlohmann::ordered_json HostFactsToJson(const HostFacts& h) {
  json j = json::object();
  if (h.cpu) {
    json c = json::object();
    PutFacts(c, CpuFieldTable(), *h.cpu);
    j["cpu"] = c;
  }
  if (h.memory) {
    json m = json::object();
    PutFacts(m, MemoryFieldTable(), *h.memory);
    j["memory"] = m;
  }
  if (h.pressure) {
    json p = json::object();
    PutPressure(p, "cpu", h.pressure->cpu);
    PutPressure(p, "memory", h.pressure->memory);
    PutPressure(p, "io", h.pressure->io);
    j["pressure"] = p;
  }
  if (h.mounts) {
    json arr = json::array();
    for (const auto& m : *h.mounts) {
      json e = {{"mount_point", m.mount_point}, {"device", m.device}, {"fs_type", m.fs_type}};
      if (m.read_only) e["read_only"] = true;
      PutFacts(e, MountFieldTable(), m);
      PutIfNotEmpty(e, "error", m.error);
      if (m.timed_out) e["timed_out"] = true;
      arr.push_back(e);
    }
    j["mounts"] = arr;
  }
  if (h.required_mounts) {
    json arr = json::array();
    for (const auto& r : *h.required_mounts) {
      json e = {{"mount_point", r.mount_point}, {"mounted", r.mounted}};
      PutIfNotEmpty(e, "fs_type", r.fs_type);
      PutIfNotEmpty(e, "device", r.device);
      arr.push_back(e);
    }
    j["required_mounts"] = arr;
  }
  if (h.processes) {
    j["processes"] = {{"total", h.processes->total},
                      {"tasks_scanned", h.processes->tasks_scanned},
                      {"zombie_count", h.processes->zombie_count},
                      {"dstate_count", h.processes->dstate_count},
                      {"truncated", h.processes->truncated}};
  }
  if (h.thermal) {
    json arr = json::array();
    for (const auto& s : h.thermal->sensors) {
      json e = {{"name", s.name}, {"source", s.source}, {"kind", SensorKindName(s.kind)}};
      PutIfNotEmpty(e, "chip", s.chip);
      PutFacts(e, TemperatureSensorFieldTable(), s);
      arr.push_back(e);
    }
    j["thermal"] = {{"sensors", arr}, {"ipmi_ran", h.thermal->ipmi_ran}};
    PutIfNotEmpty(j["thermal"], "ipmi_note", h.thermal->ipmi_note);
  }
  if (h.boot) {
    json kernels = json::array();
    for (const auto& k : h.boot->kernels) {
      json e = {{"version", k.version}, {"image", k.has_image}, {"modules", k.has_modules_dir}};
      PutIfNotEmpty(e, "nvidia_module", k.nvidia_module);
      kernels.push_back(e);
    }
    json b = {{"running_kernel", h.boot->running_kernel}, {"kernels", kernels}};
    if (h.boot->reboot_required_flag) b["reboot_required"] = *h.boot->reboot_required_flag;
    if (h.boot->nvidia_loaded) b["nvidia_loaded"] = *h.boot->nvidia_loaded;
    j["boot"] = b;
  }
  if (h.backups) {
    json arr = json::array();
    for (const auto& p : h.backups->patterns) {
      json e = {{"pattern", p.pattern}, {"matched", p.matched}};
      PutIfNotEmpty(e, "newest_path", p.newest_path);
      if (p.newest_mtime_unix_s) e["newest_mtime_unix_s"] = *p.newest_mtime_unix_s;
      if (p.truncated) e["truncated"] = true;
      PutIfNotEmpty(e, "error", p.error);
      arr.push_back(e);
    }
    j["backups"] = arr;
  }
  return j;
}

nlohmann::ordered_json JobFactsToJson(const std::vector<JobFacts>& jobs) {
  json arr = json::array();
  for (const JobFacts& f : jobs) {
    json e = {{"name", f.name}, {"sources", f.sources}};
    PutIfNotEmpty(e, "log", f.log_path);
    PutFacts(e, JobFieldTable(), f);
    if (f.baseline_seconds) e["baseline"] = f.baseline_configured ? "configured" : "first_steps";
    if (f.last_sample_unix_ms) e["last_sample_unix_ms"] = *f.last_sample_unix_ms;
    PutIfNotEmpty(e, "error", f.error);
    arr.push_back(e);
  }
  return arr;
}

nlohmann::ordered_json InferenceFactsToJson(const std::vector<InferenceFacts>& engines) {
  json arr = json::array();
  for (const InferenceFacts& f : engines) {
    json e = {{"name", f.name}, {"engine", f.engine}, {"url", f.url}, {"source", f.source}};
    if (!f.pids.empty()) e["pids"] = f.pids;
    PutIfNotEmpty(e, "model", f.model);
    PutIfNotEmpty(e, "plan_model", f.plan_model);
    if (f.plan_kv_bytes_per_token) e["plan_kv_bytes_per_token"] = f.plan_kv_bytes_per_token;
    PutFacts(e, InferenceFieldTable(), f);
    PutIfNotEmpty(e, "error", f.error);
    arr.push_back(e);
  }
  return arr;
}

nlohmann::ordered_json NetworkFactsToJson(const NetworkFacts& n) {
  json j = json::object();
  if (n.reachability) {
    json arr = json::array();
    for (const auto& h : n.reachability->hosts) {
      json e = {{"name", h.name}, {"group", TargetGroupName(h.group)}};
      PutIfNotEmpty(e, "address", h.address);
      PutIfNotEmpty(e, "method", h.method);
      e["sent"] = h.sent;
      e["received"] = h.received;
      PutFacts(e, TargetFieldTable(), h);
      if (h.port_closed) e["port_closed"] = true;
      if (h.inconclusive) e["inconclusive"] = true;
      if (h.arp_resolved) {
        e["arp_resolved"] = *h.arp_resolved;
        e["arp_device"] = h.arp_device;
      }
      if (!h.http_status_counts.empty()) {
        json counts = json::object();
        for (const auto& [status, n] : h.http_status_counts) counts[std::to_string(status)] = n;
        e["http_status_counts"] = counts;
      }
      PutIfNotEmpty(e, "http_error", h.http_error);
      PutIfNotEmpty(e, "http_error_kind", h.http_error_kind);
      PutIfNotEmpty(e, "error", h.error);
      arr.push_back(e);
    }
    j["reachability"] = arr;
  }
  if (n.nics) {
    json arr = json::array();
    for (const auto& nic : *n.nics) {
      json e = {{"name", nic.name}, {"physical", nic.physical}};
      PutIfNotEmpty(e, "operstate", nic.operstate);
      PutFacts(e, NicFieldTable(), nic);
      arr.push_back(e);
    }
    j["nics"] = arr;
  }
  if (n.ib_ports) {
    json arr = json::array();
    for (const auto& p : *n.ib_ports) {
      json e = {{"device", p.device}, {"port", p.port}};
      PutIfNotEmpty(e, "state", p.state);
      PutIfNotEmpty(e, "phys_state", p.phys_state);
      if (p.link_layer) PutIfNotEmpty(e, "link_layer", *p.link_layer);
      PutFacts(e, IbPortFieldTable(), p);
      if (!p.counters_delta.empty()) e["counters_delta"] = p.counters_delta;
      arr.push_back(e);
    }
    j["ib_ports"] = arr;
  }
  return j;
}

}  // namespace gpudoctor
