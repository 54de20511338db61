// Facts of the GPU layer: NVML session status, driver versions, one GpuFacts per NVML device,
// NVIDIA devices on the PCI bus (sysfs), NVML calls that hung, Xid events seen through NVML.
// Filled by the `nvml` probe (src/probes/nvml_probe.cc) and the `pci_gpu` probe
// (src/probes/pci_gpu_probe.cc). Every measured value is optional: absent means unknown,
// unsupported, unreadable or implausible (garbage from the driver is dropped, never stored).
// Plain data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpudoctor {

// Counters read twice, at both ends of the sampling window (rates need both).
struct GpuCounterRead {
  std::optional<uint64_t> ecc_sbe_volatile;   // corrected (single-bit), since driver load
  std::optional<uint64_t> ecc_dbe_volatile;   // uncorrected (double-bit), since driver load
  std::optional<uint64_t> ecc_sbe_aggregate;  // lifetime of the board
  std::optional<uint64_t> ecc_dbe_aggregate;
  std::optional<uint64_t> pcie_replays;            // cumulative replay counter
  std::optional<uint64_t> nvlink_crc_flit_errors;  // totals over all links
  std::optional<uint64_t> nvlink_crc_data_errors;
  std::optional<uint64_t> nvlink_replay_errors;
  std::optional<uint64_t> nvlink_recovery_errors;
  // NVLink data (payload) sent and received over all links, KiB since the driver loaded (NVML
  // field values 138/139, all-links scope). Absent without nvmlDeviceGetFieldValues or NVLink.
  std::optional<uint64_t> nvlink_tx_kib, nvlink_rx_kib;
  std::optional<uint64_t> clock_event_reasons;  // bit mask (nvml.md §4.4)
};

struct GpuProcess {
  uint32_t pid = 0;
  std::optional<uint64_t> used_bytes;  // GPU memory; absent when NVML reports "not available"
  std::string comm;                    // /proc/PID/comm; empty when unreadable (other pid ns)
  std::string user;                    // owner name (or uid as text); empty when unreadable
  // The CUDA runtime it loaded, from the library paths in /proc/PID/maps (probes/
  // cuda_runtime_scan.h): "12.4" (major.minor known) or "12" (only the major: a soname such as
  // libcudart.so.12 or a bundled libcublas.so.12); empty when none was seen or maps not read.
  std::string cuda_runtime;
  std::string cuda_runtime_path;     // the library it came from (host path)
  bool cuda_forward_compat = false;  // libcuda.so mapped from a .../compat/ directory
  std::string maps_note;             // why maps was not read ("in D state", "timed out")
};

struct NvLinkFacts {
  int link = 0;
  std::optional<bool> active;
};

// An NVML call that returned an error other than NOT_SUPPORTED (which is simply absence).
struct NvmlCallError {
  std::string call;  // "nvmlDeviceGetTemperature"
  int code = 0;
  std::string text;  // "NVML_ERROR_UNKNOWN (Unknown Error)", "unknown NVML error 12345"
};

// An inference server on a GPU in the KV planner's numbers (derived when the GPU's processes are
// named: plan/live_advice.h), so the gpu.memory.full rule can quote them without the planner.
struct LiveKvFacts {
  std::string server;  // "vLLM"; the family recognised by process name
  std::string comm;    // the process name that told
  std::string model;   // the reference model the numbers are for ("llama-3-8b")
  bool sized = false;  // the numbers below are set (the planner could size this GPU)
  uint64_t kv_bytes_per_token = 0;
  int64_t seqs_512 = 0, seqs_2048 = 0, seqs_2048_fp8 = 0;  // concurrent sequences that fit
};

struct GpuFacts {
  int index = 0;  // NVML index (not necessarily the CUDA index)
  std::string uuid, serial, name, vbios;
  std::string pci_bus_id;                 // normalised "0000:3b:00.0" (lower-case, 4-digit domain)
  std::optional<uint32_t> pci_device_id;  // device << 16 | vendor

  std::optional<uint32_t> util_gpu_pct, util_memory_pct;
  std::optional<uint64_t> memory_used_bytes, memory_total_bytes;
  std::optional<uint64_t> memory_reserved_bytes;  // driver/firmware share of used (memory v2)
  std::optional<int> temp_c, memory_temp_c;
  std::optional<int> temp_slowdown_c, temp_shutdown_c, temp_memory_max_c;
  std::optional<uint32_t> power_mw, power_limit_mw;
  std::optional<uint64_t> energy_mj;  // total energy since the driver loaded (field values)
  std::optional<uint32_t> sm_clock_mhz, memory_clock_mhz, graphics_clock_mhz;
  std::optional<uint32_t> max_sm_clock_mhz, max_memory_clock_mhz, max_graphics_clock_mhz;
  std::optional<uint32_t> fan_pct;
  // Video encoder / decoder utilisation, percent over the driver's sampling period. A watch
  // session reads them at a slow cadence (gpu_slow_reads.cc); absent where NVML has no answer.
  std::optional<uint32_t> encoder_util_pct, decoder_util_pct;
  std::optional<bool> persistence_on;
  std::optional<bool> ecc_enabled;
  std::optional<uint64_t> retired_pages_sbe, retired_pages_dbe;
  std::optional<bool> retired_pages_pending;
  std::optional<uint64_t> remapped_rows_correctable, remapped_rows_uncorrectable;
  std::optional<bool> remap_pending, remap_failed;
  std::optional<uint32_t> pcie_gen, pcie_max_gen, pcie_width, pcie_max_width;
  std::optional<uint64_t> pcie_tx_bytes_per_s, pcie_rx_bytes_per_s;  // NVML, over 20 ms
  std::optional<int> nvlink_count;                                   // links present
  std::vector<NvLinkFacts> nvlinks;                  // per link state, when readable
  std::optional<std::vector<GpuProcess>> processes;  // absent: the call is unsupported
  std::optional<LiveKvFacts> live_kv;                // an inference server holds this GPU

  GpuCounterRead first, second;    // at the start and the end of the window
  std::optional<double> window_s;  // time between the two counter reads

  bool lost = false;      // NVML_ERROR_GPU_IS_LOST from any call
  std::string lost_call;  // the call that reported it
  bool hung = false;      // a call on this GPU did not return (see GpuLayerFacts::hangs)
  // The check's deadline expired while this GPU was still being sampled, before the NVML
  // timeout: its facts are partial, but nothing says the driver is hung.
  bool unfinished = false;
  std::vector<NvmlCallError> errors;  // bounded list
  int nvml_calls = 0;                 // NVML calls made for this GPU during the check
  // Reads left out to keep within the NVML call budget (30 per check, 15 per watch tick; only an
  // NVML without nvmlDeviceGetFieldValues needs more): their facts are absent, not broken.
  int reads_deferred = 0;
  std::optional<double> sample_ms;  // this GPU's NVML time, the sampling window excluded
};

enum class NvmlState {
  kNotRun,          // the probe did not run (default)
  kLibraryMissing,  // no libnvidia-ml could be loaded: no NVIDIA driver on this host
  kSymbolMissing,   // the library lacks a required function
  kInitFailed,      // nvmlInit_v2 returned an error (init_return)
  kInitHung,        // nvmlInit_v2 (or the device count) did not return within the NVML timeout
  kInitUnfinished,  // the check's deadline expired before init returned (and before the timeout)
  kOk,
};
const char* NvmlStateName(NvmlState s);

// A board serial as identity: drivers and boards without one print "0", "N/A", "[N/A]", "Not
// Available", "Unknown" or all zeros, and every such card would otherwise look like one card
// seen in many slots. Returns the trimmed serial, or "" for a placeholder (no serial). Every
// input of a serial (NVML, kernel log, reports, history, Prometheus) goes through it.
std::string SerialOrEmpty(std::string_view raw);

// The one identity of a GPU across ticks and hosts: its serial (placeholders are none), else its
// uuid, else its bus id, else "index:N".
std::string GpuIdentityKey(const GpuFacts& g);

struct NvmlStatus {
  NvmlState state = NvmlState::kNotRun;
  std::optional<int> init_return;  // nvmlReturn_t of the failing init / count call
  std::string error;               // human text: dlerror, NVML error string
  std::string library_path;        // the library that was loaded
  std::string library_version;     // from its file name, "550.54.15"; empty when unknown
  std::optional<int> device_count;
  int system_calls = 0;           // NVML calls not tied to one GPU (init, versions, events)
  std::optional<double> init_ms;  // load + nvmlInit_v2 + count + versions, when it finished
};

struct DriverFacts {
  std::string driver_version;              // nvmlSystemGetDriverVersion, "550.54.15"
  std::string nvml_version;                // "12.550.54.15"
  std::optional<int> cuda_driver_version;  // 12040 = CUDA 12.4
  std::string kernel_module_version;       // /sys/module/nvidia/version, "550.54.15"
};

// An NVIDIA display / 3D controller on the PCI bus (sysfs), whatever NVML says.
struct PciGpuDevice {
  std::string bus_id;  // "0000:3b:00.0"
  uint32_t device_id = 0;
  uint32_t class_code = 0;  // 0x030200 3D controller, 0x030000 VGA
  std::string driver;       // bound driver ("nvidia", "vfio-pci", ""), from the driver link
};

struct NvmlHang {
  std::string call;                            // "nvmlDeviceGetTemperature", "nvmlInit_v2"
  std::optional<int> gpu_index;                // absent for init / system calls
  std::string uuid, pci_bus_id, serial, name;  // what was known before it hung
  double waited_ms = 0;
  // The check's deadline (--deadline) expired before the NVML timeout (--nvml-timeout): the call
  // was slow or the check short, not proven hung. Rules report no hang for it.
  bool check_deadline = false;
};

struct NvmlXidEvent {
  std::optional<int> gpu_index;  // absent when the event's device is not one we enumerated
  uint64_t xid = 0;
  int64_t unix_ms = 0;  // when gpudoctor received it (drained from the event set)
};

// Xids of one GPU and code since `gpudoctor watch` started: kernel-log lines and NVML events
// merged, an occurrence both report (same GPU and code, a few seconds apart) counted once
// (src/watch/xid_ledger.h).
struct XidTally {
  std::string bus;  // "0000:3b:00.0"; the kernel line's subject when it names no address
  std::optional<int> gpu_index;
  uint64_t xid = 0;
  uint64_t count = 0;
  int64_t last_unix_ms = 0;  // the latest occurrence
};

struct GpuLayerFacts {
  NvmlStatus nvml;
  DriverFacts driver;
  std::vector<GpuFacts> gpus;
  std::optional<std::vector<PciGpuDevice>> pci_devices;  // absent: the sysfs scan did not run
  // Normalised bus ids of the directories under /proc/driver/nvidia/gpus: the GPUs the driver
  // manages, and inside a GPU container only those the container toolkit exposes (it masks the
  // others, while /sys/bus/pci is not namespaced). Absent: no such directory (no driver loaded,
  // or the pci_gpu probe did not run).
  std::optional<std::vector<std::string>> driver_proc_gpus;
  // NVIDIA bridges (vendor 0x10de, class 0x0680xx) on the PCI bus: the NVSwitches of an HGX/DGX
  // baseboard, whose GPUs are SXM parts with NVLinks that must be up. Absent: no sysfs scan.
  std::optional<int> pci_nvswitches;
  std::vector<NvmlHang> hangs;
  // Xid events drained from the NVML event API during the check. The kernel-log rules turn
  // those the kernel log does not show into `gpu.xid` findings (kernel_rules.cc).
  std::vector<NvmlXidEvent> nvml_xid_events;
  // Watch only: every Xid seen since the daemon started (XidLedger). Absent in a check.
  std::optional<std::vector<XidTally>> xid_tallies;
};

}  // namespace gpudoctor
