// GPU and driver rules: NVML session state, PCI cross-check, per-GPU health (memory errors,
// thermals, clocks, PCIe, NVLink, fan), node-level load balance and version consistency.
// Missing facts never produce a fault finding; rates use the two reads of one check.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "core/strings.h"
#include "facts/gpu_codes.h"
#include "facts/inference_state.h"
#include "facts/pci_bus_id.h"
#include "rules/engine.h"
#include "rules/gpu_readings_rule.h"
#include "rules/lost_gpu_match.h"

namespace gpudoctor {
namespace {

namespace n = gpu_codes;

// Appends `item` to a separated list.
void Append(std::string& list, const std::string& item, const char* sep = ",") {
  if (!list.empty()) list += sep;
  list += item;
}

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Growth of a counter between the two reads; nullopt when either is missing or it went down
// (driver reload resets volatile counters).
std::optional<uint64_t> Delta(std::optional<uint64_t> a, std::optional<uint64_t> b) {
  if (!a || !b || *b < *a) return std::nullopt;
  return *b - *a;
}

bool Busy(const GpuFacts& g, double busy_pct) {
  return g.util_gpu_pct && *g.util_gpu_pct >= busy_pct;
}

bool HasReason(std::optional<uint64_t> mask, uint64_t bit) { return mask && (*mask & bit) != 0; }

// A fault reason counts when it is in the first read and (when taken) also in the second.
// A fault reason counts only when both reads show it: a failed confirming read is no evidence.
bool PersistentReason(const GpuFacts& g, uint64_t bit) {
  return HasReason(g.first.clock_event_reasons, bit) && g.second.clock_event_reasons &&
         HasReason(g.second.clock_event_reasons, bit);
}

// ---- NVML session and PCI cross-check ----

bool CardsOnBus(const GpuLayerFacts& gpu) { return gpu.pci_devices && !gpu.pci_devices->empty(); }

void AddPciEvidence(const GpuLayerFacts& gpu, Finding& f) {
  if (!gpu.pci_devices) return;
  f.Add("pci_nvidia_gpus", static_cast<int64_t>(gpu.pci_devices->size()));
  std::string ids;
  for (const auto& d : *gpu.pci_devices) Append(ids, d.bus_id, " ");
  if (!ids.empty()) f.Add("pci_bus_ids", ids);
}

void SessionRules(const GpuLayerFacts& gpu, std::vector<Finding>& out) {
  const NvmlStatus& st = gpu.nvml;
  const std::string& module = gpu.driver.kernel_module_version;
  switch (st.state) {
    case NvmlState::kNotRun:
    case NvmlState::kOk:
    case NvmlState::kInitUnfinished:  // the check's deadline, not the driver: no finding
      return;
    case NvmlState::kLibraryMissing:
      if (CardsOnBus(gpu)) {
        Finding f = MakeFinding("driver.not_loaded", Severity::kCrit,
                                std::to_string(gpu.pci_devices->size()) +
                                    " NVIDIA GPU(s) on the PCI bus but no NVIDIA driver library");
        AddPciEvidence(gpu, f);
        f.Add("error", st.error);
        if (!module.empty()) f.Add("kernel_module_version", module);
        out.push_back(std::move(f));
      } else {
        Finding f =
            MakeFinding("gpu.none", Severity::kInfo, "no NVIDIA GPU or driver found on this host");
        f.Add("error", st.error);
        AddPciEvidence(gpu, f);
        out.push_back(std::move(f));
      }
      return;
    case NvmlState::kSymbolMissing: {
      Finding f = MakeFinding("driver.nvml_init_failed", Severity::kCrit,
                              "the NVML library is unusable: " + st.error);
      f.Add("library_path", st.library_path);
      out.push_back(std::move(f));
      return;
    }
    case NvmlState::kInitHung: {
      Finding f = MakeFinding("driver.nvml_hang", Severity::kCrit,
                              "NVML initialisation did not return: " + st.error);
      for (const auto& h : gpu.hangs) {
        if (h.gpu_index) continue;
        f.Add("call", h.call).Add("waited_ms", static_cast<int64_t>(h.waited_ms));
        break;
      }
      AddPciEvidence(gpu, f);
      out.push_back(std::move(f));
      return;
    }
    case NvmlState::kInitFailed:
      break;
  }
  int code = st.init_return.value_or(-1);
  Finding f = [&] {
    if (code == n::kLibRmVersionMismatch) {
      std::string what = "driver library and kernel module versions differ";
      if (!st.library_version.empty() && !module.empty()) {
        what += " (library " + st.library_version + ", kernel module " + module + ")";
      }
      return MakeFinding("driver.mismatch", Severity::kCrit, what);
    }
    if (code == n::kNoPermission || code == n::kOperatingSystem) {
      return MakeFinding("driver.no_permission", Severity::kWarn,
                         "no permission to use the NVIDIA driver: " + st.error);
    }
    if (code == n::kDriverNotLoaded) {
      if (gpu.pci_devices && gpu.pci_devices->empty()) {
        return MakeFinding("gpu.none", Severity::kInfo,
                           "no NVIDIA GPU found (driver library installed, kernel module not "
                           "loaded)");
      }
      return MakeFinding("driver.not_loaded", CardsOnBus(gpu) ? Severity::kCrit : Severity::kWarn,
                         "the NVIDIA kernel module is not loaded");
    }
    return MakeFinding("driver.nvml_init_failed", Severity::kCrit, "NVML init failed: " + st.error);
  }();
  f.Add("nvml_return", static_cast<int64_t>(code)).Add("error", st.error);
  if (!st.library_path.empty()) f.Add("library_path", st.library_path);
  if (!st.library_version.empty()) f.Add("library_version", st.library_version);
  if (!module.empty()) f.Add("kernel_module_version", module);
  AddPciEvidence(gpu, f);
  out.push_back(std::move(f));
}

void HangRules(const GpuLayerFacts& gpu, std::vector<Finding>& out) {
  if (gpu.nvml.state != NvmlState::kOk) return;  // init hangs are reported by SessionRules
  for (const auto& h : gpu.hangs) {
    if (h.check_deadline) continue;  // cut short by the check's deadline: not a hang
    std::string who = h.gpu_index ? "GPU " + std::to_string(*h.gpu_index) : "the driver";
    Finding f = MakeFinding("driver.nvml_hang", Severity::kCrit,
                            h.call + " on " + who + " did not return; the call was abandoned");
    if (h.gpu_index) {
      GpuRef r;
      r.index = h.gpu_index;
      r.uuid = h.uuid;
      r.pci_bus_id = h.pci_bus_id;
      r.serial = h.serial;
      r.name = h.name;
      f.gpu = r;
    }
    f.subject = h.call;
    f.Add("call", h.call).Add("waited_ms", static_cast<int64_t>(h.waited_ms));
    if (h.gpu_index) f.Add("gpu_index", *h.gpu_index);
    if (!h.pci_bus_id.empty()) f.Add("pci_bus_id", h.pci_bus_id);
    if (!h.serial.empty()) f.Add("serial", h.serial);
    out.push_back(std::move(f));
  }
}

void MissingRules(const GpuLayerFacts& gpu, std::vector<Finding>& out) {
  if (gpu.nvml.state != NvmlState::kOk || !gpu.pci_devices) return;
  std::set<PciAddress> seen;
  int unknown = 0;
  for (const auto& g : gpu.gpus) {
    if (auto a = ParsePciBusId(g.pci_bus_id)) {
      seen.insert(*a);
    } else {
      ++unknown;
    }
  }
  std::vector<const PciGpuDevice*> unmatched;
  for (const auto& d : *gpu.pci_devices) {
    if (d.driver == "vfio-pci" || d.driver == "pci-stub") continue;  // passed to a VM on purpose
    auto a = ParsePciBusId(d.bus_id);
    if (!a) continue;
    a->function = 0;
    if (!seen.count(*a)) unmatched.push_back(&d);
  }
  if (static_cast<int>(unmatched.size()) <= unknown) return;  // may be the GPUs we could not read
  // Inside a GPU container /sys/bus/pci shows every card of the node while the toolkit exposes
  // only some in /proc/driver/nvidia/gpus: a card the driver's procfs does not list (while that
  // procfs exists) is hidden from this container, not missing.
  std::set<PciAddress> in_procfs;
  if (gpu.driver_proc_gpus) {
    for (const auto& id : *gpu.driver_proc_gpus) {
      if (auto a = ParsePciBusId(id)) {
        a->function = 0;
        in_procfs.insert(*a);
      }
    }
  }
  for (const PciGpuDevice* d : unmatched) {
    auto a = ParsePciBusId(d->bus_id);
    a->function = 0;
    if (gpu.driver_proc_gpus && !in_procfs.count(*a)) {
      Finding f = MakeFinding(
          "gpu.not_in_container", Severity::kInfo,
          "GPU at " + d->bus_id + " is on the PCI bus but not visible to NVML in this container");
      GpuRef r;
      r.pci_bus_id = d->bus_id;
      f.gpu = r;
      f.subject = d->bus_id;
      f.Add("pci_bus_id", d->bus_id).Add("pci_device_id", Hex(d->device_id));
      f.Add("nvml_gpus", static_cast<int64_t>(gpu.gpus.size()));
      f.Add("driver_procfs_gpus", static_cast<int64_t>(gpu.driver_proc_gpus->size()));
      out.push_back(std::move(f));
      continue;
    }
    Finding f = MakeFinding("gpu.missing", Severity::kCrit,
                            "GPU at " + d->bus_id + " is on the PCI bus but NVML does not list it");
    GpuRef r;
    r.pci_bus_id = d->bus_id;
    f.gpu = r;
    f.subject = d->bus_id;
    f.Add("pci_bus_id", d->bus_id).Add("pci_device_id", Hex(d->device_id));
    f.Add("bound_driver", d->driver.empty() ? std::string("(none)") : d->driver);
    f.Add("nvml_gpus", static_cast<int64_t>(gpu.gpus.size()));
    f.Add("pci_nvidia_gpus", static_cast<int64_t>(gpu.pci_devices->size()));
    if (unknown > 0) f.Add("nvml_gpus_without_bus_id", unknown);
    out.push_back(std::move(f));
  }
}

// Fewer NVIDIA GPUs than the node should have ([gpu] expected_count, else under check/watch the
// count the history last saw): counted on the PCI bus
// when sysfs was read (a card that fell off the bus after a reboot is not there at all), else in
// NVML.
void ExpectedCountRule(const GpuLayerFacts& gpu, const Thresholds& t, std::vector<Finding>& out) {
  double expected = t.Get("gpu.missing", "expected_count");
  if (expected <= 0) return;
  std::optional<int> seen;
  const char* where = "";
  if (gpu.pci_devices) {
    seen = static_cast<int>(gpu.pci_devices->size());
    where = "on the PCI bus";
  } else if (gpu.nvml.state == NvmlState::kOk) {
    seen = static_cast<int>(gpu.gpus.size());
    where = "in NVML";
  }
  if (!seen || *seen >= expected) return;
  int want = static_cast<int>(expected);
  Finding f = MakeFinding("gpu.missing", Severity::kCrit,
                          std::to_string(want - *seen) + " of " + std::to_string(want) +
                              " expected GPU(s) missing: " + std::to_string(*seen) + " " + where);
  f.subject = "expected_count";
  f.Add("expected_gpus", want).Add("gpus_seen", *seen).Add("counted", where);
  // check/watch: without [gpu] expected_count, the count the history last saw
  // (store/expected_gpus.h).
  bool from_history = t.Find("gpu.missing", "expected_count_from_history").value_or(0) > 0;
  f.Add("expected_from", from_history ? "history (GPUs last seen)" : "config [gpu] expected_count");
  if (gpu.pci_devices) {
    std::string buses;
    for (const auto& d : *gpu.pci_devices) Append(buses, d.bus_id);
    f.Add("pci_bus_ids_present", buses);
  }
  out.push_back(std::move(f));
}

// nvidia-smi slow, not hung: init or one GPU's calls took long but returned.
void SlowRule(const GpuLayerFacts& gpu, const Thresholds& t, std::vector<Finding>& out) {
  const char* id = "driver.nvml_slow";
  double init_limit = t.Get(id, "warn_init_ms");
  double gpu_limit = t.Get(id, "warn_gpu_sample_ms");
  bool slow_init = gpu.nvml.init_ms && *gpu.nvml.init_ms >= init_limit;
  std::string slow_gpus;
  double worst_ms = 0;
  for (const auto& g : gpu.gpus) {
    if (g.hung || g.unfinished || !g.sample_ms || *g.sample_ms < gpu_limit) continue;
    Append(slow_gpus, std::to_string(g.index));
    worst_ms = std::max(worst_ms, *g.sample_ms);
  }
  if (!slow_init && slow_gpus.empty()) return;
  std::string summary =
      slow_init ? "NVML initialisation took " + FormatDouble(*gpu.nvml.init_ms / 1000, 1) + " s"
                : "NVML calls on GPU " + slow_gpus + " took up to " +
                      FormatDouble(worst_ms / 1000, 1) + " s";
  int off = 0;
  for (const auto& g : gpu.gpus) off += g.persistence_on == false ? 1 : 0;
  if (off > 0) summary += " (persistence mode off on " + std::to_string(off) + " GPU(s))";
  Finding f = MakeFinding(id, Severity::kWarn, summary);
  if (gpu.nvml.init_ms) f.Add("init_ms", *gpu.nvml.init_ms);
  if (!slow_gpus.empty()) f.Add("slow_gpus", slow_gpus).Add("slowest_gpu_sample_ms", worst_ms);
  f.Add("persistence_off_gpus", off);
  out.push_back(std::move(f));
}

// Data-centre parts ship with ECC on; consumer and most workstation parts have none.
bool DataCentreGpu(const std::string& name) {
  for (const char* part : {"H100", "H200", "H800", "A100", "A800", "A30", "B100", "B200", "GB200",
                           "GH200", "V100", "P100", "Tesla"}) {
    if (name.find(part) != std::string::npos) return true;
  }
  return false;
}

void EccStateRules(const GpuFacts& g, const Thresholds& t, std::vector<Finding>& out) {
  if (g.ecc_enabled == false && DataCentreGpu(g.name)) {
    Finding f =
        GpuFinding("gpu.ecc.disabled", Severity::kWarn, g, "ECC is disabled on this " + g.name);
    f.AddBool("ecc_enabled", false).Add("model", g.name);
    out.push_back(std::move(f));
  }
  const char* id = "gpu.ecc.lifetime";
  const GpuCounterRead& c =
      g.second.ecc_sbe_aggregate || g.second.ecc_dbe_aggregate ? g.second : g.first;
  bool sbe = c.ecc_sbe_aggregate &&
             static_cast<double>(*c.ecc_sbe_aggregate) >= t.Get(id, "warn_sbe_aggregate");
  // Uncorrectable errors since this driver load are gpu.ecc.dbe's (crit); this one is history.
  auto vol_dbe = c.ecc_dbe_volatile ? c.ecc_dbe_volatile : g.first.ecc_dbe_volatile;
  bool dbe = c.ecc_dbe_aggregate && vol_dbe.value_or(0) == 0 &&
             static_cast<double>(*c.ecc_dbe_aggregate) >= t.Get(id, "warn_dbe_aggregate");
  if (!sbe && !dbe) return;
  std::string summary = "lifetime ECC errors:";
  if (c.ecc_sbe_aggregate) summary += " " + std::to_string(*c.ecc_sbe_aggregate) + " corrected";
  if (c.ecc_dbe_aggregate) summary += ", " + std::to_string(*c.ecc_dbe_aggregate) + " uncorrected";
  Finding f = GpuFinding(id, Severity::kWarn, g, summary);
  if (c.ecc_sbe_aggregate) f.Add("sbe_aggregate_count", *c.ecc_sbe_aggregate);
  if (c.ecc_dbe_aggregate) f.Add("dbe_aggregate_count", *c.ecc_dbe_aggregate);
  out.push_back(std::move(f));
}

// ---- per GPU ----

// NVML GPUs lost before NVML could tell their bus id (GPU_IS_LOST at the handle lookup), paired
// with the NVIDIA devices on the PCI bus that no NVML GPU names: when the counts agree, the
// unmatched addresses are the lost cards (NVML enumerates in PCI bus order). Index -> bus id.
std::map<int, std::string> BusIdsOfBuslessLostGpus(const GpuLayerFacts& gpu) {
  std::map<int, std::string> out;
  if (!gpu.pci_devices) return out;
  std::vector<int> busless;
  std::set<PciAddress> seen;
  for (const auto& g : gpu.gpus) {
    if (auto a = ParsePciBusId(g.pci_bus_id)) {
      seen.insert(*a);
    } else if (g.lost) {
      busless.push_back(g.index);
    } else {
      return out;  // another GPU without a bus id: the pairing would be a guess
    }
  }
  std::vector<std::string> unmatched;
  for (const auto& d : *gpu.pci_devices) {
    auto a = ParsePciBusId(d.bus_id);
    if (!a || d.driver == "vfio-pci" || d.driver == "pci-stub") continue;
    a->function = 0;
    if (!seen.count(*a)) unmatched.push_back(FormatPciBusId(*a));
  }
  if (busless.empty() || unmatched.size() != busless.size()) return out;
  std::sort(busless.begin(), busless.end());
  std::sort(unmatched.begin(), unmatched.end());
  for (size_t i = 0; i < busless.size(); ++i) out[busless[i]] = unmatched[i];
  return out;
}

void LostRule(const GpuFacts& g, const std::map<int, std::string>& inferred_bus,
              const KernelLogFacts& log, std::vector<Finding>& out) {
  if (!g.lost) return;
  Finding f = GpuFinding("gpu.lost", Severity::kCrit, g, "NVML reports the GPU is lost");
  f.Add("call", g.lost_call).Add("nvml_return", "NVML_ERROR_GPU_IS_LOST");
  if (auto it = inferred_bus.find(g.index); it != inferred_bus.end() && g.pci_bus_id.empty()) {
    f.gpu->pci_bus_id = it->second;
    f.summary = "GPU " + std::to_string(g.index) + " at " + it->second +
                " is lost: on the PCI bus, but NVML cannot reach it";
    f.Add("pci_bus_id", it->second).Add("pci_bus_id_source", "the PCI device NVML does not list");
    // The kernel log's identity lines may still know the card's serial.
    if (auto a = ParsePciBusId(it->second)) {
      for (const auto& id : log.gpus) {
        if (!id.pci.SameDevice(*a)) continue;
        if (!id.serial.empty()) {
          f.gpu->serial = id.serial;
          f.Add("serial", id.serial);
        }
        if (!id.uuid.empty() && f.gpu->uuid.empty()) f.gpu->uuid = id.uuid;
      }
    }
    f.subject = it->second;
  }
  out.push_back(std::move(f));
}

// NVML returns that are findings in their own right (nvml.md §4.1): the driver refuses the GPU
// or part of it. 15 (lost) is LostRule's; 3 and 13 are plain absence and never recorded.
struct RefusalKind {
  int code;
  const char* id;
  Severity severity;
  const char* what;
  const char* step;  // the code-specific next step, before the catalogue's
};
constexpr RefusalKind kRefusals[] = {
    {n::kInsufficientPower, "gpu.nvml_error", Severity::kCrit,
     "not enough power (INSUFFICIENT_POWER)",
     "Check the GPU's auxiliary power cables and the PSU/baseboard power feed; reseat the power "
     "connectors."},
    {n::kIrqIssue, "gpu.nvml_error", Severity::kCrit, "interrupt problem (IRQ_ISSUE)",
     "Check interrupt setup: `dmesg | grep -iE 'nvrm|irq|msi'`; interrupt remapping / IOMMU "
     "settings in the BIOS and kernel command line (intremap, iommu)."},
    {n::kCorruptedInforom, "gpu.nvml_error", Severity::kWarn,
     "InfoROM corrupted (CORRUPTED_INFOROM)",
     "The board's InfoROM is corrupted: run the vendor field diagnostic and open an RMA for the "
     "card (by serial)."},
    {n::kResetRequired, "gpu.nvml_error", Severity::kCrit, "GPU reset required (RESET_REQUIRED)",
     "Drain the GPU and reset it: `nvidia-smi -r -i N` (or reboot); if it recurs, replace the "
     "card."},
    {n::kLibRmVersionMismatch, "driver.mismatch", Severity::kCrit,
     "driver library and kernel module versions differ (LIB_RM_VERSION_MISMATCH)", nullptr},
    {n::kNoPermission, "driver.no_permission", Severity::kWarn, "no permission (NO_PERMISSION)",
     nullptr},
    {n::kOperatingSystem, "driver.no_permission", Severity::kWarn,
     "blocked by the operating system or a cgroup (OPERATING_SYSTEM)", nullptr},
};

bool IsHandleLookup(const std::string& call) { return call.rfind("nvmlDeviceGetHandleBy", 0) == 0; }

// One finding per refusal kind per GPU; a failed handle lookup (any code) means the driver
// refuses the whole GPU, which is never "ok".
void NvmlErrorRule(const GpuFacts& g, std::vector<Finding>& out) {
  if (g.lost) return;  // LostRule
  std::set<int> done;
  for (const auto& e : g.errors) {
    if (IsReadingFailure(e)) continue;  // ReadingsFailedRule (RESET_REQUIRED from a reading)
    const RefusalKind* kind = nullptr;
    for (const auto& k : kRefusals) {
      if (k.code == e.code) kind = &k;
    }
    bool whole_gpu = IsHandleLookup(e.call);
    if (kind == nullptr && !whole_gpu) continue;  // other call errors stay in the facts only
    if (!done.insert(e.code).second) continue;
    std::string id = kind ? kind->id : "gpu.nvml_error";
    Severity sev = kind ? kind->severity : Severity::kCrit;
    if (whole_gpu && id == "gpu.nvml_error") sev = Severity::kCrit;
    std::string what = kind ? kind->what : e.text;
    Finding f = GpuFinding(id, sev, g,
                           whole_gpu ? "the driver refuses the GPU: " + what
                                     : "NVML reports " + what + " from " + e.call);
    f.subject = "nvml_return_" + std::to_string(e.code);
    f.Add("call", e.call).Add("nvml_return", static_cast<int64_t>(e.code)).Add("error", e.text);
    if (kind && kind->step) f.next_steps.insert(f.next_steps.begin(), kind->step);
    out.push_back(std::move(f));
  }
}

void EccRules(const GpuFacts& g, const Thresholds& t, std::vector<Finding>& out) {
  const char* dbe = "gpu.ecc.dbe";
  auto dbe_growth = Delta(g.first.ecc_dbe_aggregate, g.second.ecc_dbe_aggregate);
  auto vol = g.second.ecc_dbe_volatile ? g.second.ecc_dbe_volatile : g.first.ecc_dbe_volatile;
  bool vol_hit = vol && static_cast<double>(*vol) >= t.Get(dbe, "crit_volatile_count");
  bool grew = dbe_growth && *dbe_growth > 0;
  if (vol_hit || grew) {
    Finding f = GpuFinding(
        dbe, Severity::kCrit, g,
        grew ? std::to_string(*dbe_growth) + " new uncorrectable ECC error(s) during the check"
             : std::to_string(*vol) + " uncorrectable ECC error(s) since the driver loaded");
    if (vol) f.Add("dbe_volatile_count", *vol);
    if (g.second.ecc_dbe_aggregate) f.Add("dbe_aggregate_count", *g.second.ecc_dbe_aggregate);
    if (dbe_growth) f.Add("dbe_new_count", *dbe_growth);
    out.push_back(std::move(f));
  }

  const char* sbe = "gpu.ecc.sbe_rate";
  if (!g.window_s || *g.window_s <= 0) return;
  auto growth = Delta(g.first.ecc_sbe_volatile, g.second.ecc_sbe_volatile);
  auto agg = Delta(g.first.ecc_sbe_aggregate, g.second.ecc_sbe_aggregate);
  if (!growth || (agg && *agg > *growth)) growth = agg;
  // The window is short: a single error in 0.25 s extrapolates to 240/min. Judge a rate only on
  // enough new errors.
  if (!growth || static_cast<double>(*growth) < t.Get(sbe, "min_new_count")) return;
  double per_min = static_cast<double>(*growth) / *g.window_s * 60;
  if (per_min < t.Get(sbe, "warn_per_min")) return;
  Finding f =
      GpuFinding(sbe, Severity::kWarn, g,
                 std::to_string(*growth) + " correctable ECC errors in " +
                     FormatDouble(*g.window_s, 2) + " s (" + FormatDouble(per_min) + "/min)");
  f.Add("sbe_new_count", *growth).Add("window_s", *g.window_s).Add("sbe_per_min", per_min);
  if (g.second.ecc_sbe_aggregate) f.Add("sbe_aggregate_count", *g.second.ecc_sbe_aggregate);
  out.push_back(std::move(f));
}

void RetiredPagesRule(const GpuFacts& g, const Thresholds& t, std::vector<Finding>& out) {
  const char* id = "gpu.retired_pages";
  if (!g.retired_pages_sbe && !g.retired_pages_dbe && !g.retired_pages_pending) return;
  uint64_t total = g.retired_pages_sbe.value_or(0) + g.retired_pages_dbe.value_or(0);
  bool pending = g.retired_pages_pending.value_or(false);
  std::optional<Severity> sev;
  if (static_cast<double>(total) >= t.Get(id, "crit_count")) {
    sev = Severity::kCrit;
  } else if (pending || static_cast<double>(total) >= t.Get(id, "warn_count")) {
    sev = Severity::kWarn;
  }
  if (!sev) return;
  std::string summary = std::to_string(total) + " memory page(s) retired";
  if (pending) summary += ", a retirement is pending until the next GPU reset";
  Finding f = GpuFinding(id, *sev, g, summary);
  f.Add("retired_pages_total", total);
  if (g.retired_pages_sbe) f.Add("retired_pages_sbe", *g.retired_pages_sbe);
  if (g.retired_pages_dbe) f.Add("retired_pages_dbe", *g.retired_pages_dbe);
  f.AddBool("retirement_pending", pending);
  out.push_back(std::move(f));
}

void RemapRules(const GpuFacts& g, const Thresholds& t, std::vector<Finding>& out) {
  auto add_counts = [&](Finding& f) {
    if (g.remapped_rows_correctable)
      f.Add("remapped_rows_correctable", *g.remapped_rows_correctable);
    if (g.remapped_rows_uncorrectable) {
      f.Add("remapped_rows_uncorrectable", *g.remapped_rows_uncorrectable);
    }
  };
  bool at_limit =
      g.remapped_rows_uncorrectable && static_cast<double>(*g.remapped_rows_uncorrectable) >=
                                           t.Get("gpu.remap.failed", "warn_uncorrectable_rows");
  if (g.remap_failed.value_or(false) || at_limit) {
    bool failed = g.remap_failed.value_or(false);
    Finding f =
        GpuFinding("gpu.remap.failed", failed ? Severity::kCrit : Severity::kWarn, g,
                   failed ? "row remapping failed" : "uncorrectable row remaps at the limit");
    f.AddBool("remap_failure", failed);
    add_counts(f);
    out.push_back(std::move(f));
  }
  if (g.remap_pending.value_or(false)) {
    Finding f = GpuFinding("gpu.remap.pending", Severity::kWarn, g,
                           "a memory row remap is waiting for a GPU reset");
    f.AddBool("remap_pending", true);
    add_counts(f);
    out.push_back(std::move(f));
  }
}

// Next-step lines for gpu.memory.full when an inference engine whose metrics were read serves
// from this GPU (facts/inference_state.h): its served model, its real prompt lengths and its KV
// usage, in place of the reference model guessed from the process name. Empty when none does.
std::vector<std::string> ServedModelAdvice(const GpuFacts& g,
                                           const std::vector<InferenceFacts>& engines) {
  std::vector<std::string> out;
  for (const auto& e : engines) {
    if (e.model.empty() || !InferenceServesGpu(e, g)) continue;
    std::string gpu_flag = "--gpu " + std::to_string(g.index);
    std::string model = e.plan_model.empty() ? std::string("MODEL") : e.plan_model;
    double ctx_tokens = e.prompt_tokens_p95.value_or(e.prompt_tokens_mean.value_or(0)) +
                        e.generation_tokens_mean.value_or(0);
    int64_t ctx = ctx_tokens > 0 ? static_cast<int64_t>((ctx_tokens + 255) / 256) * 256 : 2048;
    std::string line = e.name + " serves " + Sanitize(e.model, 80) + " from this GPU (its own " +
                       e.engine + " metrics)";
    if (e.kv_cache_usage)
      line += ": KV cache " + FormatDouble(100 * *e.kv_cache_usage, 1) + "% used";
    if (e.prompt_tokens_mean) {
      line += std::string(e.kv_cache_usage ? "," : ":") + " prompts of " +
              FormatDouble(*e.prompt_tokens_mean, 0) + " tokens on average";
      if (e.prompt_tokens_p95) line += " (p95 " + FormatDouble(*e.prompt_tokens_p95, 0) + ")";
    }
    if (e.plan_kv_bytes_per_token > 0) {
      line += "; " + e.plan_model + " needs " + FormatBytes(e.plan_kv_bytes_per_token) +
              " of KV per token (fp16)";
    }
    if (e.preemptions_window && *e.preemptions_window > 0) {
      line += "; " + FormatDouble(*e.preemptions_window, 0) + " preemptions in the last " +
              FormatDouble(e.window_s, 0) + " s";
    }
    out.push_back(line + ".");
    out.push_back("Size the cache for what it serves: `gpudoctor plan kv --model " + model + " " +
                  gpu_flag + " --context " + std::to_string(ctx) + "`" +
                  (e.plan_model.empty() ? " (give --layers --kv-heads --head-dim --params for "
                                          "a model without a preset)"
                                        : "") +
                  ".");
    out.push_back(
        "Compare static and continuous batching on this traffic: `gpudoctor plan "
        "batching --model " +
        model + " " + gpu_flag + " --rate 2 --requests 2000` (or --trace FILE.csv).");
    return out;
  }
  return out;
}

// Next-step lines for gpu.memory.full when an inference server holds the GPU (LiveKvFacts): the
// reference model's KV numbers on this GPU's memory and the planner commands to run.
std::vector<std::string> KvAdvice(const GpuFacts& g) {
  std::vector<std::string> out;
  if (!g.live_kv) return out;
  const LiveKvFacts& kv = *g.live_kv;
  std::string gpu_flag = "--gpu " + std::to_string(g.index);
  if (kv.sized && g.memory_total_bytes) {
    out.push_back(Sanitize(kv.comm, 40) + " (" + kv.server +
                  ") serves from this GPU: its KV cache grows with every token of every "
                  "sequence. For example " +
                  kv.model + " (bf16 weights, fp16 KV, 10% reserve) on " +
                  FormatDouble(static_cast<double>(*g.memory_total_bytes) / (1 << 30), 1) +
                  " GiB needs " + FormatBytes(kv.kv_bytes_per_token) +
                  " per token: " + std::to_string(kv.seqs_512) +
                  " sequences of 512 tokens fit, only " + std::to_string(kv.seqs_2048) +
                  " of 2048; fp8 KV raises that to " + std::to_string(kv.seqs_2048_fp8) + ".");
  }
  out.push_back("Size the cache for your model: `gpudoctor plan kv --model " + kv.model + " " +
                gpu_flag +
                " --context 2048` (see `gpudoctor plan kv --list-models`, or give "
                "--layers --kv-heads --head-dim --params).");
  out.push_back(
      "Compare static and continuous batching on your traffic: `gpudoctor plan "
      "batching --model " +
      kv.model + " " + gpu_flag + " --rate 2 --requests 2000` (or --trace FILE.csv).");
  return out;
}

void ThermalRule(const GpuFacts& g, const Thresholds& t, std::vector<Finding>& out) {
  const char* id = "gpu.thermal";
  double margin = t.Get(id, "warn_margin_c");
  bool hw = PersistentReason(g, n::kReasonHwThermal);
  bool sw = PersistentReason(g, n::kReasonSwThermal);
  bool at_slowdown = g.temp_c && g.temp_slowdown_c && *g.temp_c >= *g.temp_slowdown_c;
  bool near = g.temp_c && g.temp_slowdown_c && *g.temp_c >= *g.temp_slowdown_c - margin;
  bool mem_near =
      g.memory_temp_c && g.temp_memory_max_c && *g.memory_temp_c >= *g.temp_memory_max_c - margin;
  if (!hw && !sw && !near && !mem_near) return;
  Severity sev = (hw || at_slowdown) ? Severity::kCrit : Severity::kWarn;
  std::string summary;
  if (hw) {
    summary = "hardware thermal slowdown active";
  } else if (sw) {
    summary = "software thermal slowdown active";
  } else if (g.temp_c && g.temp_shutdown_c && *g.temp_c >= *g.temp_shutdown_c) {
    summary = "temperature " + std::to_string(*g.temp_c) +
              " C is at or above the shutdown "
              "threshold (" +
              std::to_string(*g.temp_shutdown_c) + " C)";
  } else if (at_slowdown) {
    summary = "temperature " + std::to_string(*g.temp_c) +
              " C is at or above the slowdown "
              "threshold (" +
              std::to_string(*g.temp_slowdown_c) + " C)";
  } else if (near) {
    summary = "temperature " + std::to_string(*g.temp_c) + " C is within " + FormatDouble(margin) +
              " C of the slowdown threshold (" + std::to_string(*g.temp_slowdown_c) + " C)";
  } else if (*g.memory_temp_c >= *g.temp_memory_max_c) {
    summary = "memory temperature " + std::to_string(*g.memory_temp_c) +
              " C is at or above its limit (" + std::to_string(*g.temp_memory_max_c) + " C)";
  } else {
    summary = "memory temperature " + std::to_string(*g.memory_temp_c) + " C is within " +
              FormatDouble(margin) + " C of its limit (" + std::to_string(*g.temp_memory_max_c) +
              " C)";
  }
  Finding f = GpuFinding(id, sev, g, summary);
  if (g.temp_c) f.Add("temp_c", *g.temp_c);
  if (g.temp_slowdown_c) f.Add("slowdown_temp_c", *g.temp_slowdown_c);
  if (g.temp_shutdown_c) f.Add("shutdown_temp_c", *g.temp_shutdown_c);
  if (g.memory_temp_c) f.Add("memory_temp_c", *g.memory_temp_c);
  if (g.temp_memory_max_c) f.Add("memory_max_temp_c", *g.temp_memory_max_c);
  if (g.first.clock_event_reasons) f.Add("clock_event_reasons", Hex(*g.first.clock_event_reasons));
  f.AddBool("hw_thermal_slowdown", hw).AddBool("sw_thermal_slowdown", sw);
  out.push_back(std::move(f));
}

void AddClockEvidence(const GpuFacts& g, Finding& f) {
  if (g.util_gpu_pct) f.Add("util_gpu_pct", static_cast<int64_t>(*g.util_gpu_pct));
  if (g.sm_clock_mhz) f.Add("sm_clock_mhz", static_cast<int64_t>(*g.sm_clock_mhz));
  if (g.max_sm_clock_mhz) f.Add("max_sm_clock_mhz", static_cast<int64_t>(*g.max_sm_clock_mhz));
  if (g.power_mw) f.Add("power_w", *g.power_mw / 1000.0);
  if (g.power_limit_mw) f.Add("power_limit_w", *g.power_limit_mw / 1000.0);
  if (g.first.clock_event_reasons) f.Add("clock_event_reasons", Hex(*g.first.clock_event_reasons));
}

void ClockRules(const GpuFacts& g, const Thresholds& t, std::vector<Finding>& out) {
  if (PersistentReason(g, n::kReasonHwPowerBrake)) {
    Finding f =
        GpuFinding("gpu.power.brake", Severity::kCrit, g, "clocks cut by the external power brake");
    AddClockEvidence(g, f);
    out.push_back(std::move(f));
  }
  // HW slowdown is also raised by the power brake and HW thermal slowdown; those have their own
  // findings, so it only counts alone.
  if (PersistentReason(g, n::kReasonHwSlowdown) && !PersistentReason(g, n::kReasonHwPowerBrake) &&
      !PersistentReason(g, n::kReasonHwThermal)) {
    bool busy = Busy(g, t.Get("gpu.hw_slowdown", "busy_util_pct"));
    Finding f = GpuFinding("gpu.hw_slowdown", busy ? Severity::kCrit : Severity::kWarn, g,
                           "hardware slowdown active across the sampling window");
    AddClockEvidence(g, f);
    out.push_back(std::move(f));
  }
  const char* cap = "gpu.power.cap";
  if (HasReason(g.first.clock_event_reasons, n::kReasonSwPowerCap) &&
      Busy(g, t.Get(cap, "busy_util_pct")) && g.sm_clock_mhz && g.max_sm_clock_mhz &&
      *g.sm_clock_mhz < *g.max_sm_clock_mhz * t.Get(cap, "max_clock_pct") / 100) {
    Finding f =
        GpuFinding(cap, Severity::kInfo, g,
                   "busy and held at " + std::to_string(*g.sm_clock_mhz) + " MHz by its power cap");
    AddClockEvidence(g, f);
    out.push_back(std::move(f));
  }
  const char* low = "gpu.clocks.low";
  constexpr uint64_t kExplained = n::kReasonGpuIdle | n::kReasonApplicationsClocks |
                                  n::kReasonSwPowerCap | n::kReasonHwSlowdown |
                                  n::kReasonSyncBoost | n::kReasonSwThermal | n::kReasonHwThermal |
                                  n::kReasonHwPowerBrake | n::kReasonDisplayClock;
  if (Busy(g, t.Get(low, "busy_util_pct")) && g.sm_clock_mhz && g.max_sm_clock_mhz &&
      g.first.clock_event_reasons && (*g.first.clock_event_reasons & kExplained) == 0 &&
      *g.sm_clock_mhz < *g.max_sm_clock_mhz * t.Get(low, "low_clock_pct") / 100) {
    Finding f = GpuFinding(low, Severity::kWarn, g,
                           "busy at " + std::to_string(*g.sm_clock_mhz) + " of " +
                               std::to_string(*g.max_sm_clock_mhz) +
                               " MHz with no throttle reason reported");
    AddClockEvidence(g, f);
    out.push_back(std::move(f));
  }
}

// Replays per minute per lane a healthy link may show: BER x line rate x 60 s (signals.md §4).
std::optional<double> LineRateGtps(uint32_t gen) {
  static constexpr double kRates[] = {0, 2.5, 5, 8, 16, 32, 64, 128};
  if (gen < 1 || gen > 7) return std::nullopt;
  return kRates[gen];
}

void PcieRules(const GpuFacts& g, const Thresholds& t, std::vector<Finding>& out) {
  const char* deg = "gpu.pcie.degraded";
  // Idle GPUs legitimately lower their link generation, so a low generation counts only while
  // busy; lanes are not given up at idle, so a narrow link counts always (signals.md section 4).
  bool busy = Busy(g, t.Get(deg, "busy_util_pct"));
  bool gen_low = busy && g.pcie_gen && g.pcie_max_gen && *g.pcie_gen < *g.pcie_max_gen;
  bool width_low = g.pcie_width && g.pcie_max_width && *g.pcie_width < *g.pcie_max_width;
  if (gen_low || width_low) {
    Finding f = GpuFinding(deg, Severity::kWarn, g,
                           "PCIe link at Gen" + std::to_string(g.pcie_gen.value_or(0)) + " x" +
                               std::to_string(g.pcie_width.value_or(0)) +
                               (busy ? " while busy" : " (idle)") + " (max Gen" +
                               std::to_string(g.pcie_max_gen.value_or(0)) + " x" +
                               std::to_string(g.pcie_max_width.value_or(0)) + ")" +
                               (width_low ? ": lanes missing" : ""));
    if (g.pcie_gen) f.Add("pcie_gen", static_cast<int64_t>(*g.pcie_gen));
    if (g.pcie_max_gen) f.Add("pcie_max_gen", static_cast<int64_t>(*g.pcie_max_gen));
    if (g.pcie_width) f.Add("pcie_width_lanes", static_cast<int64_t>(*g.pcie_width));
    if (g.pcie_max_width) f.Add("pcie_max_width_lanes", static_cast<int64_t>(*g.pcie_max_width));
    if (g.util_gpu_pct) f.Add("util_gpu_pct", static_cast<int64_t>(*g.util_gpu_pct));
    f.AddBool("busy", busy);
    out.push_back(std::move(f));
  }
  const char* rep = "gpu.pcie.replays";
  auto delta = Delta(g.first.pcie_replays, g.second.pcie_replays);
  if (!delta || !g.window_s || *g.window_s <= 0 || !g.pcie_gen || !g.pcie_width) return;
  if (static_cast<double>(*delta) < t.Get(rep, "min_replays")) return;
  auto rate = LineRateGtps(*g.pcie_gen);
  if (!rate) return;
  double ber = t.Get(rep, "errors_per_tbit") * 1e-12;
  double per_lane_per_min = ber * *rate * 1e9 * 60;
  double limit_per_min = std::ceil(per_lane_per_min * *g.pcie_width);
  double per_min = static_cast<double>(*delta) / *g.window_s * 60;
  if (per_min <= limit_per_min) return;
  Finding f = GpuFinding(rep, Severity::kWarn, g,
                         FormatDouble(per_min) + " PCIe replays/min, expected at most " +
                             FormatDouble(limit_per_min) + " at Gen" + std::to_string(*g.pcie_gen) +
                             " x" + std::to_string(*g.pcie_width));
  f.Add("replays_new_count", *delta).Add("window_s", *g.window_s);
  f.Add("replays_per_min", per_min).Add("limit_per_min", limit_per_min);
  f.Add("pcie_gen", static_cast<int64_t>(*g.pcie_gen));
  f.Add("pcie_width_lanes", static_cast<int64_t>(*g.pcie_width));
  if (g.second.pcie_replays) f.Add("replays_total_count", *g.second.pcie_replays);
  out.push_back(std::move(f));
}

int ActiveLinks(const GpuFacts& g) {
  int n = 0;
  for (const auto& l : g.nvlinks) n += l.active.value_or(false) ? 1 : 0;
  return n;
}

// Whether this GPU's NVLinks must be up: peers have active links, NVSwitches sit on the PCI bus
// (HGX/DGX baseboard: every link down on every GPU is the fabric manager / NVSwitch failure),
// or NVML names an SXM part. A PCIe card without a bridge has links that are simply unused.
bool NvLinksExpected(const GpuFacts& g, const GpuLayerFacts& gpu, bool peers_have_links) {
  if (peers_have_links) return true;
  if (gpu.pci_nvswitches && *gpu.pci_nvswitches > 0) return true;
  return g.name.find("SXM") != std::string::npos;
}

void NvLinkRules(const GpuFacts& g, bool peers_have_links, const Thresholds& t,
                 std::vector<Finding>& out, const GpuLayerFacts& gpu) {
  int known = 0, active = 0;
  std::string down;
  for (const auto& l : g.nvlinks) {
    if (!l.active) continue;
    ++known;
    if (*l.active) {
      ++active;
    } else {
      Append(down, std::to_string(l.link), ",");
    }
  }
  bool expected = NvLinksExpected(g, gpu, peers_have_links);
  if (known > 0 && active < known && (active > 0 || expected)) {
    Finding f = GpuFinding("gpu.nvlink.down", Severity::kCrit, g,
                           std::to_string(known - active) + " of " + std::to_string(known) +
                               " NVLinks inactive (links " + down + ")");
    f.Add("nvlinks_active", active).Add("nvlinks_known", known).Add("links_down", down);
    if (gpu.pci_nvswitches) f.Add("pci_nvswitches", static_cast<int64_t>(*gpu.pci_nvswitches));
    if (active == 0 && !peers_have_links) {
      f.next_steps.insert(f.next_steps.begin(),
                          "No GPU of the node has an active NVLink: check the fabric manager "
                          "(`systemctl status nvidia-fabricmanager`, its log) and the NVSwitches "
                          "(`nvidia-smi -q | grep -i fabric`).");
    }
    out.push_back(std::move(f));
  }
  const char* id = "gpu.nvlink.errors";
  auto replay = Delta(g.first.nvlink_replay_errors, g.second.nvlink_replay_errors);
  auto recovery = Delta(g.first.nvlink_recovery_errors, g.second.nvlink_recovery_errors);
  auto flit = Delta(g.first.nvlink_crc_flit_errors, g.second.nvlink_crc_flit_errors);
  auto data = Delta(g.first.nvlink_crc_data_errors, g.second.nvlink_crc_data_errors);
  uint64_t hard = replay.value_or(0) + recovery.value_or(0);
  uint64_t crc = flit.value_or(0) + data.value_or(0);
  if (hard == 0 && crc == 0) return;
  double crc_per_s = g.window_s && *g.window_s > 0 ? crc / *g.window_s : 0;
  Severity sev =
      (hard > 0 || crc_per_s >= t.Get(id, "crit_crc_per_s")) ? Severity::kCrit : Severity::kWarn;
  Finding f = GpuFinding(id, sev, g,
                         std::to_string(hard) + " NVLink replay/recovery and " +
                             std::to_string(crc) + " CRC errors during the check");
  f.Add("replay_new_count", replay.value_or(0)).Add("recovery_new_count", recovery.value_or(0));
  f.Add("crc_new_count", crc).Add("crc_per_s", crc_per_s);
  if (g.window_s) f.Add("window_s", *g.window_s);
  out.push_back(std::move(f));
}

void FanRule(const GpuFacts& g, const Thresholds& t, std::vector<Finding>& out) {
  const char* id = "gpu.fan";
  if (!g.fan_pct || !g.temp_c || *g.temp_c < t.Get(id, "hot_temp_c")) return;
  std::optional<Severity> sev;
  std::string summary;
  if (*g.fan_pct == 0) {
    sev = Severity::kCrit;
    summary = "fan at 0% while the GPU is at " + std::to_string(*g.temp_c) + " C";
  } else if (*g.fan_pct >= t.Get(id, "max_fan_pct")) {
    sev = Severity::kWarn;
    summary = "fan at " + std::to_string(*g.fan_pct) + "% and the GPU still at " +
              std::to_string(*g.temp_c) + " C";
  }
  if (!sev) return;
  Finding f = GpuFinding(id, *sev, g, summary);
  f.Add("fan_pct", static_cast<int64_t>(*g.fan_pct)).Add("temp_c", *g.temp_c);
  out.push_back(std::move(f));
}

void MemoryRule(const GpuFacts& g, const std::vector<InferenceFacts>& engines, const Thresholds& t,
                std::vector<Finding>& out) {
  const char* id = "gpu.memory.full";
  if (!g.memory_used_bytes || !g.memory_total_bytes || *g.memory_total_bytes == 0) return;
  double pct = 100.0 * *g.memory_used_bytes / *g.memory_total_bytes;
  if (pct < t.Get(id, "warn_used_pct")) return;
  Finding f = GpuFinding(id, Severity::kWarn, g,
                         FormatDouble(pct) + "% of GPU memory in use (" +
                             FormatBytes(*g.memory_used_bytes) + " of " +
                             FormatBytes(*g.memory_total_bytes) + ")");
  f.Add("used_pct", pct).Add("used_bytes", *g.memory_used_bytes);
  f.Add("total_bytes", *g.memory_total_bytes);
  if (g.processes) f.Add("processes", static_cast<int64_t>(g.processes->size()));
  // An inference server holds it: its own metrics (served model, real prompt lengths) when they
  // were read, else the KV planner's numbers for a reference model (facts from src/plan).
  std::vector<std::string> advice = ServedModelAdvice(g, engines);
  if (advice.empty()) advice = KvAdvice(g);
  for (auto& step : advice) f.next_steps.push_back(std::move(step));
  out.push_back(std::move(f));
}

std::string ProcessList(const GpuFacts& g) {
  std::string s;
  if (!g.processes) return s;
  for (const auto& p : *g.processes) {
    if (!s.empty()) s += " ";
    s += std::to_string(p.pid);
    if (!p.comm.empty()) s += "(" + p.comm + ")";
  }
  return s;
}

void UtilLowRule(const GpuFacts& g, const Thresholds& t, std::vector<Finding>& out) {
  const char* id = "gpu.util.low";
  if (!g.processes || g.processes->empty() || !g.util_gpu_pct) return;
  if (*g.util_gpu_pct > t.Get(id, "max_util_pct")) return;
  Finding f = GpuFinding(id, Severity::kInfo, g,
                         std::to_string(g.processes->size()) + " process(es) attached but only " +
                             std::to_string(*g.util_gpu_pct) + "% busy");
  f.Add("util_gpu_pct", static_cast<int64_t>(*g.util_gpu_pct));
  f.Add("processes", static_cast<int64_t>(g.processes->size())).Add("pids", ProcessList(g));
  out.push_back(std::move(f));
}

// ---- node level ----

void ImbalanceRule(const GpuLayerFacts& gpu, const Thresholds& t, std::vector<Finding>& out) {
  const char* id = "gpu.util.imbalance";
  double busy = t.Get(id, "busy_util_pct"), idle = t.Get(id, "idle_util_pct");
  std::string busy_list, idle_list;
  int n_busy = 0, n_idle = 0, idle_with_procs = 0;
  for (const auto& g : gpu.gpus) {
    if (!g.util_gpu_pct) continue;
    if (*g.util_gpu_pct >= busy) {
      ++n_busy;
      Append(busy_list, std::to_string(g.index), ",");
    } else if (*g.util_gpu_pct <= idle) {
      ++n_idle;
      Append(idle_list, std::to_string(g.index), ",");
      if (g.processes && !g.processes->empty()) ++idle_with_procs;
    }
  }
  if (n_busy == 0 || n_idle == 0) return;
  Finding f = MakeFinding(id, idle_with_procs > 0 ? Severity::kWarn : Severity::kInfo,
                          std::to_string(n_busy) + " GPU(s) saturated (" + busy_list + ") while " +
                              std::to_string(n_idle) + " are idle (" + idle_list + ")");
  f.Add("busy_gpus", busy_list).Add("idle_gpus", idle_list);
  f.Add("idle_gpus_with_processes", idle_with_procs);
  out.push_back(std::move(f));
}

void PersistenceRule(const GpuLayerFacts& gpu, std::vector<Finding>& out) {
  std::string off;
  int n_off = 0;
  for (const auto& g : gpu.gpus) {
    if (g.persistence_on && !*g.persistence_on) {
      ++n_off;
      Append(off, std::to_string(g.index), ",");
    }
  }
  if (n_off == 0) return;
  Finding f = MakeFinding("driver.persistence_off", Severity::kWarn,
                          "persistence mode is off on " + std::to_string(n_off) + " of " +
                              std::to_string(gpu.gpus.size()) + " GPU(s)");
  f.Add("gpus_persistence_off", off).Add("gpus_total", static_cast<int64_t>(gpu.gpus.size()));
  out.push_back(std::move(f));
}

void VersionRule(const GpuLayerFacts& gpu, std::vector<Finding>& out) {
  if (gpu.nvml.state != NvmlState::kOk) return;
  const DriverFacts& d = gpu.driver;
  auto report = [&](std::string summary, std::vector<std::pair<std::string, std::string>> ev) {
    Finding f = MakeFinding("driver.version", Severity::kWarn, std::move(summary));
    for (auto& [k, v] : ev) f.Add(k, v);
    out.push_back(std::move(f));
  };
  if (!d.driver_version.empty() && !d.kernel_module_version.empty() &&
      d.driver_version != d.kernel_module_version) {
    report(
        "driver " + d.driver_version + " but kernel module " + d.kernel_module_version,
        {{"driver_version", d.driver_version}, {"kernel_module_version", d.kernel_module_version}});
  }
  // The NVML version is "<NVML major>.<driver version>".
  if (!d.driver_version.empty() && !d.nvml_version.empty()) {
    size_t dot = d.nvml_version.find('.');
    if (dot != std::string::npos && d.nvml_version.substr(dot + 1) != d.driver_version) {
      report("NVML library " + d.nvml_version + " does not match driver " + d.driver_version,
             {{"nvml_version", d.nvml_version}, {"driver_version", d.driver_version}});
    }
  }
  std::map<std::string, std::map<std::string, std::string>>
      vbios_by_model;  // name -> vbios -> gpus
  for (const auto& g : gpu.gpus) {
    if (g.name.empty() || g.vbios.empty()) continue;
    auto& gpus = vbios_by_model[g.name][g.vbios];
    Append(gpus, std::to_string(g.index), ",");
  }
  for (const auto& [model, versions] : vbios_by_model) {
    if (versions.size() < 2) continue;
    std::vector<std::pair<std::string, std::string>> ev;
    ev.emplace_back("model", model);
    std::string list;
    for (const auto& [v, gpus] : versions) {
      Append(list, v + " on GPU " + gpus, "; ");
    }
    ev.emplace_back("vbios_versions", list);
    report(std::to_string(versions.size()) + " different VBIOS versions on " + model, ev);
  }
}

}  // namespace

void GpuRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out) {
  const GpuLayerFacts& gpu = snap.gpu;
  SessionRules(gpu, out);
  HangRules(gpu, out);
  MissingRules(gpu, out);
  ExpectedCountRule(gpu, t, out);
  SlowRule(gpu, t, out);
  bool any_links = std::any_of(gpu.gpus.begin(), gpu.gpus.end(),
                               [](const GpuFacts& g) { return ActiveLinks(g) > 0; });
  // GPUs lost at the handle lookup that the kernel log names: kernel_rules reports them (once).
  std::set<int> lost_in_log;
  for (const auto& p : PairBuslessLostGpus(snap)) lost_in_log.insert(p.nvml_index);
  std::map<int, std::string> inferred_bus = BusIdsOfBuslessLostGpus(gpu);
  for (const auto& g : gpu.gpus) {
    if (!lost_in_log.count(g.index)) LostRule(g, inferred_bus, snap.kernel, out);
    NvmlErrorRule(g, out);
    ReadingsFailedRule(g, out);
    if (g.hung || g.unfinished) continue;  // partial facts are not judged (HangRules: hangs)
    EccRules(g, t, out);
    EccStateRules(g, t, out);
    RetiredPagesRule(g, t, out);
    RemapRules(g, t, out);
    ThermalRule(g, t, out);
    ClockRules(g, t, out);
    PcieRules(g, t, out);
    NvLinkRules(g, any_links, t, out, gpu);
    FanRule(g, t, out);
    MemoryRule(g, snap.inference, t, out);
    UtilLowRule(g, t, out);
  }
  ImbalanceRule(gpu, t, out);
  PersistenceRule(gpu, out);
  VersionRule(gpu, out);
}

}  // namespace gpudoctor
