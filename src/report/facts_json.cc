#include "report/facts_json.h"

#include "report/json_util.h"

namespace gpudoctor {
namespace {

using json = nlohmann::ordered_json;

json PressureLineJson(const PressureLine& l) {
  json j = json::object();
  PutIfKnown(j, "avg10_pct", l.avg10_pct);
  PutIfKnown(j, "avg60_pct", l.avg60_pct);
  PutIfKnown(j, "avg300_pct", l.avg300_pct);
  PutIfKnown(j, "total_us", l.total_us);
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
    PutIfKnown(c, "logical_cores", h.cpu->logical_cores);
    PutIfKnown(c, "busy_pct", h.cpu->busy_pct);
    PutIfKnown(c, "iowait_pct", h.cpu->iowait_pct);
    PutIfKnown(c, "steal_pct", h.cpu->steal_pct);
    PutIfKnown(c, "load1", h.cpu->load1);
    PutIfKnown(c, "load5", h.cpu->load5);
    PutIfKnown(c, "load15", h.cpu->load15);
    PutIfKnown(c, "window_s", h.cpu->window_s);
    j["cpu"] = c;
  }
  if (h.memory) {
    json m = json::object();
    PutIfKnown(m, "total_bytes", h.memory->total_bytes);
    PutIfKnown(m, "available_bytes", h.memory->available_bytes);
    PutIfKnown(m, "swap_total_bytes", h.memory->swap_total_bytes);
    PutIfKnown(m, "swap_free_bytes", h.memory->swap_free_bytes);
    PutIfKnown(m, "swap_in_pages_per_s", h.memory->swap_in_pages_per_s);
    PutIfKnown(m, "swap_out_pages_per_s", h.memory->swap_out_pages_per_s);
    PutIfKnown(m, "shmem_bytes", h.memory->shmem_bytes);
    PutIfKnown(m, "oom_kill_count", h.memory->oom_kill_count);
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
      PutIfKnown(e, "total_bytes", m.total_bytes);
      PutIfKnown(e, "available_bytes", m.available_bytes);
      PutIfKnown(e, "inodes_total", m.inodes_total);
      PutIfKnown(e, "inodes_free", m.inodes_free);
      PutIfNotEmpty(e, "error", m.error);
      if (m.timed_out) e["timed_out"] = true;
      arr.push_back(e);
    }
    j["mounts"] = arr;
  }
  if (h.processes) {
    j["processes"] = {{"total", h.processes->total},
                      {"tasks_scanned", h.processes->tasks_scanned},
                      {"zombie_count", h.processes->zombie_count},
                      {"dstate_count", h.processes->dstate_count},
                      {"truncated", h.processes->truncated}};
  }
  return j;
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
      PutIfKnown(e, "loss_pct", h.loss_pct);
      PutIfKnown(e, "rtt_min_ms", h.rtt_min_ms);
      PutIfKnown(e, "rtt_median_ms", h.rtt_median_ms);
      PutIfKnown(e, "rtt_p95_ms", h.rtt_p95_ms);
      PutIfKnown(e, "rtt_max_ms", h.rtt_max_ms);
      PutIfKnown(e, "jitter_ms", h.jitter_ms);
      if (h.port_closed) e["port_closed"] = true;
      if (h.inconclusive) e["inconclusive"] = true;
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
      PutIfKnown(e, "carrier", nic.carrier);
      PutIfKnown(e, "speed_mbps", nic.speed_mbps);
      PutIfKnown(e, "rx_bytes_per_s", nic.rx_bytes_per_s);
      PutIfKnown(e, "tx_bytes_per_s", nic.tx_bytes_per_s);
      PutIfKnown(e, "carrier_changes", nic.carrier_changes);
      PutIfKnown(e, "rx_errors_delta", nic.rx_errors_delta);
      PutIfKnown(e, "tx_errors_delta", nic.tx_errors_delta);
      PutIfKnown(e, "rx_dropped_delta", nic.rx_dropped_delta);
      PutIfKnown(e, "tx_dropped_delta", nic.tx_dropped_delta);
      arr.push_back(e);
    }
    j["nics"] = arr;
  }
  return j;
}

}  // namespace gpudoctor
