// Facts of the kernel log: Xid and other kernel events aggregated from /dev/kmsg, the
// systemd journal or a saved log file, plus the scanner's own accounting (skipped and garbled
// lines, ring overruns). Filled by the `kmsg` probe (src/probes/kmsg_probe.cc) and by
// `gpudoctor logs` through ScanLog* (src/kmsg/log_scanner.h); judged by src/rules/kernel_rules.cc.
// Plain data. Times are optional: a dmesg file has only boot-relative stamps, a bare message none.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "facts/pci_bus_id.h"

namespace gpudoctor {

struct LogTime {
  std::optional<int64_t> wall_us;  // microseconds since the Unix epoch (UTC)
  std::optional<int64_t> boot_us;  // microseconds since boot (printk clock)
  bool empty() const { return !wall_us && !boot_us; }
};

enum class KernelEventKind {
  kXid,               // NVRM: Xid line
  kGpuLost,           // "GPU has fallen off the bus" (one-line and three-line forms)
  kPcieAer,           // PCIe AER error report of one device
  kHungTask,          // "INFO: task X:PID blocked for more than N seconds."
  kOom,               // OOM killer kill ("Killed process PID (comm)")
  kMce,               // machine check / APEI hardware error records
  kNetLink,           // NIC link down/up, NETDEV WATCHDOG transmit timeouts
  kCpuThermal,        // "CPUn: Core|Package temperature above threshold"
  kDriverInitFailed,  // NVRM RmInitAdapter failed
  kGspTimeout,        // NVRM GSP RPC timeout / heartbeat timeout outside an Xid line
  kDriverMismatch,    // "NVRM: API mismatch: the client has the version X, but ... Y"
  kCpuStall,          // soft lockup, hard LOCKUP, RCU stall reports
  kNvswitchSxid,      // "nvidia-nvswitchN: SXid (PCI:BDF): CODE, Fatal|Non-fatal, ..." (HGX fabric)
  kResetRequired,     // NVRM status assertion NV_ERR_RESET_REQUIRED: the GPU must be reset
};
const char* KernelEventKindName(KernelEventKind kind);  // "xid", "gpu_lost", "pcie_aer", ...

enum class AerSeverity { kCorrected, kNonFatal, kFatal };
const char* AerSeverityName(AerSeverity s);  // "corrected", "non_fatal", "fatal"

// One aggregated event: every line with the same key (kind, subject, code, severity) folds into
// it. Fields marked with a kind apply to that kind only and stay empty otherwise.
struct KernelEvent {
  KernelEventKind kind = KernelEventKind::kXid;
  // What the event is about: the PCI address for GPU/PCIe events, the task name (hung task), the
  // victim name (OOM), the interface (net), "core"/"package" (thermal), "GPU0"-style names for
  // GSP lines that carry no address.
  std::string subject;
  std::optional<PciAddress> pci;
  uint64_t count = 0;  // lines folded into this event
  LogTime first, last;
  std::string sample;                  // first full line, sanitised, at most 512 bytes
  std::vector<std::string> processes;  // distinct "name[pid]" (Xid, hung task, OOM), bounded
  bool processes_truncated = false;
  // Distinct small ids, bounded: MIG GPU instances (Xid), NVLink links (Xid 144-150), CPUs
  // (thermal, MCE, CPU stalls), banks are not kept.
  std::vector<int64_t> ids;

  // kXid
  int xid = 0;
  bool reset_required = false;        // "RST: Yes" seen (Xid 94/95)
  bool drain_reset_required = false;  // "D-RST: Yes" seen
  std::string nvlink_unit;            // NVLink5 tail: "NETIR_LINK_EVT"
  bool nvlink_fatal = false;          // a "Fatal" NVLink5 line seen; kNvswitchSxid: a fatal SXid
  std::optional<uint32_t> nvlink_intrinfo, nvlink_errstatus;  // last seen
  // Xid 154: distinct new recovery actions named by the lines ("GPU Reset Required"), bounded.
  std::vector<std::string> recovery_actions;

  // kPcieAer
  AerSeverity aer_severity = AerSeverity::kCorrected;
  std::optional<uint32_t> vendor_id, device_id;  // from "device [10de:2330]"
  std::string aer_type;                          // "Physical Layer", "Data Link Layer", ...
  std::vector<std::string> error_names;          // "RxErr", "BadTLP", ... bounded

  // kHungTask: the longest "blocked for more than N seconds"; kCpuStall: the longest "stuck for Ns"
  std::optional<int64_t> max_blocked_s;
  bool nvidia_related = false;  // NVIDIA task name or [nvidia*] frames in its stack

  // kOom
  std::optional<int64_t> max_anon_rss_kb;
  bool cgroup_oom = false;  // memory cgroup limit, not host exhaustion

  // kMce
  bool mce_exception = false;  // "Machine Check Exception" (uncorrected, usually fatal)
  uint64_t mce_events_logged = 0;

  // kNetLink
  uint64_t link_down = 0, link_up = 0, tx_timeouts = 0;

  // kCpuThermal
  std::optional<int64_t> max_total_events;  // largest "(total events = N)"

  // kDriverInitFailed / kGspTimeout
  std::string error_code;  // "0x26:0x56:1474", "GSP_RM_CONTROL"

  // kDriverMismatch: the user-space client's and the loaded kernel module's versions ("" when the
  // line was cut before it); the client's name[pid] when the driver named it goes to processes.
  std::string client_version, module_version;
};

// GPU identity from the driver's companion lines: "NVRM: GPU at PCI:0000:3b:00: GPU-<uuid>" and
// "NVRM: GPU Board Serial Number: <sn>".
struct LogGpuIdentity {
  PciAddress pci;
  std::string uuid;
  std::string serial;
};

struct KernelLogFacts {
  std::string source;                // "kmsg", "journal", "file:/var/log/kern.log", "stdin"
  std::vector<KernelEvent> events;   // first-seen order
  std::vector<LogGpuIdentity> gpus;  // bounded
  uint64_t bytes_scanned = 0;
  uint64_t records_read = 0;        // kmsg records / journal entries (0 for files)
  uint64_t lines_examined = 0;      // lines that carried an event keyword and were parsed
  uint64_t garbled_lines = 0;       // such lines with bad numbers or shapes (skipped)
  uint64_t repaired_lines = 0;      // lines whose invalid UTF-8 / control bytes became '?' (kept)
  uint64_t truncated_lines = 0;     // over-long lines (skipped)
  uint64_t non_kernel_lines = 0;    // syslog/journal lines from user space that looked alike
  uint64_t before_since_lines = 0;  // dropped by --since
  uint64_t since_unapplied_lines = 0;  // kept although --since was given: no wall-clock time
  uint64_t dropped_events = 0;         // lines whose key did not fit in the bounded event table
  uint64_t kmsg_overruns = 0;          // EPIPE: ring overwritten while reading
  uint64_t kmsg_records_lost = 0;      // sequence-number gaps
  int boots_seen = 0;                  // boot markers ("Linux version", "-- Boot") in the input
  // "NVRM: loading NVIDIA UNIX ... Kernel Module <version>" lines (of the current boot, when
  // current_boot_only): the driver was loaded, at boot or reloaded later (`rmmod`/`modprobe`,
  // the usual GPU reset path). GPU driver events logged before the last load are history.
  uint64_t driver_loads = 0;
  LogTime last_driver_load;
  std::string last_driver_load_version;  // "570.148.06"; "" when the line had none
  bool current_boot_only = false;        // older boots were discarded
  bool stopped_at_deadline = false;      // reading stopped early (partial facts)
};

}  // namespace gpudoctor
