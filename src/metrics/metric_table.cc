#include "metrics/metric_table.h"

#include <algorithm>
#include <map>

#include "facts/pci_bus_id.h"

namespace gpudoctor {
namespace {

constexpr MetricType G = MetricType::kGauge;
constexpr MetricType C = MetricType::kCounter;

std::optional<FactValue> Count(size_t n) { return Fact(std::optional<uint64_t>(n)); }

// Bounds of the socket-traffic series per tick (EmitSocketTraffic).
constexpr size_t kTopTrafficProcesses = 5;
constexpr size_t kTopClientNetworks = 8;

// DCGM's NVLink bandwidth (DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL, field 449) is the KiB of NVML's
// TX + RX data counters per second between two reads, divided by 1000 (DcgmCacheManager's
// ReadAndCacheNvLinkBandwidth); dcgm-exporter types it a counter though it is a rate.
constexpr double kDcgmNvLinkScale = 1.0 / (1024.0 * 1000.0);

// Bytes per second of NVLink data, both directions, between the window's two counter reads;
// absent without both reads of both counters, or when they went backwards (driver reload).
std::optional<FactValue> NvLinkDataRate(const GpuFacts& g) {
  const GpuCounterRead& a = g.first;
  const GpuCounterRead& b = g.second;
  if (!g.window_s || *g.window_s <= 0 || !a.nvlink_tx_kib || !a.nvlink_rx_kib || !b.nvlink_tx_kib ||
      !b.nvlink_rx_kib) {
    return std::nullopt;
  }
  uint64_t before = *a.nvlink_tx_kib + *a.nvlink_rx_kib;
  uint64_t after = *b.nvlink_tx_kib + *b.nvlink_rx_kib;
  if (after < before) return std::nullopt;
  return Fact(std::optional<double>(static_cast<double>(after - before) * 1024.0 / *g.window_s));
}

}  // namespace

double FactValue::AsDouble() const {
  switch (kind) {
    case Kind::kInt:
      return static_cast<double>(i);
    case Kind::kUint:
      return static_cast<double>(u);
    case Kind::kDouble:
      return d;
    case Kind::kBool:
      return b ? 1.0 : 0.0;
  }
  return 0;
}

std::string DcgmHelp(const MetricInfo& m) {
  std::string help(m.help);
  for (std::string_view note : {" (0-1)", "(0-1)"}) {
    if (size_t at = help.find(note); at != std::string::npos) help.erase(at, note.size());
  }
  if (!help.empty() && help.back() == '.') help.pop_back();
  const std::string_view n = m.name;
  const double s = m.dcgm_scale;
  const char* unit = nullptr;
  if (n.ends_with("_bytes_per_second")) {
    // DCGM's NVLink bandwidth is KiB/s divided by 1000 (kDcgmNvLinkScale).
    unit = s == 1 ? "B/s" : s == kDcgmNvLinkScale ? "KiB/s / 1000" : nullptr;
  } else if (n.ends_with("_ratio")) {
    unit = s == 100 ? "%" : nullptr;
  } else if (n.ends_with("_bytes")) {
    unit = s == 1.0 / (1 << 20) ? "MiB" : nullptr;
  } else if (n.ends_with("_hertz")) {
    unit = s == 1e-6 ? "MHz" : nullptr;
  } else if (n.ends_with("_watts")) {
    unit = s == 1 ? "W" : nullptr;
  } else if (n.ends_with("_celsius")) {
    unit = s == 1 ? "C" : nullptr;
  } else if (n.ends_with("_joules_total")) {
    unit = s == 1e3 ? "mJ" : nullptr;
  }
  if (unit != nullptr) help += std::string(" (in ") + unit + ")";
  return help + ".";
}

const char* MetricTypeName(MetricType t) { return t == MetricType::kCounter ? "counter" : "gauge"; }

// Table order is the JSON key order of `check --json` (golden files pin it).
const std::vector<FieldDescriptor<GpuFacts>>& GpuFieldTable() {
  using F = FieldDescriptor<GpuFacts>;
  static const std::vector<F> t = {
      {"pci_device_id", {}, 1, [](const GpuFacts& g) { return Fact(g.pci_device_id); }},
      {"util_gpu_pct",
       {"gpudoctor_gpu_utilization_ratio", G,
        "Share of time a kernel ran on the GPU over the driver's sample period (0-1).", "",
        "DCGM_FI_DEV_GPU_UTIL", 100},
       0.01,
       [](const GpuFacts& g) { return Fact(g.util_gpu_pct); }},
      {"util_memory_pct",
       {"gpudoctor_gpu_memory_utilization_ratio", G,
        "Share of time device memory was read or written (0-1).", "", "DCGM_FI_DEV_MEM_COPY_UTIL",
        100},
       0.01,
       [](const GpuFacts& g) { return Fact(g.util_memory_pct); }},
      {"",
       {"gpudoctor_gpu_encoder_utilization_ratio", G,
        "Share of time the video encoder was busy over the driver's sample period (0-1).", "",
        "DCGM_FI_DEV_ENC_UTIL", 100},
       0.01,
       [](const GpuFacts& g) { return Fact(g.encoder_util_pct); }},
      {"",
       {"gpudoctor_gpu_decoder_utilization_ratio", G,
        "Share of time the video decoder was busy over the driver's sample period (0-1).", "",
        "DCGM_FI_DEV_DEC_UTIL", 100},
       0.01,
       [](const GpuFacts& g) { return Fact(g.decoder_util_pct); }},
      {"memory_used_bytes",
       {"gpudoctor_gpu_memory_used_bytes", G, "Device memory in use.", "", "DCGM_FI_DEV_FB_USED",
        1.0 / (1 << 20)},
       1,
       [](const GpuFacts& g) { return Fact(g.memory_used_bytes); }},
      {"memory_total_bytes",
       {"gpudoctor_gpu_memory_total_bytes", G, "Device memory in total.", "",
        "DCGM_FI_DEV_FB_TOTAL", 1.0 / (1 << 20)},
       1,
       [](const GpuFacts& g) { return Fact(g.memory_total_bytes); }},
      {"",
       {"gpudoctor_gpu_memory_free_bytes", G, "Device memory free (total - used).", "",
        "DCGM_FI_DEV_FB_FREE", 1.0 / (1 << 20)},
       1,
       [](const GpuFacts& g) -> std::optional<FactValue> {
         if (!g.memory_total_bytes || !g.memory_used_bytes) return std::nullopt;
         uint64_t used = std::min(*g.memory_used_bytes, *g.memory_total_bytes);
         return Fact(std::optional<uint64_t>(*g.memory_total_bytes - used));
       }},
      {"",
       {"gpudoctor_gpu_memory_reserved_bytes", G,
        "Device memory the driver and firmware reserve (NVML memory info v2; counted in used).", "",
        "DCGM_FI_DEV_FB_RESERVED", 1.0 / (1 << 20)},
       1,
       [](const GpuFacts& g) { return Fact(g.memory_reserved_bytes); }},
      {"temp_c",
       {"gpudoctor_gpu_temperature_celsius", G, "GPU core temperature.", "",
        "DCGM_FI_DEV_GPU_TEMP"},
       1,
       [](const GpuFacts& g) { return Fact(g.temp_c); }},
      {"memory_temp_c",
       {"gpudoctor_gpu_memory_temperature_celsius", G, "GPU memory (HBM) temperature.", "",
        "DCGM_FI_DEV_MEMORY_TEMP"},
       1,
       [](const GpuFacts& g) { return Fact(g.memory_temp_c); }},
      {"temp_slowdown_c",
       {"gpudoctor_gpu_temperature_slowdown_celsius", G,
        "Temperature at which the GPU starts to slow down.", "", "DCGM_FI_DEV_SLOWDOWN_TEMP"},
       1,
       [](const GpuFacts& g) { return Fact(g.temp_slowdown_c); }},
      {"temp_shutdown_c",
       {"gpudoctor_gpu_temperature_shutdown_celsius", G, "Temperature at which the GPU shuts down.",
        "", "DCGM_FI_DEV_SHUTDOWN_TEMP"},
       1,
       [](const GpuFacts& g) { return Fact(g.temp_shutdown_c); }},
      {"temp_memory_max_c",
       {"gpudoctor_gpu_memory_temperature_max_celsius", G, "Maximum memory temperature.", "", ""},
       1,
       [](const GpuFacts& g) { return Fact(g.temp_memory_max_c); }},
      {"power_mw",
       {"gpudoctor_gpu_power_watts", G, "Power draw.", "", "DCGM_FI_DEV_POWER_USAGE"},
       1e-3,
       [](const GpuFacts& g) { return Fact(g.power_mw); }},
      {"power_limit_mw",
       {"gpudoctor_gpu_power_limit_watts", G, "Enforced power limit.", "",
        "DCGM_FI_DEV_ENFORCED_POWER_LIMIT"},
       1e-3,
       [](const GpuFacts& g) { return Fact(g.power_limit_mw); }},
      {"",
       {"gpudoctor_gpu_energy_joules_total", C,
        "Energy the GPU consumed since the driver loaded (NVML total energy consumption).", "",
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", 1e3},
       1e-3,
       [](const GpuFacts& g) { return Fact(g.energy_mj); }},
      {"sm_clock_mhz",
       {"gpudoctor_gpu_sm_clock_hertz", G, "SM clock.", "", "DCGM_FI_DEV_SM_CLOCK", 1e-6},
       1e6,
       [](const GpuFacts& g) { return Fact(g.sm_clock_mhz); }},
      {"memory_clock_mhz",
       {"gpudoctor_gpu_memory_clock_hertz", G, "Memory clock.", "", "DCGM_FI_DEV_MEM_CLOCK", 1e-6},
       1e6,
       [](const GpuFacts& g) { return Fact(g.memory_clock_mhz); }},
      {"graphics_clock_mhz",
       {"gpudoctor_gpu_graphics_clock_hertz", G, "Graphics clock.", "", "", 1},
       1e6,
       [](const GpuFacts& g) { return Fact(g.graphics_clock_mhz); }},
      {"max_sm_clock_mhz",
       {"gpudoctor_gpu_sm_clock_max_hertz", G, "Maximum SM clock.", "", "", 1},
       1e6,
       [](const GpuFacts& g) { return Fact(g.max_sm_clock_mhz); }},
      {"max_memory_clock_mhz",
       {"gpudoctor_gpu_memory_clock_max_hertz", G, "Maximum memory clock.", "", "", 1},
       1e6,
       [](const GpuFacts& g) { return Fact(g.max_memory_clock_mhz); }},
      {"max_graphics_clock_mhz",
       {},
       1,
       [](const GpuFacts& g) { return Fact(g.max_graphics_clock_mhz); }},
      {"fan_pct",
       {"gpudoctor_gpu_fan_speed_ratio", G, "Fan speed as a share of its maximum (0-1).", "",
        "DCGM_FI_DEV_FAN_SPEED", 100},
       0.01,
       [](const GpuFacts& g) { return Fact(g.fan_pct); }},
      {"persistence_on",
       {"gpudoctor_gpu_persistence_mode", G, "1 when persistence mode is on.", "", ""},
       1,
       [](const GpuFacts& g) { return Fact(g.persistence_on); }},
      {"ecc_enabled",
       {"gpudoctor_gpu_ecc_enabled", G, "1 when ECC is enabled.", "", ""},
       1,
       [](const GpuFacts& g) { return Fact(g.ecc_enabled); }},
      {"retired_pages_sbe",
       {"gpudoctor_gpu_retired_pages_sbe", G, "Pages retired for corrected errors.", "",
        "DCGM_FI_DEV_RETIRED_SBE", 1, C},
       1,
       [](const GpuFacts& g) { return Fact(g.retired_pages_sbe); }},
      {"retired_pages_dbe",
       {"gpudoctor_gpu_retired_pages_dbe", G, "Pages retired for uncorrected errors.", "",
        "DCGM_FI_DEV_RETIRED_DBE", 1, C},
       1,
       [](const GpuFacts& g) { return Fact(g.retired_pages_dbe); }},
      {"retired_pages_pending",
       {"gpudoctor_gpu_retired_pages_pending", G,
        "1 when a page retirement waits for the next driver reload.", "",
        "DCGM_FI_DEV_RETIRED_PENDING", 1, C},
       1,
       [](const GpuFacts& g) { return Fact(g.retired_pages_pending); }},
      {"remapped_rows_correctable",
       {"gpudoctor_gpu_remapped_rows_correctable", G, "HBM rows remapped for corrected errors.", "",
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", 1, C},
       1,
       [](const GpuFacts& g) { return Fact(g.remapped_rows_correctable); }},
      {"remapped_rows_uncorrectable",
       {"gpudoctor_gpu_remapped_rows_uncorrectable", G, "HBM rows remapped for uncorrected errors.",
        "", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", 1, C},
       1,
       [](const GpuFacts& g) { return Fact(g.remapped_rows_uncorrectable); }},
      {"remap_pending",
       {"gpudoctor_gpu_row_remap_pending", G, "1 when a row remapping waits for a GPU reset.", "",
        ""},
       1,
       [](const GpuFacts& g) { return Fact(g.remap_pending); }},
      {"remap_failed",
       {"gpudoctor_gpu_row_remap_failed", G, "1 when a row remapping failed.", "",
        "DCGM_FI_DEV_ROW_REMAP_FAILURE"},
       1,
       [](const GpuFacts& g) { return Fact(g.remap_failed); }},
      {"pcie_gen",
       {"gpudoctor_gpu_pcie_link_gen", G, "Current PCIe link generation.", "",
        "DCGM_FI_DEV_PCIE_LINK_GEN"},
       1,
       [](const GpuFacts& g) { return Fact(g.pcie_gen); }},
      {"pcie_max_gen",
       {"gpudoctor_gpu_pcie_link_gen_max", G, "Maximum PCIe link generation.", "", ""},
       1,
       [](const GpuFacts& g) { return Fact(g.pcie_max_gen); }},
      {"pcie_width",
       {"gpudoctor_gpu_pcie_link_width", G, "Current PCIe link width (lanes).", "",
        "DCGM_FI_DEV_PCIE_LINK_WIDTH"},
       1,
       [](const GpuFacts& g) { return Fact(g.pcie_width); }},
      {"pcie_max_width",
       {"gpudoctor_gpu_pcie_link_width_max", G, "Maximum PCIe link width (lanes).", "", ""},
       1,
       [](const GpuFacts& g) { return Fact(g.pcie_max_width); }},
      {"pcie_tx_bytes_per_s",
       {"gpudoctor_gpu_pcie_tx_bytes_per_second", G,
        "PCIe transmit throughput (NVML, a 20 ms sample; watch reads it every tenth tick of a "
        "busy GPU, every 30 s of an idle one).",
        "", "DCGM_FI_PROF_PCIE_TX_BYTES"},
       1,
       [](const GpuFacts& g) { return Fact(g.pcie_tx_bytes_per_s); }},
      {"pcie_rx_bytes_per_s",
       {"gpudoctor_gpu_pcie_rx_bytes_per_second", G,
        "PCIe receive throughput (NVML, a 20 ms sample; watch reads it every tenth tick of a "
        "busy GPU, every 30 s of an idle one).",
        "", "DCGM_FI_PROF_PCIE_RX_BYTES"},
       1,
       [](const GpuFacts& g) { return Fact(g.pcie_rx_bytes_per_s); }},
      {"nvlink_count",
       {"gpudoctor_gpu_nvlink_links", G, "NVLinks present.", "", ""},
       1,
       [](const GpuFacts& g) { return Fact(g.nvlink_count); }},
      {"",
       {"gpudoctor_gpu_nvlink_links_active", G, "NVLinks up.", "", ""},
       1,
       [](const GpuFacts& g) -> std::optional<FactValue> {
         if (g.nvlinks.empty()) return std::nullopt;
         return Count(std::count_if(g.nvlinks.begin(), g.nvlinks.end(),
                                    [](const NvLinkFacts& l) { return l.active.value_or(false); }));
       }},
      {"",
       {"gpudoctor_gpu_nvlink_data_bytes_per_second", G,
        "NVLink data sent and received, all links, per second between the last two counter reads "
        "(NVML throughput counters).",
        "", "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", kDcgmNvLinkScale, C},
       1,
       [](const GpuFacts& g) { return NvLinkDataRate(g); }},
  };
  return t;
}

const std::vector<FieldDescriptor<GpuCounterRead>>& GpuCounterFieldTable() {
  using F = FieldDescriptor<GpuCounterRead>;
  using R = GpuCounterRead;
  static const std::vector<F> t = {
      {"ecc_sbe_volatile",
       {"gpudoctor_gpu_ecc_sbe_volatile_total", C,
        "Corrected (single-bit) ECC errors since the driver loaded.", "",
        "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL"},
       1,
       [](const R& r) { return Fact(r.ecc_sbe_volatile); }},
      {"ecc_dbe_volatile",
       {"gpudoctor_gpu_ecc_dbe_volatile_total", C,
        "Uncorrected (double-bit) ECC errors since the driver loaded.", "",
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"},
       1,
       [](const R& r) { return Fact(r.ecc_dbe_volatile); }},
      {"ecc_sbe_aggregate",
       {"gpudoctor_gpu_ecc_sbe_aggregate_total", C,
        "Corrected ECC errors over the board's lifetime.", "", "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL"},
       1,
       [](const R& r) { return Fact(r.ecc_sbe_aggregate); }},
      {"ecc_dbe_aggregate",
       {"gpudoctor_gpu_ecc_dbe_aggregate_total", C,
        "Uncorrected ECC errors over the board's lifetime.", "", "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL"},
       1,
       [](const R& r) { return Fact(r.ecc_dbe_aggregate); }},
      {"pcie_replays",
       {"gpudoctor_gpu_pcie_replays_total", C, "PCIe replay counter.", "",
        "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"},
       1,
       [](const R& r) { return Fact(r.pcie_replays); }},
      {"nvlink_crc_flit_errors",
       {"gpudoctor_gpu_nvlink_crc_flit_errors_total", C, "NVLink CRC flit errors, all links.", "",
        "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL"},
       1,
       [](const R& r) { return Fact(r.nvlink_crc_flit_errors); }},
      {"nvlink_crc_data_errors",
       {"gpudoctor_gpu_nvlink_crc_data_errors_total", C, "NVLink CRC data errors, all links.", "",
        "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL"},
       1,
       [](const R& r) { return Fact(r.nvlink_crc_data_errors); }},
      {"nvlink_replay_errors",
       {"gpudoctor_gpu_nvlink_replay_errors_total", C, "NVLink replay errors, all links.", "",
        "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"},
       1,
       [](const R& r) { return Fact(r.nvlink_replay_errors); }},
      {"nvlink_recovery_errors",
       {"gpudoctor_gpu_nvlink_recovery_errors_total", C, "NVLink recovery errors, all links.", "",
        "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"},
       1,
       [](const R& r) { return Fact(r.nvlink_recovery_errors); }},
      {"",
       {"gpudoctor_gpu_nvlink_transmit_bytes_total", C,
        "NVLink data (payload) sent over all links since the driver loaded.", "", ""},
       1024,
       [](const R& r) { return Fact(r.nvlink_tx_kib); }},
      {"",
       {"gpudoctor_gpu_nvlink_receive_bytes_total", C,
        "NVLink data (payload) received over all links since the driver loaded.", "", ""},
       1024,
       [](const R& r) { return Fact(r.nvlink_rx_kib); }},
      {"clock_event_reasons",
       {"gpudoctor_gpu_clock_event_reasons", G,
        "Clock event (throttle) reason bit mask as NVML reports it.", "",
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", 1, G, "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"},
       1,
       [](const R& r) { return Fact(r.clock_event_reasons); }},
  };
  return t;
}

const std::vector<FieldDescriptor<CpuFacts>>& CpuFieldTable() {
  using F = FieldDescriptor<CpuFacts>;
  static const std::vector<F> t = {
      {"logical_cores",
       {"gpudoctor_host_cpu_logical_cores", G, "Logical CPUs."},
       1,
       [](const CpuFacts& c) { return Fact(c.logical_cores); }},
      {"busy_pct",
       {"gpudoctor_host_cpu_busy_ratio", G, "Share of CPU time busy, all cores (0-1)."},
       0.01,
       [](const CpuFacts& c) { return Fact(c.busy_pct); }},
      {"iowait_pct",
       {"gpudoctor_host_cpu_iowait_ratio", G, "Share of CPU time waiting for I/O (0-1)."},
       0.01,
       [](const CpuFacts& c) { return Fact(c.iowait_pct); }},
      {"steal_pct",
       {"gpudoctor_host_cpu_steal_ratio", G, "Share of CPU time stolen by the hypervisor (0-1)."},
       0.01,
       [](const CpuFacts& c) { return Fact(c.steal_pct); }},
      {"load1",
       {"gpudoctor_host_load1", G, "Load average over 1 minute."},
       1,
       [](const CpuFacts& c) { return Fact(c.load1); }},
      {"load5",
       {"gpudoctor_host_load5", G, "Load average over 5 minutes."},
       1,
       [](const CpuFacts& c) { return Fact(c.load5); }},
      {"load15",
       {"gpudoctor_host_load15", G, "Load average over 15 minutes."},
       1,
       [](const CpuFacts& c) { return Fact(c.load15); }},
      {"window_s", {}, 1, [](const CpuFacts& c) { return Fact(c.window_s); }},
  };
  return t;
}

const std::vector<FieldDescriptor<MemoryFacts>>& MemoryFieldTable() {
  using F = FieldDescriptor<MemoryFacts>;
  static const std::vector<F> t = {
      {"total_bytes",
       {"gpudoctor_host_memory_total_bytes", G, "RAM in total."},
       1,
       [](const MemoryFacts& m) { return Fact(m.total_bytes); }},
      {"available_bytes",
       {"gpudoctor_host_memory_available_bytes", G, "RAM available (MemAvailable)."},
       1,
       [](const MemoryFacts& m) { return Fact(m.available_bytes); }},
      {"swap_total_bytes",
       {"gpudoctor_host_swap_total_bytes", G, "Swap in total."},
       1,
       [](const MemoryFacts& m) { return Fact(m.swap_total_bytes); }},
      {"swap_free_bytes",
       {"gpudoctor_host_swap_free_bytes", G, "Swap free."},
       1,
       [](const MemoryFacts& m) { return Fact(m.swap_free_bytes); }},
      {"swap_in_pages_per_s",
       {"gpudoctor_host_swap_in_pages_per_second", G, "Pages swapped in."},
       1,
       [](const MemoryFacts& m) { return Fact(m.swap_in_pages_per_s); }},
      {"swap_out_pages_per_s",
       {"gpudoctor_host_swap_out_pages_per_second", G, "Pages swapped out."},
       1,
       [](const MemoryFacts& m) { return Fact(m.swap_out_pages_per_s); }},
      {"shmem_bytes",
       {"gpudoctor_host_memory_shmem_bytes", G, "Shared memory and tmpfs."},
       1,
       [](const MemoryFacts& m) { return Fact(m.shmem_bytes); }},
      {"oom_kill_count",
       {"gpudoctor_host_oom_kills_total", C, "OOM killer kills since boot."},
       1,
       [](const MemoryFacts& m) { return Fact(m.oom_kill_count); }},
  };
  return t;
}

const std::vector<FieldDescriptor<MountFacts>>& MountFieldTable() {
  using F = FieldDescriptor<MountFacts>;
  static const std::vector<F> t = {
      {"total_bytes",
       {"gpudoctor_host_filesystem_size_bytes", G, "Filesystem size.", "mount"},
       1,
       [](const MountFacts& m) { return Fact(m.total_bytes); }},
      {"available_bytes",
       {"gpudoctor_host_filesystem_available_bytes", G, "Filesystem space available.", "mount"},
       1,
       [](const MountFacts& m) { return Fact(m.available_bytes); }},
      {"inodes_total",
       {"gpudoctor_host_filesystem_inodes", G, "Filesystem inodes in total.", "mount"},
       1,
       [](const MountFacts& m) { return Fact(m.inodes_total); }},
      {"inodes_free",
       {"gpudoctor_host_filesystem_inodes_free", G, "Filesystem inodes free.", "mount"},
       1,
       [](const MountFacts& m) { return Fact(m.inodes_free); }},
  };
  return t;
}

const std::vector<FieldDescriptor<NicFacts>>& NicFieldTable() {
  using F = FieldDescriptor<NicFacts>;
  static const std::vector<F> t = {
      {"carrier",
       {"gpudoctor_nic_carrier", G, "1 when the link has carrier.", "nic"},
       1,
       [](const NicFacts& n) { return Fact(n.carrier); }},
      {"speed_mbps",
       {"gpudoctor_nic_speed_bytes_per_second", G,
        "Link speed the driver reports, in bytes per second (Mb/s / 8 x 10^6), the unit of the "
        "throughput gauges beside it.",
        "nic"},
       1e6 / 8,
       [](const NicFacts& n) { return Fact(n.speed_mbps); }},
      {"rx_bytes_per_s",
       {"gpudoctor_nic_receive_bytes_per_second", G, "Receive throughput.", "nic"},
       1,
       [](const NicFacts& n) { return Fact(n.rx_bytes_per_s); }},
      {"tx_bytes_per_s",
       {"gpudoctor_nic_transmit_bytes_per_second", G, "Transmit throughput.", "nic"},
       1,
       [](const NicFacts& n) { return Fact(n.tx_bytes_per_s); }},
      {"carrier_changes",
       {"gpudoctor_nic_carrier_changes_total", C, "Link up/down changes since boot.", "nic"},
       1,
       [](const NicFacts& n) { return Fact(n.carrier_changes); }},
      {"rx_errors_delta", {}, 1, [](const NicFacts& n) { return Fact(n.rx_errors_delta); }},
      {"tx_errors_delta", {}, 1, [](const NicFacts& n) { return Fact(n.tx_errors_delta); }},
      {"rx_dropped_delta", {}, 1, [](const NicFacts& n) { return Fact(n.rx_dropped_delta); }},
      {"tx_dropped_delta", {}, 1, [](const NicFacts& n) { return Fact(n.tx_dropped_delta); }},
      {"",
       {"gpudoctor_nic_receive_errors_total", C, "Receive errors since boot.", "nic"},
       1,
       [](const NicFacts& n) { return Fact(n.rx_errors); }},
      {"",
       {"gpudoctor_nic_transmit_errors_total", C, "Transmit errors since boot.", "nic"},
       1,
       [](const NicFacts& n) { return Fact(n.tx_errors); }},
      {"",
       {"gpudoctor_nic_receive_dropped_total", C, "Received packets dropped since boot.", "nic"},
       1,
       [](const NicFacts& n) { return Fact(n.rx_dropped); }},
      {"",
       {"gpudoctor_nic_transmit_dropped_total", C, "Transmit packets dropped since boot.", "nic"},
       1,
       [](const NicFacts& n) { return Fact(n.tx_dropped); }},
  };
  return t;
}

namespace {

std::optional<FactValue> IbCounter(const IbPortFacts& p, const char* name) {
  auto it = p.counters.find(name);
  if (it == p.counters.end()) return std::nullopt;
  return Fact(std::optional<uint64_t>(it->second));
}

}  // namespace

const std::vector<FieldDescriptor<IbPortFacts>>& IbPortFieldTable() {
  using F = FieldDescriptor<IbPortFacts>;
  using P = IbPortFacts;
  static const std::vector<F> t = {
      {"active",
       {"gpudoctor_ib_port_active", G, "1 when the port state is ACTIVE.", "device,port"},
       1,
       [](const P& p) {
         if (p.state.empty()) return std::optional<FactValue>();
         return Fact(std::optional<bool>(p.state == "ACTIVE"));
       }},
      {"rate_gbps",
       {"gpudoctor_ib_port_rate_bytes_per_second", G,
        "Port rate the driver reports, in bytes per second (Gb/s / 8 x 10^9).", "device,port"},
       1e9 / 8,
       [](const P& p) { return Fact(p.rate_gbps); }},
      {"link_downed",
       {"gpudoctor_ib_port_link_downed_total", C,
        "Times the link went down (counters/link_downed).", "device,port"},
       1,
       [](const P& p) { return IbCounter(p, "link_downed"); }},
      {"link_error_recovery",
       {"gpudoctor_ib_port_link_error_recovery_total", C,
        "Link error recoveries (counters/link_error_recovery).", "device,port"},
       1,
       [](const P& p) { return IbCounter(p, "link_error_recovery"); }},
      {"symbol_error",
       {"gpudoctor_ib_port_symbol_errors_total", C, "Symbol errors (counters/symbol_error).",
        "device,port"},
       1,
       [](const P& p) { return IbCounter(p, "symbol_error"); }},
      {"port_rcv_errors",
       {"gpudoctor_ib_port_receive_errors_total", C,
        "Packets received with errors (counters/port_rcv_errors).", "device,port"},
       1,
       [](const P& p) { return IbCounter(p, "port_rcv_errors"); }},
      {"port_xmit_discards",
       {"gpudoctor_ib_port_transmit_discards_total", C,
        "Packets discarded on transmit (counters/port_xmit_discards).", "device,port"},
       1,
       [](const P& p) { return IbCounter(p, "port_xmit_discards"); }},
  };
  return t;
}

const std::vector<FieldDescriptor<TargetProbeFacts>>& TargetFieldTable() {
  using F = FieldDescriptor<TargetProbeFacts>;
  using T = TargetProbeFacts;
  static const std::vector<F> t = {
      {"loss_pct",
       {"gpudoctor_net_target_loss_ratio", G, "Share of probes lost (0-1).", "target,group"},
       0.01,
       [](const T& h) { return Fact(h.loss_pct); }},
      {"rtt_min_ms", {}, 1, [](const T& h) { return Fact(h.rtt_min_ms); }},
      {"rtt_median_ms",
       {"gpudoctor_net_target_rtt_seconds", G, "Median round-trip time.", "target,group"},
       1e-3,
       [](const T& h) { return Fact(h.rtt_median_ms); }},
      {"rtt_p95_ms",
       {"gpudoctor_net_target_rtt_p95_seconds", G, "95th percentile round-trip time.",
        "target,group"},
       1e-3,
       [](const T& h) { return Fact(h.rtt_p95_ms); }},
      {"rtt_max_ms", {}, 1, [](const T& h) { return Fact(h.rtt_max_ms); }},
      {"jitter_ms",
       {"gpudoctor_net_target_jitter_seconds", G,
        "Mean difference of consecutive round-trip times.", "target,group"},
       1e-3,
       [](const T& h) { return Fact(h.jitter_ms); }},
      // URL targets.
      {"dns_ms",
       {"gpudoctor_net_target_dns_seconds", G, "Time to resolve the target's name.",
        "target,group"},
       1e-3,
       [](const T& h) { return Fact(h.dns_ms); }},
      {"http_connect_ms",
       {"gpudoctor_net_target_http_connect_seconds", G,
        "Median TCP handshake time of the HTTP requests.", "target,group"},
       1e-3,
       [](const T& h) { return Fact(h.http_connect_ms); }},
      {"http_tls_ms",
       {"gpudoctor_net_target_http_tls_seconds", G,
        "Median TLS handshake time of the HTTPS requests.", "target,group"},
       1e-3,
       [](const T& h) { return Fact(h.http_tls_ms); }},
      {"http_ttfb_ms",
       {"gpudoctor_net_target_http_ttfb_seconds", G,
        "Median time to first byte of the HTTP responses (from the request's start).",
        "target,group"},
       1e-3,
       [](const T& h) { return Fact(h.http_ttfb_ms); }},
      {"http_ttfb_p95_ms",
       {"gpudoctor_net_target_http_ttfb_p95_seconds", G,
        "95th percentile time to first byte of the HTTP responses.", "target,group"},
       1e-3,
       [](const T& h) { return Fact(h.http_ttfb_p95_ms); }},
      {"http_wait_ms",
       {"gpudoctor_net_target_http_server_wait_seconds", G,
        "Median time from request sent to first byte: the server's share.", "target,group"},
       1e-3,
       [](const T& h) { return Fact(h.http_wait_ms); }},
      {"http_status",
       {"gpudoctor_net_target_http_status", G, "HTTP status code of the last response.",
        "target,group"},
       1,
       [](const T& h) { return Fact(h.http_status); }},
      {"http_failed", {}, 1, [](const T& h) { return Fact(h.http_failed); }},
      {"http_failed_pct",
       {"gpudoctor_net_target_http_failure_ratio", G,
        "Share of HTTP requests failed: no response (connect, timeout, TLS) or 5xx (0-1).",
        "target,group"},
       0.01,
       [](const T& h) { return Fact(h.http_failed_pct); }},
  };
  return t;
}

const std::vector<FieldDescriptor<PressureLine>>& PressureFieldTable() {
  using F = FieldDescriptor<PressureLine>;
  static const std::vector<F> t = {
      {"avg10_pct",
       {"gpudoctor_host_pressure_avg10_ratio", G,
        "Share of time tasks stalled on the resource, 10 s average (0-1).", "resource,kind"},
       0.01,
       [](const PressureLine& l) { return Fact(l.avg10_pct); }},
      {"avg60_pct",
       {"gpudoctor_host_pressure_avg60_ratio", G,
        "Share of time tasks stalled on the resource, 60 s average (0-1).", "resource,kind"},
       0.01,
       [](const PressureLine& l) { return Fact(l.avg60_pct); }},
      {"avg300_pct", {}, 1, [](const PressureLine& l) { return Fact(l.avg300_pct); }},
      {"total_us",
       {"gpudoctor_host_pressure_stalled_seconds_total", C, "Total stall time.", "resource,kind"},
       1e-6,
       [](const PressureLine& l) { return Fact(l.total_us); }},
  };
  return t;
}

const std::vector<FieldDescriptor<JobFacts>>& JobFieldTable() {
  using F = FieldDescriptor<JobFacts>;
  using T = JobFacts;
  static const std::vector<F> t = {
      {"step_seconds",
       {"gpudoctor_job_step_seconds", G,
        "The job's step time: median of its newest (up to 5) measured steps.", "job"},
       1,
       [](const T& j) { return Fact(j.step_seconds); }},
      {"baseline_seconds",
       {"gpudoctor_job_step_baseline_seconds", G,
        "The job's baseline step time: configured, or the median of its first steps.", "job"},
       1,
       [](const T& j) { return Fact(j.baseline_seconds); }},
      {"step", {}, 1, [](const T& j) { return Fact(j.step); }},
      {"samples",
       {"gpudoctor_job_steps_measured_total", MetricType::kCounter,
        "Step times measured for the job since watch started.", "job"},
       1,
       [](const T& j) { return Fact(std::optional<uint64_t>(j.samples)); }},
  };
  return t;
}

const std::vector<FieldDescriptor<InferenceFacts>>& InferenceFieldTable() {
  using F = FieldDescriptor<InferenceFacts>;
  using T = InferenceFacts;
  static const std::vector<F> t = {
      {"kv_cache_usage",
       {"gpudoctor_inference_kv_cache_usage_ratio", G,
        "The inference engine's KV cache usage (0-1), from its own metrics.",
        "inference, engine, model"},
       1,
       [](const T& f) { return Fact(f.kv_cache_usage); }},
      {"requests_waiting",
       {"gpudoctor_inference_requests_waiting", G,
        "Requests waiting in the inference engine's queue.", "inference, engine, model"},
       1,
       [](const T& f) { return Fact(f.requests_waiting); }},
      {"requests_running",
       {"gpudoctor_inference_requests_running", G,
        "Requests the inference engine is running now (its batch).", "inference, engine, model"},
       1,
       [](const T& f) { return Fact(f.requests_running); }},
      {"preemptions_total", {}, 1, [](const T& f) { return Fact(f.preemptions_total); }},
      {"preemptions_window",
       {"gpudoctor_inference_preemptions_window", G,
        "Requests the engine preempted in the last window (restarts counted from zero).",
        "inference, engine, model"},
       1,
       [](const T& f) { return Fact(f.preemptions_window); }},
      {"requests_window", {}, 1, [](const T& f) { return Fact(f.requests_window); }},
      {"queue_seconds_mean",
       {"gpudoctor_inference_queue_seconds_mean", G,
        "Mean time a request waited in the engine's queue over the last window (Triton).",
        "inference, engine, model"},
       1,
       [](const T& f) { return Fact(f.queue_seconds_mean); }},
      {"window_s", {}, 1, [](const T& f) { return Fact(std::optional<double>(f.window_s)); }},
      {"ttft_p50_s", {}, 1, [](const T& f) { return Fact(f.ttft.p50_s); }},
      {"ttft_p95_s",
       {"gpudoctor_inference_ttft_p95_seconds", G,
        "95th percentile time to first token of the requests of the last window.",
        "inference, engine, model"},
       1,
       [](const T& f) { return Fact(f.ttft.p95_s); }},
      {"ttft_p99_s", {}, 1, [](const T& f) { return Fact(f.ttft.p99_s); }},
      {"tpot_p50_s", {}, 1, [](const T& f) { return Fact(f.tpot.p50_s); }},
      {"tpot_p95_s",
       {"gpudoctor_inference_tpot_p95_seconds", G,
        "95th percentile time per output token of the requests of the last window.",
        "inference, engine, model"},
       1,
       [](const T& f) { return Fact(f.tpot.p95_s); }},
      {"tpot_p99_s", {}, 1, [](const T& f) { return Fact(f.tpot.p99_s); }},
      {"prompt_tokens_mean",
       {"gpudoctor_inference_prompt_tokens_mean", G,
        "Mean prompt length (tokens) of the engine's requests since it started.",
        "inference, engine, model"},
       1,
       [](const T& f) { return Fact(f.prompt_tokens_mean); }},
      {"prompt_tokens_p95", {}, 1, [](const T& f) { return Fact(f.prompt_tokens_p95); }},
      {"generation_tokens_mean", {}, 1, [](const T& f) { return Fact(f.generation_tokens_mean); }},
      {"restarts",
       {"gpudoctor_inference_restarts_total", MetricType::kCounter,
        "Engine restarts seen (its counters went back) since watch started.",
        "inference, engine, model"},
       1,
       [](const T& f) { return Fact(std::optional<uint64_t>(f.restarts)); }},
  };
  return t;
}

const std::vector<FieldDescriptor<TemperatureSensor>>& TemperatureSensorFieldTable() {
  using F = FieldDescriptor<TemperatureSensor>;
  using T = TemperatureSensor;
  static const std::vector<F> t = {
      {"temp_c", {}, 1, [](const T& s) { return Fact(s.temp_c); }},
      {"",
       {"gpudoctor_host_inlet_temperature_celsius", G,
        "Inlet/ambient air temperature (sensors labelled inlet, ambient, intake).",
        "sensor,source"},
       1,
       [](const T& s) { return s.kind == SensorKind::kInlet ? Fact(s.temp_c) : std::nullopt; }},
      {"",
       {"gpudoctor_host_board_temperature_celsius", G,
        "Mainboard/system temperature (sensors labelled board, system).", "sensor,source"},
       1,
       [](const T& s) { return s.kind == SensorKind::kBoard ? Fact(s.temp_c) : std::nullopt; }},
  };
  return t;
}

const MetricInfo kGpuThrottleActive = {"gpudoctor_gpu_throttle_active", G,
                                       "1 while this clock event (throttle) reason is active.",
                                       "reason", ""};
const MetricInfo kGpuXidErrorsTotal = {"gpudoctor_gpu_xid_errors_total", C,
                                       "Xid errors of this GPU by code: kernel-log lines and NVML "
                                       "events (watch: one occurrence both report counts once).",
                                       "xid", ""};
const MetricInfo kGpuInfo = {"gpudoctor_gpu_info", G,
                             "Always 1; the GPU's identity in labels (serial, vbios).",
                             "serial,vbios", ""};
const MetricInfo kGpuLost = {"gpudoctor_gpu_lost", G,
                             "1 when NVML reports the GPU lost (fallen off the bus).", "", ""};
const MetricInfo kGpuHung = {"gpudoctor_gpu_nvml_hung", G,
                             "1 when an NVML call on this GPU did not return.", "", ""};
// Socket traffic and client networks (the sockets probe, slow cadence): bounded per tick, so the
// history keeps who sent the bytes (gpudoctor report bandwidth) and how each client network
// usually sees the server (net.clients.degraded against its own history).
const MetricInfo kProcessTransmitBytesPerSecond = {
    "gpudoctor_process_transmit_bytes_per_second", G,
    "TCP bytes per second a process sent (acknowledged), summed by process name; only the "
    "5 largest of each sockets sample (by bytes sent and received).",
    "process", ""};
const MetricInfo kProcessReceiveBytesPerSecond = {
    "gpudoctor_process_receive_bytes_per_second", G,
    "TCP bytes per second a process received, for the same processes as "
    "gpudoctor_process_transmit_bytes_per_second.",
    "process", ""};
const MetricInfo kClientNetworkRttSeconds = {
    "gpudoctor_net_client_rtt_seconds", G,
    "Median smoothed RTT of the established TCP connections to a client network (/24, /64); the 8 "
    "networks with the most connections.",
    "network", ""};
const MetricInfo kClientNetworkRetransmitRatio = {
    "gpudoctor_net_client_retransmit_ratio", G,
    "Retransmitted / sent segments of the connections to a client network (0-1).", "network", ""};

const MetricInfo kFindingActive = {
    "gpudoctor_finding_active", G,
    "1 for every open finding (after its for_s); one alert rule can page on any finding.",
    "id,severity,layer,action", ""};
const MetricInfo kFindingSeverity = {
    "gpudoctor_finding_severity", G,
    "Severity of every open finding: 1 info, 2 warn, 3 crit. No severity or action label, so a "
    "finding that flips between warn and crit stays one series.",
    "id,layer", ""};
const MetricInfo kFindingAcknowledged = {
    "gpudoctor_finding_acknowledged", G,
    "1 for an open finding an operator acknowledged (gpudoctor ack), else 0; labels as "
    "gpudoctor_finding_severity, for alert rules to leave it out.",
    "id,layer", ""};
const MetricInfo kFindingSilenced = {
    "gpudoctor_finding_silenced", G,
    "1 for an open finding under a silence (gpudoctor silence), else 0; labels as "
    "gpudoctor_finding_severity.",
    "id,layer", ""};
const MetricInfo kFindingOpenedTimestampSeconds = {
    "gpudoctor_finding_opened_timestamp_seconds", G,
    "Unix time at which an open finding opened (after its for_s); labels as "
    "gpudoctor_finding_severity. Alert rules measure how long a finding has been open from it, "
    "so a change of severity or action never restarts the wait.",
    "id,layer", ""};
const MetricInfo kBuildInfo = {
    "gpudoctor_build_info", G,
    "Always 1; the gpudoctor version, source revision and the NVIDIA driver version in labels.",
    "version,revision,driver_version", ""};
const MetricInfo kLastTickTimestampSeconds = {
    "gpudoctor_last_tick_timestamp_seconds", G,
    "Unix time at which the tick being served started. Older than a few intervals while the "
    "scrape answers (up == 1): the daemon's ticks are stuck.",
    "", ""};
const MetricInfo kTickIntervalSeconds = {"gpudoctor_tick_interval_seconds", G,
                                         "The daemon's configured tick interval.", "", ""};
const MetricInfo kProbeSuccess = {"gpudoctor_probe_success", G,
                                  "1 when the probe's last run was ok or skipped.", "probe", ""};
const MetricInfo kProbeDurationSeconds = {"gpudoctor_probe_duration_seconds", G,
                                          "Wall time of the probe's last run.", "probe", ""};

std::vector<const MetricInfo*> AllMetrics() {
  std::vector<const MetricInfo*> out;
  auto add = [&out](const auto& table) {
    for (const auto& f : table) {
      if (!f.metric.name.empty()) out.push_back(&f.metric);
    }
  };
  add(GpuFieldTable());
  add(GpuCounterFieldTable());
  out.push_back(&kGpuThrottleActive);
  out.push_back(&kGpuXidErrorsTotal);
  out.push_back(&kGpuInfo);
  out.push_back(&kGpuLost);
  out.push_back(&kGpuHung);
  add(CpuFieldTable());
  add(MemoryFieldTable());
  add(PressureFieldTable());
  add(MountFieldTable());
  add(TemperatureSensorFieldTable());
  add(NicFieldTable());
  add(IbPortFieldTable());
  add(TargetFieldTable());
  add(JobFieldTable());
  out.push_back(&kProcessTransmitBytesPerSecond);
  out.push_back(&kProcessReceiveBytesPerSecond);
  out.push_back(&kClientNetworkRttSeconds);
  out.push_back(&kClientNetworkRetransmitRatio);
  add(InferenceFieldTable());
  out.push_back(&kFindingActive);
  out.push_back(&kFindingSeverity);
  out.push_back(&kFindingAcknowledged);
  out.push_back(&kFindingSilenced);
  out.push_back(&kFindingOpenedTimestampSeconds);
  out.push_back(&kBuildInfo);
  out.push_back(&kLastTickTimestampSeconds);
  out.push_back(&kTickIntervalSeconds);
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

namespace {

std::string_view UnitOf(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kSuffixes[] = {
      {"_celsius", "°C"},    {"_watts", "W"},     {"_hertz", "Hz"},
      {"_bytes", "bytes"},   {"_ratio", "0-1"},   {"_seconds", "s"},
      {"_per_second", "/s"}, {"_joules", "J"},    {"_bytes_per_second", "bytes/s"},
      {"_percent", "%"},     {"_total", "count"}, {"_joules_total", "J"}};
  std::string_view best;
  size_t best_len = 0;
  for (const auto& [suffix, unit] : kSuffixes) {
    if (name.ends_with(suffix) && suffix.size() > best_len) {
      best = unit;
      best_len = suffix.size();
    }
  }
  return best;
}

}  // namespace

std::vector<PlottableMetric> PlottableMetrics() {
  std::vector<PlottableMetric> out;
  auto add = [&out](const auto& table, bool per_gpu) {
    for (const auto& f : table) {
      if (f.metric.name.empty() || !f.metric.labels.empty()) continue;
      out.push_back({&f.metric, per_gpu, UnitOf(f.metric.name)});
    }
  };
  add(GpuFieldTable(), true);
  add(GpuCounterFieldTable(), true);
  add(CpuFieldTable(), false);
  add(MemoryFieldTable(), false);
  // Job step times: one series per job (label job); a plot without a job takes the first.
  for (const auto& f : JobFieldTable()) {
    if (f.metric.name.empty() || f.metric.type != MetricType::kGauge) continue;
    out.push_back({&f.metric, false, UnitOf(f.metric.name)});
  }
  return out;
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
    if (f.metric.name.empty()) continue;
    if (std::optional<FactValue> v = f.read(facts)) {
      out.push_back({&f.metric, gpu, labels, v->AsDouble() * f.scale});
    }
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

// A label value from outside text (a process name): no separator of LabelsKey, bounded.
std::string LabelSafe(std::string_view v) {
  std::string out;
  for (char c : v.substr(0, 64)) {
    unsigned char u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f || c == ',' || c == '=' || c == '"' || c == '\\') ? '_' : c;
  }
  return out.empty() ? "?" : out;
}

// The largest senders by name (processes of one name summed) and the client networks with the
// most connections: a bounded number of series however busy the host is.
void EmitSocketTraffic(const SocketTrafficFacts& s, std::vector<MetricPoint>& out) {
  std::map<std::string, std::pair<double, double>> by_name;  // tx, rx bytes/s
  for (const ProcessTraffic& p : s.processes) {
    if (!p.tx_bytes_per_s && !p.rx_bytes_per_s) continue;
    auto& r = by_name[LabelSafe(p.comm)];
    r.first += p.tx_bytes_per_s.value_or(0);
    r.second += p.rx_bytes_per_s.value_or(0);
  }
  std::vector<std::pair<std::string, std::pair<double, double>>> ranked(by_name.begin(),
                                                                        by_name.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    double x = a.second.first + a.second.second, y = b.second.first + b.second.second;
    return x != y ? x > y : a.first < b.first;
  });
  if (ranked.size() > kTopTrafficProcesses) ranked.resize(kTopTrafficProcesses);
  for (const auto& [name, rates] : ranked) {
    if (rates.first + rates.second <= 0) continue;
    out.push_back({&kProcessTransmitBytesPerSecond, -1, {{"process", name}}, rates.first});
    out.push_back({&kProcessReceiveBytesPerSecond, -1, {{"process", name}}, rates.second});
  }
  size_t n = 0;
  for (const ClientNetworkFacts& g : s.client_networks) {
    if (n >= kTopClientNetworks) break;
    if (!g.rtt_median_ms && !g.retrans_pct) continue;
    ++n;
    if (g.rtt_median_ms) {
      out.push_back(
          {&kClientNetworkRttSeconds, -1, {{"network", g.network}}, *g.rtt_median_ms / 1e3});
    }
    if (g.retrans_pct) {
      out.push_back(
          {&kClientNetworkRetransmitRatio, -1, {{"network", g.network}}, *g.retrans_pct / 100});
    }
  }
}

}  // namespace

std::vector<MetricPoint> FlattenSnapshot(const Snapshot& snap) {
  std::vector<MetricPoint> out;
  // About as many points as the last snapshot of this thread had (a watch flattens one a tick):
  // one allocation instead of a growing vector's dozen moves of every point.
  thread_local size_t last_size = 0;
  out.reserve(last_size + last_size / 8);
  for (const GpuFacts& g : snap.gpu.gpus) {
    Emit(GpuFieldTable(), g, g.index, {}, out);
    // Counters: the later read of the window (the first when there is only one).
    bool have_second = false;
    for (const auto& f : GpuCounterFieldTable()) have_second = have_second || f.read(g.second);
    Emit(GpuCounterFieldTable(), have_second ? g.second : g.first, g.index, {}, out);
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
  // Xids per GPU and code: under watch the ledger's tallies (kernel log and NVML events merged);
  // otherwise the kernel log's lines, which name the GPU by PCI address.
  std::map<std::pair<int, int>, uint64_t> xids;
  if (snap.gpu.xid_tallies) {
    for (const XidTally& t : *snap.gpu.xid_tallies) {
      if (t.gpu_index && t.xid <= 1u << 30)
        xids[{*t.gpu_index, static_cast<int>(t.xid)}] += t.count;
    }
  }
  for (const KernelEvent& e : snap.kernel.events) {
    if (snap.gpu.xid_tallies) break;
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
  if (h.thermal) {
    for (const TemperatureSensor& s : h.thermal->sensors) {
      Emit(TemperatureSensorFieldTable(), s, -1, {{"sensor", s.name}, {"source", s.source}}, out);
    }
  }
  if (snap.network.nics) {
    for (const NicFacts& n : *snap.network.nics)
      Emit(NicFieldTable(), n, -1, {{"nic", n.name}}, out);
  }
  if (snap.network.ib_ports) {
    for (const IbPortFacts& p : *snap.network.ib_ports) {
      Emit(IbPortFieldTable(), p, -1, {{"device", p.device}, {"port", std::to_string(p.port)}},
           out);
    }
  }
  if (snap.network.reachability) {
    for (const TargetProbeFacts& t : snap.network.reachability->hosts) {
      Emit(TargetFieldTable(), t, -1, {{"target", t.name}, {"group", TargetGroupName(t.group)}},
           out);
    }
  }
  for (const JobFacts& j : snap.jobs) Emit(JobFieldTable(), j, -1, {{"job", j.name}}, out);
  if (snap.network.sockets) EmitSocketTraffic(*snap.network.sockets, out);
  for (const InferenceFacts& f : snap.inference) {
    Emit(InferenceFieldTable(), f, -1,
         {{"inference", f.name}, {"engine", f.engine}, {"model", f.model}}, out);
  }
  for (const ProbeRecord& p : snap.probes) {
    bool success = p.state == ProbeState::kOk || p.state == ProbeState::kSkipped;
    out.push_back({&kProbeSuccess, -1, {{"probe", p.name}}, success ? 1.0 : 0.0});
    out.push_back({&kProbeDurationSeconds, -1, {{"probe", p.name}}, p.ms / 1000.0});
  }
  last_size = out.size();
  return out;
}

}  // namespace gpudoctor
