// CPU probe. Source: /proc/stat (the previous run's read, or read twice across the sampling
// window), /proc/loadavg. Units: percent of all logical CPUs' time; load as the kernel reports
// it. Failure modes: missing /proc/stat → failed; garbled read → failed with the parse error;
// too few ticks between the reads (tiny window, idle tickless host; kMinCpuShareTicks) or no
// previous read (watch, first tick) → shares absent.
#include "parsers/proc_stat.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {
namespace {

Result<ProcStat> ReadStat(const ProbeContext& ctx) {
  auto text = ctx.fs().ReadProc("stat");
  if (!text.ok()) return text.status();
  auto stat = ParseProcStat(*text);
  if (!stat.ok())
    return Status(stat.status().code(), ctx.fs().ProcPath("stat") + ": " + stat.status().message());
  return stat;
}

}  // namespace

ProbeOutput RunCpuProbe(const ProbeContext& ctx) {
  auto first = TakeFirstSample<ProcStat>(ctx, [&] { return ReadStat(ctx); });
  if (!first.ok()) return ProbeFailed(first.status().ToString());
  TimePoint t1 = SteadyClock::now();
  auto second = ReadStat(ctx);
  if (!second.ok()) return ProbeFailed(second.status().ToString());

  CpuFacts cpu;
  if (second->cpu_lines > 0) cpu.logical_cores = second->cpu_lines;
  if (first->sample) {
    cpu.window_s = std::chrono::duration<double>(t1 - first->at).count();
    if (auto shares = CpuSharesBetween(first->sample->total, second->total)) {
      cpu.busy_pct = shares->busy_pct;
      cpu.iowait_pct = shares->iowait_pct;
      cpu.steal_pct = shares->steal_pct;
    }
  }
  if (auto load_text = ctx.fs().ReadProc("loadavg"); load_text.ok()) {
    if (auto load = ParseLoadAvg(*load_text); load.ok()) {
      cpu.load1 = load->load1;
      cpu.load5 = load->load5;
      cpu.load15 = load->load15;
    }
  }
  ProbeOutput out = ProbeOk([cpu](Snapshot& s) { s.host.cpu = cpu; });
  out.next = std::make_shared<SampleCarry<ProcStat>>(std::move(*second), t1);
  return out;
}

}  // namespace gpudoctor
