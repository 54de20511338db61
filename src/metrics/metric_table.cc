#include "metrics/metric_table.h"

#include <algorithm>
#include <map>

#include "parsers/pci_bus_id.h"

namespace gpudoctor {
namespace {

template <typename T>
std::optional<double> D(const std::optional<T>& v, double scale = 1) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v) * scale;
}

// Counters read at both ends of the window: the later read when there is one.
template <typename F>
std::optional<double> Counter(const GpuFacts& g, F field) {
  if (auto v = field(g.second)) return static_cast<double>(*v);
  if (auto v = field(g.first)) return static_cast<double>(*v);
  return std::nullopt;
}

constexpr MetricType G = MetricType::kGauge;
constexpr MetricType C = MetricType::kCounter;

}  // namespace

const char* MetricTypeName(MetricType t) { return t == MetricType::kCounter ? "counter" : "gauge"; }

const std::vector<FieldDescriptor<GpuFacts>>& GpuFieldTable() {
  using F = FieldDescriptor<GpuFacts>;
  static const std::vector<F> t = {
      {"temp_c",
       {"gpudoctor_gpu_temperature_celsius", G, "GPU core temperature.", "",
        "DCGM_FI_DEV_GPU_TEMP"},
       [](const GpuFacts& g) { return D(g.temp_c); }},
      {"memory_temp_c",
       {"gpudoctor_gpu_memory_temperature_celsius", G, "GPU memory (HBM) temperature.", "",
        "DCGM_FI_DEV_MEMORY_TEMP"},
       [](const GpuFacts& g) { return D(g.memory_temp_c); }},
      {"temp_slowdown_c",
       {"gpudoctor_gpu_temperature_slowdown_celsius", G,
        "Temperature at which the GPU starts to slow down.", "", "DCGM_FI_DEV_SLOWDOWN_TEMP"},
       [](const GpuFacts& g) { return D(g.temp_slowdown_c); }},
      {"temp_shutdown_c",
       {"gpudoctor_gpu_temperature_shutdown_celsius", G, "Temperature at which the GPU shuts down.",
        "", "DCGM_FI_DEV_SHUTDOWN_TEMP"},
       [](const GpuFacts& g) { return D(g.temp_shutdown_c); }},
      {"power_w",
       {"gpudoctor_gpu_power_watts", G, "Power draw.", "", "DCGM_FI_DEV_POWER_USAGE"},
       [](const GpuFacts& g) { return D(g.power_mw, 1e-3); }},
      {"power_limit_w",
       {"gpudoctor_gpu_power_limit_watts", G, "Enforced power limit.", "",
        "DCGM_FI_DEV_ENFORCED_POWER_LIMIT"},
       [](const GpuFacts& g) { return D(g.power_limit_mw, 1e-3); }},
      {"util_gpu_pct",
       {"gpudoctor_gpu_utilization_ratio", G,
        "Share of time a kernel ran on the GPU over the driver's sample period (0-1).", "",
        "DCGM_FI_DEV_GPU_UTIL", 100},
       [](const GpuFacts& g) { return D(g.util_gpu_pct, 0.01); }},
      {"util_memory_pct",
       {"gpudoctor_gpu_memory_utilization_ratio", G,
        "Share of time device memory was read or written (0-1).", "", "DCGM_FI_DEV_MEM_COPY_UTIL",
        100},
       [](const GpuFacts& g) { return D(g.util_memory_pct, 0.01); }},
      {"memory_used_bytes",
       {"gpudoctor_gpu_memory_used_bytes", G, "Device memory in use.", "", "DCGM_FI_DEV_FB_USED",
        1.0 / (1 << 20)},
       [](const GpuFacts& g) { return D(g.memory_used_bytes); }},
      {"memory_total_bytes",
       {"gpudoctor_gpu_memory_total_bytes", G, "Device memory in total.", "",
        "DCGM_FI_DEV_FB_TOTAL", 1.0 / (1 << 20)},
       [](const GpuFacts& g) { return D(g.memory_total_bytes); }},
      {"",
       {"gpudoctor_gpu_memory_free_bytes", G, "Device memory free (total - used).", "",
        "DCGM_FI_DEV_FB_FREE", 1.0 / (1 << 20)},
       [](const GpuFacts& g) -> std::optional<double> {
         if (!g.memory_total_bytes || !g.memory_used_bytes) return std::nullopt;
         if (*g.memory_used_bytes > *g.memory_total_bytes) return 0.0;
         return static_cast<double>(*g.memory_total_bytes - *g.memory_used_bytes);
       }},
      {"sm_clock_mhz",
       {"gpudoctor_gpu_sm_clock_hertz", G, "SM clock.", "", "DCGM_FI_DEV_SM_CLOCK", 1e-6},
       [](const GpuFacts& g) { return D(g.sm_clock_mhz, 1e6); }},
      {"max_sm_clock_mhz",
       {"gpudoctor_gpu_sm_clock_max_hertz", G, "Maximum SM clock.", "", "", 1},
       [](const GpuFacts& g) { return D(g.max_sm_clock_mhz, 1e6); }},
      {"memory_clock_mhz",
       {"gpudoctor_gpu_memory_clock_hertz", G, "Memory clock.", "", "DCGM_FI_DEV_MEM_CLOCK", 1e-6},
       [](const GpuFacts& g) { return D(g.memory_clock_mhz, 1e6); }},
      {"max_memory_clock_mhz",
       {"gpudoctor_gpu_memory_clock_max_hertz", G, "Maximum memory clock.", "", "", 1},
       [](const GpuFacts& g) { return D(g.max_memory_clock_mhz, 1e6); }},
      {"fan_pct",
       {"gpudoctor_gpu_fan_speed_ratio", G, "Fan speed as a share of its maximum (0-1).", "",
        "DCGM_FI_DEV_FAN_SPEED", 100},
       [](const GpuFacts& g) { return D(g.fan_pct, 0.01); }},
      {"clock_event_reasons",
       {"gpudoctor_gpu_clock_event_reasons", G,
        "Clock event (throttle) reason bit mask as NVML reports it.", "",
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"},
       [](const GpuFacts& g) {
         return Counter(g, [](const GpuCounterRead& r) { return r.clock_event_reasons; });
       }},
      {"persistence_on",
       {"gpudoctor_gpu_persistence_mode", G, "1 when persistence mode is on.", "", ""},
       [](const GpuFacts& g) -> std::optional<double> {
         if (!g.persistence_on) return std::nullopt;
         return *g.persistence_on ? 1.0 : 0.0;
       }},
      {"ecc_enabled",
       {"gpudoctor_gpu_ecc_enabled", G, "1 when ECC is enabled.", "", ""},
       [](const GpuFacts& g) -> std::optional<double> {
         if (!g.ecc_enabled) return std::nullopt;
         return *g.ecc_enabled ? 1.0 : 0.0;
       }},
      {"ecc_sbe_volatile",
       {"gpudoctor_gpu_ecc_sbe_volatile_total", C,
        "Corrected (single-bit) ECC errors since the driver loaded.", "",
        "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL"},
       [](const GpuFacts& g) {
         return Counter(g, [](const GpuCounterRead& r) { return r.ecc_sbe_volatile; });
       }},
      {"ecc_dbe_volatile",
       {"gpudoctor_gpu_ecc_dbe_volatile_total", C,
        "Uncorrected (double-bit) ECC errors since the driver loaded.", "",
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"},
       [](const GpuFacts& g) {
         return Counter(g, [](const GpuCounterRead& r) { return r.ecc_dbe_volatile; });
       }},
      {"ecc_sbe_aggregate",
       {"gpudoctor_gpu_ecc_sbe_aggregate_total", C,
        "Corrected ECC errors over the board's lifetime.", "", "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL"},
       [](const GpuFacts& g) {
         return Counter(g, [](const GpuCounterRead& r) { return r.ecc_sbe_aggregate; });
       }},
      {"ecc_dbe_aggregate",
       {"gpudoctor_gpu_ecc_dbe_aggregate_total", C,
        "Uncorrected ECC errors over the board's lifetime.", "", "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL"},
       [](const GpuFacts& g) {
         return Counter(g, [](const GpuCounterRead& r) { return r.ecc_dbe_aggregate; });
       }},
      {"retired_pages_sbe",
       {"gpudoctor_gpu_retired_pages_sbe", G, "Pages retired for corrected errors.", "",
        "DCGM_FI_DEV_RETIRED_SBE"},
       [](const GpuFacts& g) { return D(g.retired_pages_sbe); }},
      {"retired_pages_dbe",
       {"gpudoctor_gpu_retired_pages_dbe", G, "Pages retired for uncorrected errors.", "",
        "DCGM_FI_DEV_RETIRED_DBE"},
       [](const GpuFacts& g) { return D(g.retired_pages_dbe); }},
      {"remapped_rows_correctable",
       {"gpudoctor_gpu_remapped_rows_correctable", G, "HBM rows remapped for corrected errors.", "",
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"},
       [](const GpuFacts& g) { return D(g.remapped_rows_correctable); }},
      {"remapped_rows_uncorrectable",
       {"gpudoctor_gpu_remapped_rows_uncorrectable", G, "HBM rows remapped for uncorrected errors.",
        "", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"},
       [](const GpuFacts& g) { return D(g.remapped_rows_uncorrectable); }},
      {"remap_failed",
       {"gpudoctor_gpu_row_remap_failed", G, "1 when a row remapping failed.", "",
        "DCGM_FI_DEV_ROW_REMAP_FAILURE"},
       [](const GpuFacts& g) -> std::optional<double> {
         if (!g.remap_failed) return std::nullopt;
         return *g.remap_failed ? 1.0 : 0.0;
       }},
      {"pcie_gen",
       {"gpudoctor_gpu_pcie_link_gen", G, "Current PCIe link generation.", "",
        "DCGM_FI_DEV_PCIE_LINK_GEN"},
       [](const GpuFacts& g) { return D(g.pcie_gen); }},
      {"pcie_max_gen",
       {"gpudoctor_gpu_pcie_link_gen_max", G, "Maximum PCIe link generation.", "", ""},
       [](const GpuFacts& g) { return D(g.pcie_max_gen); }},
      {"pcie_width",
       {"gpudoctor_gpu_pcie_link_width", G, "Current PCIe link width (lanes).", "",
        "DCGM_FI_DEV_PCIE_LINK_WIDTH"},
       [](const GpuFacts& g) { return D(g.pcie_width); }},
      {"pcie_max_width",
       {"gpudoctor_gpu_pcie_link_width_max", G, "Maximum PCIe link width (lanes).", "", ""},
       [](const GpuFacts& g) { return D(g.pcie_max_width); }},
      {"pcie_replays",
       {"gpudoctor_gpu_pcie_replays_total", C, "PCIe replay counter.", "",
        "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"},
       [](const GpuFacts& g) {
         return Counter(g, [](const GpuCounterRead& r) { return r.pcie_replays; });
       }},
      {"pcie_tx_bytes_per_s",
       {"gpudoctor_gpu_pcie_tx_bytes_per_second", G, "PCIe transmit throughput.", "", ""},
       [](const GpuFacts& g) { return D(g.pcie_tx_bytes_per_s); }},
      {"pcie_rx_bytes_per_s",
       {"gpudoctor_gpu_pcie_rx_bytes_per_second", G, "PCIe receive throughput.", "", ""},
       [](const GpuFacts& g) { return D(g.pcie_rx_bytes_per_s); }},
      {"nvlink_crc_flit_errors",
       {"gpudoctor_gpu_nvlink_crc_flit_errors_total", C, "NVLink CRC flit errors, all links.", "",
        "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL"},
       [](const GpuFacts& g) {
         return Counter(g, [](const GpuCounterRead& r) { return r.nvlink_crc_flit_errors; });
       }},
      {"nvlink_crc_data_errors",
       {"gpudoctor_gpu_nvlink_crc_data_errors_total", C, "NVLink CRC data errors, all links.", "",
        "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL"},
       [](const GpuFacts& g) {
         return Counter(g, [](const GpuCounterRead& r) { return r.nvlink_crc_data_errors; });
       }},
      {"nvlink_replay_errors",
       {"gpudoctor_gpu_nvlink_replay_errors_total", C, "NVLink replay errors, all links.", "",
        "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"},
       [](const GpuFacts& g) {
         return Counter(g, [](const GpuCounterRead& r) { return r.nvlink_replay_errors; });
       }},
      {"nvlink_recovery_errors",
       {"gpudoctor_gpu_nvlink_recovery_errors_total", C, "NVLink recovery errors, all links.", "",
        "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"},
       [](const GpuFacts& g) {
         return Counter(g, [](const GpuCounterRead& r) { return r.nvlink_recovery_errors; });
       }},
      {"",
       {"gpudoctor_gpu_nvlink_links_active", G, "NVLinks up.", "", ""},
       [](const GpuFacts& g) -> std::optional<double> {
         if (g.nvlinks.empty()) return std::nullopt;
         return static_cast<double>(
             std::count_if(g.nvlinks.begin(), g.nvlinks.end(),
                           [](const NvLinkFacts& l) { return l.active.value_or(false); }));
       }},
  };
  return t;
}

const std::vector<FieldDescriptor<CpuFacts>>& CpuFieldTable() {
  using F = FieldDescriptor<CpuFacts>;
  static const std::vector<F> t = {
      {"busy_pct",
       {"gpudoctor_host_cpu_busy_ratio", G, "Share of CPU time busy, all cores (0-1)."},
       [](const CpuFacts& c) { return D(c.busy_pct, 0.01); }},
      {"iowait_pct",
       {"gpudoctor_host_cpu_iowait_ratio", G, "Share of CPU time waiting for I/O (0-1)."},
       [](const CpuFacts& c) { return D(c.iowait_pct, 0.01); }},
      {"steal_pct",
       {"gpudoctor_host_cpu_steal_ratio", G, "Share of CPU time stolen by the hypervisor (0-1)."},
       [](const CpuFacts& c) { return D(c.steal_pct, 0.01); }},
      {"load1",
       {"gpudoctor_host_load1", G, "Load average over 1 minute."},
       [](const CpuFacts& c) { return D(c.load1); }},
      {"load5",
       {"gpudoctor_host_load5", G, "Load average over 5 minutes."},
       [](const CpuFacts& c) { return D(c.load5); }},
      {"load15",
       {"gpudoctor_host_load15", G, "Load average over 15 minutes."},
       [](const CpuFacts& c) { return D(c.load15); }},
      {"logical_cores",
       {"gpudoctor_host_cpu_logical_cores", G, "Logical CPUs."},
       [](const CpuFacts& c) { return D(c.logical_cores); }},
  };
  return t;
}

const std::vector<FieldDescriptor<MemoryFacts>>& MemoryFieldTable() {
  using F = FieldDescriptor<MemoryFacts>;
  static const std::vector<F> t = {
      {"total_bytes",
       {"gpudoctor_host_memory_total_bytes", G, "RAM in total."},
       [](const MemoryFacts& m) { return D(m.total_bytes); }},
      {"available_bytes",
       {"gpudoctor_host_memory_available_bytes", G, "RAM available (MemAvailable)."},
       [](const MemoryFacts& m) { return D(m.available_bytes); }},
      {"swap_total_bytes",
       {"gpudoctor_host_swap_total_bytes", G, "Swap in total."},
       [](const MemoryFacts& m) { return D(m.swap_total_bytes); }},
      {"swap_free_bytes",
       {"gpudoctor_host_swap_free_bytes", G, "Swap free."},
       [](const MemoryFacts& m) { return D(m.swap_free_bytes); }},
      {"swap_in_pages_per_s",
       {"gpudoctor_host_swap_in_pages_per_second", G, "Pages swapped in."},
       [](const MemoryFacts& m) { return D(m.swap_in_pages_per_s); }},
      {"swap_out_pages_per_s",
       {"gpudoctor_host_swap_out_pages_per_second", G, "Pages swapped out."},
       [](const MemoryFacts& m) { return D(m.swap_out_pages_per_s); }},
      {"shmem_bytes",
       {"gpudoctor_host_memory_shmem_bytes", G, "Shared memory and tmpfs."},
       [](const MemoryFacts& m) { return D(m.shmem_bytes); }},
      {"oom_kill_count",
       {"gpudoctor_host_oom_kills_total", C, "OOM killer kills since boot."},
       [](const MemoryFacts& m) { return D(m.oom_kill_count); }},
  };
  return t;
}

const std::vector<FieldDescriptor<MountFacts>>& MountFieldTable() {
  using F = FieldDescriptor<MountFacts>;
  static const std::vector<F> t = {
      {"total_bytes",
       {"gpudoctor_host_filesystem_size_bytes", G, "Filesystem size.", "mount"},
       [](const MountFacts& m) { return D(m.total_bytes); }},
      {"available_bytes",
       {"gpudoctor_host_filesystem_available_bytes", G, "Filesystem space available.", "mount"},
       [](const MountFacts& m) { return D(m.available_bytes); }},
      {"inodes_total",
       {"gpudoctor_host_filesystem_inodes", G, "Filesystem inodes in total.", "mount"},
       [](const MountFacts& m) { return D(m.inodes_total); }},
      {"inodes_free",
       {"gpudoctor_host_filesystem_inodes_free", G, "Filesystem inodes free.", "mount"},
       [](const MountFacts& m) { return D(m.inodes_free); }},
  };
  return t;
}

const std::vector<FieldDescriptor<NicFacts>>& NicFieldTable() {
  using F = FieldDescriptor<NicFacts>;
  static const std::vector<F> t = {
      {"speed_mbps",
       {"gpudoctor_nic_speed_bits_per_second", G, "Link speed the driver reports.", "nic"},
       [](const NicFacts& n) { return D(n.speed_mbps, 1e6); }},
      {"carrier",
       {"gpudoctor_nic_carrier", G, "1 when the link has carrier.", "nic"},
       [](const NicFacts& n) -> std::optional<double> {
         if (!n.carrier) return std::nullopt;
         return *n.carrier ? 1.0 : 0.0;
       }},
      {"rx_bytes_per_s",
       {"gpudoctor_nic_receive_bytes_per_second", G, "Receive throughput.", "nic"},
       [](const NicFacts& n) { return D(n.rx_bytes_per_s); }},
      {"tx_bytes_per_s",
       {"gpudoctor_nic_transmit_bytes_per_second", G, "Transmit throughput.", "nic"},
       [](const NicFacts& n) { return D(n.tx_bytes_per_s); }},
      {"carrier_changes",
       {"gpudoctor_nic_carrier_changes_total", C, "Link up/down changes since boot.", "nic"},
       [](const NicFacts& n) { return D(n.carrier_changes); }},
      {"",
       {"gpudoctor_nic_receive_errors_total", C, "Receive errors since boot.", "nic"},
       [](const NicFacts& n) { return D(n.rx_errors); }},
      {"",
       {"gpudoctor_nic_transmit_errors_total", C, "Transmit errors since boot.", "nic"},
       [](const NicFacts& n) { return D(n.tx_errors); }},
      {"",
       {"gpudoctor_nic_receive_dropped_total", C, "Received packets dropped since boot.", "nic"},
       [](const NicFacts& n) { return D(n.rx_dropped); }},
      {"",
       {"gpudoctor_nic_transmit_dropped_total", C, "Transmit packets dropped since boot.", "nic"},
       [](const NicFacts& n) { return D(n.tx_dropped); }},
  };
  return t;
}

const std::vector<FieldDescriptor<TargetProbeFacts>>& TargetFieldTable() {
  using F = FieldDescriptor<TargetProbeFacts>;
  static const std::vector<F> t = {
      {"loss_pct",
       {"gpudoctor_net_target_loss_ratio", G, "Share of probes lost (0-1).", "target,group"},
       [](const TargetProbeFacts& h) { return D(h.loss_pct, 0.01); }},
      {"rtt_median_ms",
       {"gpudoctor_net_target_rtt_seconds", G, "Median round-trip time.", "target,group"},
       [](const TargetProbeFacts& h) { return D(h.rtt_median_ms, 1e-3); }},
      {"rtt_p95_ms",
       {"gpudoctor_net_target_rtt_p95_seconds", G, "95th percentile round-trip time.",
        "target,group"},
       [](const TargetProbeFacts& h) { return D(h.rtt_p95_ms, 1e-3); }},
      {"jitter_ms",
       {"gpudoctor_net_target_jitter_seconds", G,
        "Mean difference of consecutive round-trip times.", "target,group"},
       [](const TargetProbeFacts& h) { return D(h.jitter_ms, 1e-3); }},
  };
  return t;
}

const std::vector<FieldDescriptor<PressureLine>>& PressureFieldTable() {
  using F = FieldDescriptor<PressureLine>;
  static const std::vector<F> t = {
      {"avg10_pct",
       {"gpudoctor_host_pressure_avg10_ratio", G,
        "Share of time tasks stalled on the resource, 10 s average (0-1).", "resource,kind"},
       [](const PressureLine& l) { return D(l.avg10_pct, 0.01); }},
      {"avg60_pct",
       {"gpudoctor_host_pressure_avg60_ratio", G,
        "Share of time tasks stalled on the resource, 60 s average (0-1).", "resource,kind"},
       [](const PressureLine& l) { return D(l.avg60_pct, 0.01); }},
      {"total_us",
       {"gpudoctor_host_pressure_stalled_seconds_total", C, "Total stall time.", "resource,kind"},
       [](const PressureLine& l) { return D(l.total_us, 1e-6); }},
  };
  return t;
}

const MetricInfo kGpuThrottleActive = {"gpudoctor_gpu_throttle_active", G,
                                       "1 while this clock event (throttle) reason is active.",
                                       "reason", ""};
const MetricInfo kGpuXidErrorsTotal = {"gpudoctor_gpu_xid_errors_total", C,
                                       "Xid lines in the kernel log for this GPU, by code.", "xid",
                                       ""};
const MetricInfo kGpuInfo = {"gpudoctor_gpu_info", G,
                             "Always 1; the GPU's identity in labels (serial, vbios).",
                             "serial,vbios", ""};
const MetricInfo kGpuLost = {"gpudoctor_gpu_lost", G,
                             "1 when NVML reports the GPU lost (fallen off the bus).", "", ""};
const MetricInfo kGpuHung = {"gpudoctor_gpu_nvml_hung", G,
                             "1 when an NVML call on this GPU did not return.", "", ""};
const MetricInfo kFindingActive = {
    "gpudoctor_finding_active", G,
    "1 for every open finding (after its for_s); one alert rule can page on any finding.",
    "id,severity,layer", ""};
const MetricInfo kProbeSuccess = {"gpudoctor_probe_success", G,
                                  "1 when the probe's last run was ok or skipped.", "probe", ""};
const MetricInfo kProbeDurationSeconds = {"gpudoctor_probe_duration_seconds", G,
                                          "Wall time of the probe's last run.", "probe", ""};

std::vector<const MetricInfo*> AllMetrics() {
  std::vector<const MetricInfo*> out;
  auto add = [&out](const auto& table) {
    for (const auto& f : table) out.push_back(&f.metric);
  };
  add(GpuFieldTable());
  out.push_back(&kGpuThrottleActive);
  out.push_back(&kGpuXidErrorsTotal);
  out.push_back(&kGpuInfo);
  out.push_back(&kGpuLost);
  out.push_back(&kGpuHung);
  add(CpuFieldTable());
  add(MemoryFieldTable());
  add(PressureFieldTable());
  add(MountFieldTable());
  add(NicFieldTable());
  add(TargetFieldTable());
  out.push_back(&kFindingActive);
  out.push_back(&kProbeSuccess);
  out.push_back(&kProbeDurationSeconds);
  return out;
}

const MetricInfo* FindMetric(std::string_view name) {
  for (const MetricInfo* m : AllMetrics()) {
    if (m->name == name) return m;
  }
  return nullptr;
}

std::string LabelsKey(const MetricLabels& labels) {
  std::string out;
  for (const auto& [k, v] : labels) {
    if (!out.empty()) out += ',';
    out += k + "=" + v;
  }
  return out;
}

namespace {

template <typename Facts>
void Emit(const std::vector<FieldDescriptor<Facts>>& table, const Facts& facts, int gpu,
          const MetricLabels& labels, std::vector<MetricPoint>& out) {
  for (const auto& f : table) {
    if (std::optional<double> v = f.read(facts)) out.push_back({&f.metric, gpu, labels, *v});
  }
}

struct ReasonName {
  uint64_t bit;
  const char* name;
};
constexpr ReasonName kReasons[] = {
    {0x1, "gpu_idle"},    {0x2, "applications_clocks"}, {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"}, {0x10, "sync_boost"},         {0x20, "sw_thermal"},
    {0x40, "hw_thermal"}, {0x80, "hw_power_brake"},     {0x100, "display_clock"},
};

}  // namespace

std::vector<MetricPoint> FlattenSnapshot(const Snapshot& snap) {
  std::vector<MetricPoint> out;
  for (const GpuFacts& g : snap.gpu.gpus) {
    Emit(GpuFieldTable(), g, g.index, {}, out);
    std::optional<uint64_t> reasons =
        g.second.clock_event_reasons ? g.second.clock_event_reasons : g.first.clock_event_reasons;
    if (reasons) {
      for (const auto& r : kReasons) {
        out.push_back(
            {&kGpuThrottleActive, g.index, {{"reason", r.name}}, (*reasons & r.bit) ? 1.0 : 0.0});
      }
    }
    out.push_back({&kGpuInfo, g.index, {{"serial", g.serial}, {"vbios", g.vbios}}, 1.0});
    out.push_back({&kGpuLost, g.index, {}, g.lost ? 1.0 : 0.0});
    out.push_back({&kGpuHung, g.index, {}, g.hung ? 1.0 : 0.0});
  }
  // Xid lines per GPU and code: the kernel names the GPU by PCI address.
  std::map<std::pair<int, int>, uint64_t> xids;
  for (const KernelEvent& e : snap.kernel.events) {
    if (e.kind != KernelEventKind::kXid || !e.pci) continue;
    for (const GpuFacts& g : snap.gpu.gpus) {
      std::optional<PciAddress> a = ParsePciBusId(g.pci_bus_id);
      if (a && a->SameDevice(*e.pci)) xids[{g.index, e.xid}] += e.count;
    }
  }
  for (const auto& [key, count] : xids) {
    out.push_back({&kGpuXidErrorsTotal,
                   key.first,
                   {{"xid", std::to_string(key.second)}},
                   static_cast<double>(count)});
  }
  const HostFacts& h = snap.host;
  if (h.cpu) Emit(CpuFieldTable(), *h.cpu, -1, {}, out);
  if (h.memory) Emit(MemoryFieldTable(), *h.memory, -1, {}, out);
  if (h.pressure) {
    auto pressure = [&](const char* resource, const std::optional<PressureResource>& r) {
      if (!r) return;
      Emit(PressureFieldTable(), r->some, -1, {{"resource", resource}, {"kind", "some"}}, out);
      if (r->full) {
        Emit(PressureFieldTable(), *r->full, -1, {{"resource", resource}, {"kind", "full"}}, out);
      }
    };
    pressure("cpu", h.pressure->cpu);
    pressure("memory", h.pressure->memory);
    pressure("io", h.pressure->io);
  }
  if (h.mounts) {
    for (const MountFacts& m : *h.mounts) {
      Emit(MountFieldTable(), m, -1, {{"mount", m.mount_point}}, out);
    }
  }
  if (snap.network.nics) {
    for (const NicFacts& n : *snap.network.nics)
      Emit(NicFieldTable(), n, -1, {{"nic", n.name}}, out);
  }
  if (snap.network.reachability) {
    for (const TargetProbeFacts& t : snap.network.reachability->hosts) {
      Emit(TargetFieldTable(), t, -1, {{"target", t.name}, {"group", TargetGroupName(t.group)}},
           out);
    }
  }
  for (const ProbeRecord& p : snap.probes) {
    bool success = p.state == ProbeState::kOk || p.state == ProbeState::kSkipped;
    out.push_back({&kProbeSuccess, -1, {{"probe", p.name}}, success ? 1.0 : 0.0});
    out.push_back({&kProbeDurationSeconds, -1, {{"probe", p.name}}, p.ms / 1000.0});
  }
  return out;
}

}  // namespace gpudoctor
