// Kernel-log rules: Xid, lost GPUs, PCIe AER, hung tasks, OOM kills, machine checks, NIC links,
// CPU thermal throttling, NVIDIA driver init failures and GSP timeouts. Facts come from
// KernelLogFacts; severities of Xids from the Xid table (src/rules/xid_table.cc).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <map>
#include <optional>

#include "core/strings.h"
#include "core/time_spec.h"
#include "facts/gpu_codes.h"
#include "facts/pci_bus_id.h"
#include "rules/catalogue.h"
#include "rules/engine.h"
#include "rules/gpu_map.h"
#include "rules/lost_gpu_match.h"
#include "rules/xid_action.h"
#include "rules/xid_table.h"

namespace gpudoctor {
namespace {

// "3,10,8": the event's small ids (links, MIG instances, CPUs) in the order first seen.
std::string JoinIds(const std::vector<int64_t>& ids) {
  std::string out;
  for (int64_t id : ids) out += (out.empty() ? "" : ",") + std::to_string(id);
  return out;
}

// The GPU table used to name GPUs in findings: NVML devices first (index, uuid, serial), then
// what the log's own companion lines add ("GPU at PCI:...: GPU-uuid", board serials).
std::vector<GpuBusEntry> KernelGpuTable(const Snapshot& snap) {
  std::vector<GpuBusEntry> nvml;
  for (const auto& g : snap.gpu.gpus) {
    auto pci = ParsePciBusId(g.pci_bus_id);
    if (!pci) continue;
    nvml.push_back({g.index, g.uuid, *pci, g.serial});
  }
  return MergeGpuTables(std::move(nvml), GpusFromLog(snap.kernel));
}

// NVML already reported this GPU as lost (GPU_IS_LOST): the GPU rules own that finding.
bool NvmlSawLost(const Snapshot& snap, const PciTuple& pci) {
  for (const auto& g : snap.gpu.gpus) {
    auto a = ParsePciBusId(g.pci_bus_id);
    if (g.lost && a && a->SameDevice(pci)) return true;
  }
  return false;
}

std::string FormatLogTime(const LogTime& t) {
  if (t.wall_us) return FormatUtc(*t.wall_us / 1000000);
  if (t.boot_us) return "boot+" + FormatDouble(static_cast<double>(*t.boot_us) / 1e6, 3) + "s";
  return "";
}

void AddCommon(Finding& f, const KernelEvent& e) {
  f.Add("count", e.count);
  if (std::string s = FormatLogTime(e.first); !s.empty()) f.Add("first_seen", s);
  if (std::string s = FormatLogTime(e.last); !s.empty()) f.Add("last_seen", s);
  if (e.first.boot_us) f.Add("first_seen_boot_s", static_cast<double>(*e.first.boot_us) / 1e6);
  f.Add("sample_line", e.sample);
  f.subject = e.subject;
}

void AttachGpu(Finding& f, const std::optional<PciTuple>& pci,
               const std::vector<GpuBusEntry>& gpus) {
  if (!pci) return;
  GpuRef ref;
  ref.pci_bus_id = pci->ToString();
  if (const GpuBusEntry* g = MapBusToGpu(*pci, gpus)) {
    ref.index = g->index;
    ref.uuid = g->uuid;
    ref.serial = g->serial;
  }
  f.gpu = ref;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

Severity StepUp(Severity s) { return s == Severity::kInfo ? Severity::kWarn : Severity::kCrit; }

Severity FromXidSeverity(XidSeverity s) {
  switch (s) {
    case XidSeverity::kInfo:
      return Severity::kInfo;
    case XidSeverity::kWarn:
      return Severity::kWarn;
    default:
      return Severity::kCrit;
  }
}

// Next steps for one Xid: its own action first, then the catalogue's general steps, with the
// labelled ones only when they apply (several processes, a memory Xid).
std::vector<std::string> XidNextSteps(int64_t xid, const XidInfo& info, bool escalated) {
  Finding steps_of = MakeFinding("gpu.xid", Severity::kInfo, "");
  bool memory = info.xid_class == XidClass::kHardwareMemory;
  // An empty label matches no step: the case does not apply.
  KeepStepsFor(steps_of, {escalated ? "several processes" : "", memory ? "memory Xid" : ""});
  std::vector<std::string> steps = {"Xid " + std::to_string(xid) + ": " + std::string(info.action) +
                                    "."};
  steps.insert(steps.end(), steps_of.next_steps.begin(), steps_of.next_steps.end());
  return steps;
}

// The severity that goes with an action: an Xid that takes the node out (reset, reboot, drain)
// is crit; one that only needs the application restarted, or watching, is at most warn whatever
// the table says (a contained Xid 94 with RST: No); none is info.
Severity SeverityForAction(Action a, Severity table) {
  if (NeedsNodeOutOfService(a)) return Severity::kCrit;
  if (a == Action::kNone) return Severity::kInfo;
  return std::min(table, Severity::kWarn);
}

void XidFinding(const KernelEvent& e, const Thresholds& t, const std::vector<GpuBusEntry>& gpus,
                std::vector<Finding>& out) {
  const char* id = "gpu.xid";
  XidInfo info = LookupXid(e.xid);
  XidDecision decision = DecideXidAction(e);
  Severity sev = SeverityForAction(decision.action, FromXidSeverity(info.severity));
  double distinct = t.Get(id, "escalate_distinct_processes");
  bool escalated = distinct > 0 && static_cast<double>(e.processes.size()) >= distinct;
  // Several processes hitting one Xid raise its severity one step, but an Xid whose action
  // keeps the node in service stays below crit: severity and action must agree.
  if (escalated) {
    sev = StepUp(sev);
    if (!NeedsNodeOutOfService(decision.action)) sev = std::min(sev, Severity::kWarn);
  }
  std::string summary = "Xid " + std::to_string(e.xid);
  if (!info.mnemonic.empty()) summary += " (" + std::string(info.meaning) + ")";
  summary += " on GPU " + e.subject;
  if (e.count > 1) summary += ", " + std::to_string(e.count) + " times";
  Finding f = MakeFinding(id, sev, summary);
  f.action = decision.action;
  f.Add("xid", e.xid);
  f.Add("xid_class", XidClassName(info.xid_class));
  f.Add("xid_table_severity", XidSeverityName(info.severity));
  f.AddBool("xid_known", info.known);
  f.Add("action_reason", decision.reason);
  if (!e.recovery_actions.empty()) f.Add("recovery_action", Join(e.recovery_actions));
  AddCommon(f, e);
  if (!e.processes.empty()) {
    f.Add("processes", Join(e.processes));
    f.Add("distinct_processes", static_cast<int64_t>(e.processes.size()));
  }
  if (e.xid == 94 || e.xid == 95) {
    f.AddBool("reset_required", e.reset_required);
    f.AddBool("drain_reset_required", e.drain_reset_required);
  }
  if (!e.nvlink_unit.empty()) {
    f.Add("nvlink_unit", e.nvlink_unit);
    f.AddBool("nvlink_fatal", e.nvlink_fatal);
  }
  if (!e.ids.empty() && e.xid >= 144 && e.xid <= 150) {
    f.Add("nvlink_links", JoinIds(e.ids));
  } else if (!e.ids.empty()) {
    f.Add("mig_gpu_instances", JoinIds(e.ids));
  }
  f.next_steps = XidNextSteps(e.xid, info, escalated);
  AttachGpu(f, e.pci, gpus);
  out.push_back(std::move(f));
}

// An Xid 154 ("GPU recovery action changed ... to ...") anywhere in the log.
bool HasXid154(const KernelLogFacts& k) {
  return std::any_of(k.events.begin(), k.events.end(), [](const KernelEvent& e) {
    return e.kind == KernelEventKind::kXid && e.xid == 154;
  });
}

void LostFindings(const Snapshot& snap, const std::vector<GpuBusEntry>& gpus,
                  std::vector<Finding>& out) {
  const KernelLogFacts& k = snap.kernel;
  std::vector<const KernelEvent*> seen;
  std::vector<LostGpuPair> pairs = PairBuslessLostGpus(snap);
  for (const auto& e : k.events) {
    bool lost =
        e.kind == KernelEventKind::kGpuLost || (e.kind == KernelEventKind::kXid && e.xid == 79);
    if (!lost || !e.pci || NvmlSawLost(snap, *e.pci)) continue;
    auto dup = std::find_if(seen.begin(), seen.end(),
                            [&](const KernelEvent* s) { return s->pci->SameDevice(*e.pci); });
    if (dup != seen.end()) continue;
    seen.push_back(&e);
    // NVML lost this GPU at the handle lookup (no bus id): one finding with both views.
    const LostGpuPair* pair = nullptr;
    for (const auto& p : pairs) {
      if (p.slot.SameDevice(*e.pci)) pair = &p;
    }
    std::string who =
        pair ? "GPU " + std::to_string(pair->nvml_index) + " (" + e.pci->ToString() + ")"
             : "GPU " + e.pci->ToString();
    Finding f = MakeFinding("gpu.lost", Severity::kCrit, who + " has fallen off the bus");
    AddCommon(f, e);
    f.Add("source", e.kind == KernelEventKind::kXid ? "xid 79" : "fallen-off-the-bus line");
    AttachGpu(f, e.pci, gpus);
    if (pair) {
      f.gpu->index = pair->nvml_index;
      f.Add("gpu_index", pair->nvml_index).Add("nvml_return", "NVML_ERROR_GPU_IS_LOST");
    }
    out.push_back(std::move(f));
  }
  // A GPU lost with no bus id in the log (the driver's NV_ERR_GPU_IS_LOST status assertions,
  // no Xid 79 line): one finding, unless a lost GPU is already named, by the log or by NVML.
  bool nvml_lost = false;
  for (const auto& g : snap.gpu.gpus) nvml_lost = nvml_lost || g.lost;
  if (!seen.empty() || nvml_lost || !pairs.empty()) return;
  for (const auto& e : k.events) {
    if (e.kind != KernelEventKind::kGpuLost || e.pci) continue;
    const std::string who = StartsWith(e.subject, "GPU")
                                ? e.subject + " (the driver's numbering, not nvidia-smi's index)"
                                : std::string("a GPU the log does not name");
    Finding f = MakeFinding("gpu.lost", Severity::kCrit,
                            who + " has fallen off the bus (" + e.error_code + ")");
    AddCommon(f, e);
    f.Add("source", e.error_code + " assertion");
    out.push_back(std::move(f));
    return;
  }
}

void AerFinding(const KernelEvent& e, const Thresholds& t, const std::vector<GpuBusEntry>& gpus,
                std::vector<Finding>& out) {
  const char* id = "pcie.aer";
  Severity sev = Severity::kInfo;
  if (e.aer_severity == AerSeverity::kFatal) {
    sev = Severity::kCrit;
  } else if (e.aer_severity == AerSeverity::kNonFatal) {
    sev = Severity::kWarn;
  } else if (static_cast<double>(e.count) >= t.Get(id, "warn_corrected_count")) {
    sev = Severity::kWarn;
  }
  bool nvidia = e.vendor_id && *e.vendor_id == 0x10de;
  const GpuBusEntry* gpu = e.pci ? MapBusToGpu(*e.pci, gpus) : nullptr;
  std::string what = nvidia || gpu ? "NVIDIA device " : "device ";
  Finding f = MakeFinding(id, sev,
                          std::to_string(e.count) + " " + AerSeverityName(e.aer_severity) +
                              " PCIe error(s) on " + what + e.subject);
  AddCommon(f, e);
  f.Add("aer_severity", AerSeverityName(e.aer_severity));
  if (!e.aer_type.empty()) f.Add("aer_type", e.aer_type);
  if (!e.error_names.empty()) f.Add("error_bits", Join(e.error_names));
  if (e.vendor_id && e.device_id) {
    char ids[16];
    std::snprintf(ids, sizeof ids, "%04x:%04x", *e.vendor_id, *e.device_id);
    f.Add("pci_id", ids);
  }
  if (nvidia || gpu) AttachGpu(f, e.pci, gpus);
  out.push_back(std::move(f));
}

void SimpleFindings(const KernelEvent& e, const Thresholds& t, const std::vector<GpuBusEntry>& gpus,
                    std::vector<Finding>& out) {
  switch (e.kind) {
    case KernelEventKind::kHungTask: {
      const char* id = "kernel.hung_task";
      bool crit = e.nvidia_related || static_cast<double>(e.count) >= t.Get(id, "crit_reports");
      Finding f = MakeFinding(id, crit ? Severity::kCrit : Severity::kWarn,
                              "task " + e.subject + " blocked for more than " +
                                  std::to_string(e.max_blocked_s.value_or(0)) + " s" +
                                  (e.nvidia_related ? " (NVIDIA driver involved)" : ""));
      AddCommon(f, e);
      if (e.max_blocked_s) f.Add("max_blocked_s", *e.max_blocked_s);
      f.AddBool("nvidia_related", e.nvidia_related);
      if (!e.processes.empty()) f.Add("tasks", Join(e.processes));
      out.push_back(std::move(f));
      return;
    }
    case KernelEventKind::kCpuStall: {
      // A CPU stuck in the NVIDIA driver or a hard lockup: the node does not recover by itself.
      // Another task's soft lockup or an RCU stall: a CPU held for seconds (storage, a slow
      // allocation, a noisy hypervisor), which the job feels as a stall; watched unless it repeats
      // (crit_reports).
      const char* id = "kernel.cpu_stall";
      const bool hard = e.subject == "hard lockup";
      const bool crit =
          hard || e.nvidia_related || static_cast<double>(e.count) >= t.Get(id, "crit_reports");
      std::string what = e.subject;
      if (e.max_blocked_s) what += ", stuck for " + std::to_string(*e.max_blocked_s) + " s";
      if (!e.processes.empty()) what += " in " + Join(e.processes);
      if (!e.ids.empty()) what += " on CPU " + JoinIds(e.ids);
      Finding f = MakeFinding(id, crit ? Severity::kCrit : Severity::kWarn,
                              "kernel reported a stuck CPU: " + what +
                                  (e.nvidia_related ? " (NVIDIA driver involved)" : "") +
                                  (e.count > 1 ? ", " + std::to_string(e.count) + " reports" : ""));
      if (!crit) f.action = Action::kWatch;
      AddCommon(f, e);
      if (e.max_blocked_s) f.Add("max_stuck_s", *e.max_blocked_s);
      f.AddBool("nvidia_related", e.nvidia_related);
      f.Add("stall", e.subject);
      if (!e.processes.empty()) f.Add("tasks", Join(e.processes));
      out.push_back(std::move(f));
      return;
    }
    case KernelEventKind::kNvswitchSxid: {
      // Fatal: the driver marks the switch or port reset-required, and only a reset of the
      // fabric (a node reboot, or SBR of every NVSwitch and GPU) clears it. Non-fatal: NVLink
      // keeps working (DCGM: monitor); 11004, 12028 and 19084 stall NVLink traffic (jobs see Xid
      // 45), so they are warned about.
      const char* id = "nvswitch.sxid";
      const bool stalls = e.xid == 11004 || e.xid == 12028 || e.xid == 19084;
      Severity sev =
          e.nvlink_fatal ? Severity::kCrit : (stalls ? Severity::kWarn : Severity::kInfo);
      std::string what = "NVSwitch " + e.subject + " SXid " + std::to_string(e.xid) +
                         (e.nvlink_fatal ? " (fatal)" : " (non-fatal)");
      if (!e.error_names.empty()) what += ": " + e.error_names.front();
      if (!e.ids.empty()) what += ", link " + JoinIds(e.ids);
      if (e.count > 1) what += ", " + std::to_string(e.count) + " times";
      Finding f = MakeFinding(id, sev, what);
      if (!e.nvlink_fatal) f.action = Action::kWatch;
      AddCommon(f, e);
      f.Add("sxid", static_cast<int64_t>(e.xid));
      f.AddBool("fatal", e.nvlink_fatal);
      f.Add("nvswitch_pci_bus_id", e.subject);
      out.push_back(std::move(f));
      return;
    }
    case KernelEventKind::kOom: {
      const char* id = "host.oom";
      bool many = static_cast<double>(e.count) >= t.Get(id, "crit_kills");
      Severity sev = e.cgroup_oom ? (many ? Severity::kWarn : Severity::kInfo)
                                  : (many ? Severity::kCrit : Severity::kWarn);
      Finding f =
          MakeFinding(id, sev,
                      std::string(e.cgroup_oom ? "memory cgroup" : "host") + " OOM killer killed " +
                          e.subject + " " + std::to_string(e.count) + " time(s)");
      AddCommon(f, e);
      f.AddBool("cgroup_oom", e.cgroup_oom);
      if (e.max_anon_rss_kb) f.Add("max_anon_rss_bytes", *e.max_anon_rss_kb * 1024);
      if (!e.processes.empty()) f.Add("victims", Join(e.processes));
      out.push_back(std::move(f));
      return;
    }
    case KernelEventKind::kMce: {
      const char* id = "hardware.mce";
      bool crit = e.mce_exception || static_cast<double>(e.count) >= t.Get(id, "crit_events");
      Finding f = MakeFinding(id, crit ? Severity::kCrit : Severity::kWarn,
                              std::to_string(e.count) + " hardware error record(s) (" + e.subject +
                                  ")" + (e.mce_exception ? ", uncorrected" : ""));
      AddCommon(f, e);
      f.AddBool("uncorrected", e.mce_exception);
      if (e.mce_events_logged) f.Add("events_logged_lines", e.mce_events_logged);
      out.push_back(std::move(f));
      return;
    }
    case KernelEventKind::kNetLink: {
      const char* id = "net.link";
      // Links coming up (every boot, every cable plugged in) are not a problem by themselves.
      if (e.link_down == 0 && e.tx_timeouts == 0) return;
      double downs = static_cast<double>(e.link_down);
      double tx = static_cast<double>(e.tx_timeouts);
      Severity sev = Severity::kInfo;
      if (downs >= t.Get(id, "crit_down_events") || tx >= t.Get(id, "crit_tx_timeouts")) {
        sev = Severity::kCrit;
      } else if (downs >= t.Get(id, "warn_down_events") || tx >= 1) {
        sev = Severity::kWarn;
      }
      std::string summary = "interface " + e.subject + ": " + std::to_string(e.link_down) +
                            " link down, " + std::to_string(e.link_up) + " link up";
      if (e.tx_timeouts) summary += ", " + std::to_string(e.tx_timeouts) + " transmit timeouts";
      Finding f = MakeFinding(id, sev, summary + " (kernel log)");
      // A few flaps below the critical count are watched, not a reason to take the node out
      // (the catalogue's inspect_hardware is for a link that keeps failing).
      if (sev != Severity::kCrit) f.action = Action::kWatch;
      AddCommon(f, e);
      f.Add("link_down_events", e.link_down);
      f.Add("link_up_events", e.link_up);
      f.Add("tx_timeouts", e.tx_timeouts);
      f.Add("source", "kernel log");
      out.push_back(std::move(f));
      return;
    }
    case KernelEventKind::kCpuThermal: {
      const char* id = "host.thermal";
      if (static_cast<double>(e.count) < t.Get(id, "warn_events")) return;
      Finding f = MakeFinding(id, Severity::kWarn,
                              "CPU " + e.subject + " temperature above threshold on " +
                                  std::to_string(e.ids.size()) + " CPU(s), clock throttled");
      AddCommon(f, e);
      f.Add("cpus", static_cast<int64_t>(e.ids.size()));
      if (e.max_total_events) f.Add("max_total_events", *e.max_total_events);
      out.push_back(std::move(f));
      return;
    }
    case KernelEventKind::kDriverInitFailed:
    case KernelEventKind::kGspTimeout: {
      bool init = e.kind == KernelEventKind::kDriverInitFailed;
      // Without a bus id the subject is the driver's own instance name ("GPU6"), which is not
      // nvidia-smi's index: say so rather than print "GPU GPU6".
      std::string gpu = e.pci || !StartsWith(e.subject, "GPU")
                            ? "GPU " + e.subject
                            : e.subject + " (the driver's numbering, not nvidia-smi's index)";
      Finding f = MakeFinding(
          init ? "driver.init_failed" : "driver.gsp_timeout", Severity::kCrit,
          std::string(init ? "NVIDIA driver could not initialise " : "GSP firmware timeout on ") +
              gpu + (e.error_code.empty() ? "" : " (" + e.error_code + ")"));
      AddCommon(f, e);
      if (!e.error_code.empty()) {
        // A GSP timeout's code is the RPC it waited for, or the CrashCat report's reason.
        const char* key = init                               ? "rm_error"
                          : StartsWith(e.error_code, "GSP ") ? "gsp_report"
                                                             : "rpc_function";
        f.Add(key, e.error_code);
      }
      AttachGpu(f, e.pci, gpus);
      out.push_back(std::move(f));
      return;
    }
    case KernelEventKind::kDriverMismatch: {
      std::string what = "driver library and kernel module versions differ";
      if (!e.client_version.empty() || !e.module_version.empty()) {
        what += " (client " + (e.client_version.empty() ? "?" : e.client_version) +
                ", kernel module " + (e.module_version.empty() ? "?" : e.module_version) + ")";
      }
      Finding f = MakeFinding("driver.mismatch", Severity::kCrit, what + " (kernel log)");
      AddCommon(f, e);
      if (!e.client_version.empty()) f.Add("client_version", e.client_version);
      if (!e.module_version.empty()) f.Add("kernel_module_version", e.module_version);
      if (!e.processes.empty()) f.Add("clients", Join(e.processes));
      f.Add("source", "kernel log");
      out.push_back(std::move(f));
      return;
    }
    case KernelEventKind::kResetRequired: {
      std::string gpu = e.pci || !StartsWith(e.subject, "GPU")
                            ? "GPU " + e.subject
                            : e.subject + " (the driver's numbering, not nvidia-smi's index)";
      if (e.subject == "unknown-gpu") gpu = "a GPU the log does not name";
      Finding f =
          MakeFinding("gpu.reset_required", Severity::kCrit,
                      "the NVIDIA driver says " + gpu + " must be reset (NV_ERR_RESET_REQUIRED)");
      AddCommon(f, e);
      AttachGpu(f, e.pci, gpus);
      out.push_back(std::move(f));
      return;
    }
    default:
      return;
  }
}

// Xids that NVML's event API delivered during the check but the kernel log did not show (no
// access to /dev/kmsg in a container, a rotated journal): still one gpu.xid per GPU and code.
// NVML events are registered at the start of the check, so they happened during it. A log line
// with a wall-clock time well before the check (journal, dmesg -T sources) is another, older
// occurrence; a line without wall time (raw printk clock) may be this one.
bool RecentEnoughForNvmlEvent(const KernelEvent& e, const Snapshot& snap) {
  if (!e.last.wall_us || snap.time.time_since_epoch().count() == 0) return true;
  int64_t check_us =
      std::chrono::duration_cast<std::chrono::microseconds>(snap.time.time_since_epoch()).count();
  constexpr int64_t kSlackUs = 120'000'000;  // clock skew and the check's own duration
  return *e.last.wall_us >= check_us - kSlackUs;
}

void NvmlXidFindings(const Snapshot& snap, const std::vector<GpuBusEntry>& gpus,
                     std::vector<Finding>& out) {
  std::map<std::pair<int, uint64_t>, int64_t> counts;  // (gpu index or -1, xid) -> events
  for (const auto& ev : snap.gpu.nvml_xid_events) counts[{ev.gpu_index.value_or(-1), ev.xid}]++;
  for (const auto& [key, count] : counts) {
    const auto& [index, xid] = key;
    const GpuFacts* gpu = nullptr;
    for (const auto& g : snap.gpu.gpus) {
      if (g.index == index) gpu = &g;
    }
    auto pci = gpu ? ParsePciBusId(gpu->pci_bus_id) : std::nullopt;
    bool in_log = false;
    for (const auto& e : snap.kernel.events) {
      if (e.kind != KernelEventKind::kXid || static_cast<uint64_t>(e.xid) != xid) continue;
      if (!RecentEnoughForNvmlEvent(e, snap)) continue;  // an old line cannot be this event
      // Limitation: an event on a device handle we did not enumerate (index -1) carries no bus
      // id (nvmlEventData_t has none), so it matches any recent log Xid with the same code.
      if (index < 0 || (e.pci && pci && e.pci->SameDevice(*pci))) in_log = true;
    }
    if (in_log) continue;
    XidInfo info = LookupXid(static_cast<int>(std::min<uint64_t>(xid, 1u << 30)));
    std::string where = index >= 0 ? "GPU " + std::to_string(index) : "an unlisted GPU";
    Finding f =
        MakeFinding("gpu.xid", SeverityForAction(info.resolution, FromXidSeverity(info.severity)),
                    "Xid " + std::to_string(xid) +
                        (info.mnemonic.empty() ? "" : " (" + std::string(info.meaning) + ")") +
                        " on " + where + " (NVML event)");
    // An NVML event carries only the code: the catalog's action, no line detail to refine it.
    f.action = info.resolution;
    f.Add("xid", static_cast<int64_t>(std::min<uint64_t>(xid, INT64_MAX)));
    f.Add("xid_class", XidClassName(info.xid_class));
    f.Add("xid_table_severity", XidSeverityName(info.severity));
    f.AddBool("xid_known", info.known);
    f.Add("action_reason", info.bucket.empty()
                               ? std::string("code not in the catalog table")
                               : "NVIDIA Xid catalog bucket " + std::string(info.bucket));
    f.Add("count", count);
    f.Add("source", "nvml events");
    f.next_steps =
        XidNextSteps(static_cast<int64_t>(std::min<uint64_t>(xid, INT64_MAX)), info, false);
    f.subject = pci ? pci->ToString() : where;
    AttachGpu(f, pci, gpus);
    if (f.gpu && gpu) f.gpu->name = gpu->name;
    out.push_back(std::move(f));
  }
}

// The scan did not cover what the user asked for: a saved log cut at the deadline, or --since
// that could not be applied to lines without a wall-clock time.
void LogCoverageFindings(const KernelLogFacts& k, std::vector<Finding>& out) {
  const bool saved = StartsWith(k.source, "file:") || k.source == "stdin";
  if (k.stopped_at_deadline && saved) {
    Finding f = MakeFinding(
        "gpudoctor.kmsg.partial", Severity::kWarn,
        "Kernel log " + Sanitize(k.source, 120) + " was cut at the deadline after " +
            std::to_string(k.bytes_scanned) + " bytes: findings cover only the part read");
    f.Add("bytes_scanned", k.bytes_scanned);
    f.Add("source", Sanitize(k.source, 200));
    f.subject = Sanitize(k.source, 200);
    out.push_back(std::move(f));
  }
  if (k.since_unapplied_lines > 0) {
    Finding f = MakeFinding(
        "gpudoctor.kmsg.since_unapplied", Severity::kInfo,
        "--since could not filter " + std::to_string(k.since_unapplied_lines) +
            " kernel log line(s) without a wall-clock time: they were kept, whatever their age");
    f.Add("since_unapplied_lines", k.since_unapplied_lines);
    f.Add("before_since_lines", k.before_since_lines);
    f.subject = Sanitize(k.source, 200);
    out.push_back(std::move(f));
  }
}

// GPU driver events that a reload of the NVIDIA module resets (the GPU reset path).
bool ResetByDriverLoad(KernelEventKind kind) {
  return kind == KernelEventKind::kXid || kind == KernelEventKind::kGpuLost ||
         kind == KernelEventKind::kGspTimeout || kind == KernelEventKind::kDriverInitFailed ||
         kind == KernelEventKind::kDriverMismatch || kind == KernelEventKind::kResetRequired;
}

// The module prints its "loading" banner at the end of its init, after probing the GPUs: what
// the probe logs ("fallen off the bus", "probe routine failed") comes just before the banner and
// belongs to the new load (tests/fixtures/real-logs/fallen_off_three_line.log: 0.13 s apart).
// Only events that ended this long before the banner are history.
constexpr int64_t kDriverLoadMarginUs = 30 * 1000000LL;

// `a` more than the margin before `b` on a clock both have (boot-relative first); false when
// unknown.
bool LogTimeBefore(const LogTime& a, const LogTime& b) {
  if (a.boot_us && b.boot_us) return *a.boot_us + kDriverLoadMarginUs < *b.boot_us;
  if (a.wall_us && b.wall_us) return *a.wall_us + kDriverLoadMarginUs < *b.wall_us;
  return false;
}

// The events of `k` that the last driver load made history: every line of them came well before.
std::vector<const KernelEvent*> EventsBeforeDriverLoad(const KernelLogFacts& k) {
  std::vector<const KernelEvent*> out;
  if (k.driver_loads == 0 || k.last_driver_load.empty()) return out;
  for (const auto& e : k.events) {
    if (ResetByDriverLoad(e.kind) && LogTimeBefore(e.last, k.last_driver_load)) out.push_back(&e);
  }
  return out;
}

void DriverReloadedFinding(const KernelLogFacts& k, const std::vector<const KernelEvent*>& history,
                           std::vector<Finding>& out) {
  std::string what;
  uint64_t lines = 0;
  for (size_t i = 0; i < history.size(); ++i) {
    const KernelEvent& e = *history[i];
    lines += e.count;
    if (i >= 5) continue;
    std::string name = e.kind == KernelEventKind::kXid ? "Xid " + std::to_string(e.xid)
                                                       : KernelEventKindName(e.kind);
    what += (what.empty() ? "" : ", ") + name + (e.subject.empty() ? "" : " on " + e.subject);
  }
  if (history.size() > 5) what += ", ...";
  std::string version = k.last_driver_load_version.empty()
                            ? std::string()
                            : " (" + Sanitize(k.last_driver_load_version, 40) + ")";
  Finding f = MakeFinding("driver.reloaded", Severity::kInfo,
                          "the NVIDIA driver" + version + " was loaded again at " +
                              FormatLogTime(k.last_driver_load) + ", after " +
                              std::to_string(lines) + " GPU driver event line(s) (" + what +
                              "): those are history, the GPUs were reset");
  f.Add("reloaded_at", FormatLogTime(k.last_driver_load));
  if (k.last_driver_load.boot_us) {
    f.Add("reloaded_at_boot_s", static_cast<double>(*k.last_driver_load.boot_us) / 1e6);
  }
  f.Add("driver_version", Sanitize(k.last_driver_load_version, 40));
  f.Add("driver_loads", k.driver_loads);
  f.Add("earlier_events", static_cast<uint64_t>(history.size()));
  f.Add("earlier_lines", lines);
  out.push_back(std::move(f));
}

}  // namespace

void KernelRules(const Snapshot& snap_in, const Thresholds& t, std::vector<Finding>& out) {
  // Events before the last driver load are history: judged without them, named in one finding.
  std::vector<const KernelEvent*> history = EventsBeforeDriverLoad(snap_in.kernel);
  std::optional<Snapshot> pruned;
  if (!history.empty()) {
    DriverReloadedFinding(snap_in.kernel, history, out);
    pruned = snap_in;
    auto& ev = pruned->kernel.events;
    const KernelLogFacts& k = snap_in.kernel;
    ev.erase(std::remove_if(ev.begin(), ev.end(),
                            [&](const KernelEvent& e) {
                              return ResetByDriverLoad(e.kind) &&
                                     LogTimeBefore(e.last, k.last_driver_load);
                            }),
             ev.end());
  }
  const Snapshot& snap = pruned ? *pruned : snap_in;
  const KernelLogFacts& k = snap.kernel;
  std::vector<GpuBusEntry> gpus = KernelGpuTable(snap);
  NvmlXidFindings(snap, gpus, out);
  LogCoverageFindings(k, out);
  if (k.events.empty()) return;
  for (const auto& e : k.events) {
    if (e.kind == KernelEventKind::kDriverMismatch &&
        snap.gpu.nvml.init_return == gpu_codes::kLibRmVersionMismatch) {
      continue;  // NVML's LIB_RM_VERSION_MISMATCH already made driver.mismatch (gpu_rules.cc)
    } else if (e.kind == KernelEventKind::kXid) {
      XidFinding(e, t, gpus, out);
    } else if (e.kind == KernelEventKind::kPcieAer) {
      AerFinding(e, t, gpus, out);
    } else if (e.kind == KernelEventKind::kResetRequired && HasXid154(k)) {
      continue;  // Xid 154's recovery action already says what the GPU needs, and for which
    } else {
      SimpleFindings(e, t, gpus, out);
    }
  }
  LostFindings(snap, gpus, out);
}

}  // namespace gpudoctor
