// Host resource rules: CPU, iowait and load here; memory, swap, pressure, disks and stuck
// processes in their own files (host_rules.h), all run from HostRules.
#include "rules/host_rules.h"

#include <string>

#include "core/strings.h"
#include "rules/engine.h"

namespace gpudoctor {
namespace {

void CpuRules(const CpuFacts& cpu, const Thresholds& t, std::vector<Finding>& out) {
  if (cpu.busy_pct) {
    const char* id = "host.cpu.saturated";
    if (auto sev =
            GradeHigh(*cpu.busy_pct, t.Get(id, "warn_busy_pct"), t.Get(id, "crit_busy_pct"))) {
      Finding f = MakeFinding(id, CapForShortWindow(*sev, cpu.window_s),
                              "CPUs " + FormatDouble(*cpu.busy_pct) + "% busy over the last " +
                                  FormatDouble(cpu.window_s.value_or(0), 2) + " s");
      f.Add("busy_pct", *cpu.busy_pct);
      if (cpu.steal_pct) f.Add("steal_pct", *cpu.steal_pct);
      if (cpu.logical_cores) f.Add("logical_cores", *cpu.logical_cores);
      if (cpu.window_s) f.Add("window_s", *cpu.window_s);
      out.push_back(std::move(f));
    }
  }
  if (cpu.iowait_pct) {
    const char* id = "host.iowait.high";
    if (auto sev = GradeHigh(*cpu.iowait_pct, t.Get(id, "warn_iowait_pct"),
                             t.Get(id, "crit_iowait_pct"))) {
      Finding f = MakeFinding(id, CapForShortWindow(*sev, cpu.window_s),
                              "CPUs spent " + FormatDouble(*cpu.iowait_pct) + "% of the last " +
                                  FormatDouble(cpu.window_s.value_or(0), 2) + " s waiting for I/O");
      f.Add("iowait_pct", *cpu.iowait_pct);
      if (cpu.window_s) f.Add("window_s", *cpu.window_s);
      out.push_back(std::move(f));
    }
  }
  if (cpu.load1 && cpu.logical_cores && *cpu.logical_cores > 0) {
    const char* id = "host.load.high";
    double per_core = *cpu.load1 / *cpu.logical_cores;
    if (per_core >= t.Get(id, "warn_load_per_core")) {
      Finding f = MakeFinding(id, Severity::kWarn,
                              "load average " + FormatDouble(*cpu.load1, 2) + " on " +
                                  std::to_string(*cpu.logical_cores) + " logical cores");
      f.Add("load1", *cpu.load1).Add("logical_cores", *cpu.logical_cores);
      f.Add("load_per_core", per_core);
      out.push_back(std::move(f));
    }
  }
}

}  // namespace

void HostRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out) {
  if (snap.host.cpu) CpuRules(*snap.host.cpu, t, out);
  if (snap.host.memory) MemoryRules(*snap.host.memory, t, out);
  if (snap.host.pressure) PressureRules(*snap.host.pressure, t, out);
  if (snap.host.mounts) DiskRules(*snap.host.mounts, t, out);
  if (snap.host.required_mounts) RequiredMountRules(*snap.host.required_mounts, out);
  if (snap.host.processes) ProcessRules(*snap.host.processes, t, out);
}

}  // namespace gpudoctor
