// Memory, swap and pressure (PSI) rules: host.memory.low, host.swap.active, host.pressure.*.
#include <string>

#include "core/strings.h"
#include "rules/host_rules.h"

namespace gpudoctor {
namespace {

void MemoryLowRule(const MemoryFacts& mem, const Thresholds& t, std::vector<Finding>& out) {
  // Without MemAvailable (kernel < 3.14) the share cannot be judged: no finding.
  if (!mem.total_bytes || !mem.available_bytes || *mem.total_bytes == 0) return;
  const char* id = "host.memory.low";
  double pct = 100.0 * static_cast<double>(*mem.available_bytes) / *mem.total_bytes;
  auto sev = GradeLow(pct, t.Get(id, "warn_available_pct"), t.Get(id, "crit_available_pct"));
  if (!sev) return;
  Finding f =
      MakeFinding(id, *sev,
                  FormatBytes(*mem.available_bytes) + " of " + FormatBytes(*mem.total_bytes) +
                      " RAM available (" + FormatDouble(pct) + "%)");
  f.Add("available_pct", pct).Add("available_bytes", *mem.available_bytes);
  f.Add("total_bytes", *mem.total_bytes);
  if (mem.shmem_bytes) f.Add("shmem_bytes", *mem.shmem_bytes);
  if (mem.swap_total_bytes && mem.swap_free_bytes) {
    f.Add("swap_used_bytes", *mem.swap_total_bytes - *mem.swap_free_bytes);
  }
  if (mem.oom_kill_count) f.Add("oom_kills_since_boot_count", *mem.oom_kill_count);
  out.push_back(std::move(f));
}

void SwapActiveRule(const MemoryFacts& mem, const Thresholds& t, std::vector<Finding>& out) {
  if (!mem.swap_in_pages_per_s && !mem.swap_out_pages_per_s) return;
  const char* id = "host.swap.active";
  double in = mem.swap_in_pages_per_s.value_or(0), swap_out = mem.swap_out_pages_per_s.value_or(0);
  double rate = in + swap_out;
  auto sev = GradeHigh(rate, t.Get(id, "warn_pages_per_s"), t.Get(id, "crit_pages_per_s"));
  if (!sev) return;
  std::string summary = "swapping " + FormatDouble(rate, 0) + " pages/s (in " +
                        FormatDouble(in, 0) + ", out " + FormatDouble(swap_out, 0) + ")";
  std::optional<uint64_t> used;
  if (mem.swap_total_bytes && mem.swap_free_bytes) {
    used = *mem.swap_total_bytes - *mem.swap_free_bytes;
    summary +=
        "; " + FormatBytes(*used) + " of " + FormatBytes(*mem.swap_total_bytes) + " swap in use";
  }
  Finding f = MakeFinding(id, CapForShortWindow(*sev, mem.window_s), std::move(summary));
  f.Add("swap_pages_per_s", rate);
  if (mem.swap_in_pages_per_s) f.Add("swap_in_pages_per_s", *mem.swap_in_pages_per_s);
  if (mem.swap_out_pages_per_s) f.Add("swap_out_pages_per_s", *mem.swap_out_pages_per_s);
  if (used) f.Add("swap_used_bytes", *used).Add("swap_total_bytes", *mem.swap_total_bytes);
  if (mem.available_bytes) f.Add("mem_available_bytes", *mem.available_bytes);
  if (mem.window_s) f.Add("window_s", *mem.window_s);
  out.push_back(std::move(f));
}

void AddLine(Finding& f, const char* kind, const PressureLine& line) {
  std::string k = kind;
  if (line.avg10_pct) f.Add(k + "_avg10_pct", *line.avg10_pct);
  if (line.avg60_pct) f.Add(k + "_avg60_pct", *line.avg60_pct);
  if (line.avg300_pct) f.Add(k + "_avg300_pct", *line.avg300_pct);
}

// cpu: only "some" counts (system-wide cpu "full" is reported as 0 or is meaningless).
// memory and io: warn on some avg10, crit on full avg10.
void PressureRule(const char* id, const char* resource, const PressureResource& r, bool use_full,
                  const Thresholds& t, std::vector<Finding>& out) {
  std::optional<Severity> sev;
  double some10 = r.some.avg10_pct.value_or(0);
  if (use_full) {
    if (some10 >= t.Get(id, "warn_some_avg10_pct")) sev = Severity::kWarn;
    if (r.full && r.full->avg10_pct && *r.full->avg10_pct >= t.Get(id, "crit_full_avg10_pct")) {
      sev = Severity::kCrit;
    }
  } else {
    sev = GradeHigh(some10, t.Get(id, "warn_some_avg10_pct"), t.Get(id, "crit_some_avg10_pct"));
  }
  if (!sev) return;
  std::string summary = std::string(resource) + " pressure: tasks stalled " + FormatDouble(some10) +
                        "% of the last 10 s";
  if (use_full && r.full && r.full->avg10_pct) {
    summary += " (all tasks at once " + FormatDouble(*r.full->avg10_pct) + "%)";
  }
  Finding f = MakeFinding(id, *sev, std::move(summary));
  AddLine(f, "some", r.some);
  if (use_full && r.full) AddLine(f, "full", *r.full);
  out.push_back(std::move(f));
}

}  // namespace

void MemoryRules(const MemoryFacts& mem, const Thresholds& t, std::vector<Finding>& out) {
  MemoryLowRule(mem, t, out);
  SwapActiveRule(mem, t, out);
}

void PressureRules(const PressureFacts& psi, const Thresholds& t, std::vector<Finding>& out) {
  if (psi.cpu) PressureRule("host.pressure.cpu", "CPU", *psi.cpu, false, t, out);
  if (psi.memory) PressureRule("host.pressure.memory", "memory", *psi.memory, true, t, out);
  if (psi.io) PressureRule("host.pressure.io", "I/O", *psi.io, true, t, out);
}

}  // namespace gpudoctor
