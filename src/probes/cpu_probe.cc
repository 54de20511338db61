// CPU probe. Source: /proc/stat read twice across the sampling window, /proc/loadavg.
// Units: percent of all logical CPUs' time; load as the kernel reports it.
// Failure modes: missing /proc/stat → failed; garbled second read → failed with the parse error;
// too few ticks in the window (tiny window, idle tickless host; kMinCpuShareTicks) → shares absent.
#include <thread>

#include "parsers/proc_stat.h"
#include "probes/probe.h"

namespace gpudoctor {

ProbeOutput RunCpuProbe(const ProbeContext& ctx) {
  auto first_text = ctx.fs().ReadProc("stat");
  if (!first_text.ok()) return ProbeFailed(first_text.status().ToString());
  auto first = ParseProcStat(*first_text);
  if (!first.ok()) return ProbeFailed(ctx.fs().ProcPath("stat") + ": " + first.status().message());

  TimePoint t0 = SteadyClock::now();
  std::this_thread::sleep_for(ctx.sample_window());
  auto second_text = ctx.fs().ReadProc("stat");
  if (!second_text.ok()) return ProbeFailed(second_text.status().ToString());
  auto second = ParseProcStat(*second_text);
  if (!second.ok()) {
    return ProbeFailed(ctx.fs().ProcPath("stat") + ": " + second.status().message());
  }

  CpuFacts cpu;
  cpu.window_s = std::chrono::duration<double>(SteadyClock::now() - t0).count();
  if (second->cpu_lines > 0) cpu.logical_cores = second->cpu_lines;
  if (auto shares = CpuSharesBetween(first->total, second->total)) {
    cpu.busy_pct = shares->busy_pct;
    cpu.iowait_pct = shares->iowait_pct;
    cpu.steal_pct = shares->steal_pct;
  }
  if (auto load_text = ctx.fs().ReadProc("loadavg"); load_text.ok()) {
    if (auto load = ParseLoadAvg(*load_text); load.ok()) {
      cpu.load1 = load->load1;
      cpu.load5 = load->load5;
      cpu.load15 = load->load15;
    }
  }
  return ProbeOk([cpu](Snapshot& s) { s.host.cpu = cpu; });
}

}  // namespace gpudoctor
