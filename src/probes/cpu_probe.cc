// CPU probe. Source: /proc/stat (the previous run's read, or read twice across the sampling
// window), /proc/loadavg. Units: percent of all logical CPUs' time; load as the kernel reports
// it. Failure modes: missing /proc/stat → failed; garbled read → failed with the parse error;
// too few ticks between the reads (tiny window, idle tickless host; kMinCpuShareTicks) or no
// previous read (watch, first tick) → shares absent. Under watch both files stay open from tick
// to tick (probes/kept_proc_files.h).
#include "parsers/proc_stat.h"
#include "probes/kept_proc_files.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {
namespace {

// The files this probe reads, by index in its KeptProcFiles set.
enum CpuFile : size_t { kStat, kLoadavg };

Result<ProcStat> ReadStat(KeptProcFiles& files) {
  auto text = files.Read(kStat, 4u << 20);
  if (!text.ok()) return text.status();
  auto stat = ParseProcStat(*text);
  if (!stat.ok()) {
    return Status(stat.status().code(), files.path(kStat) + ": " + stat.status().message());
  }
  return stat;
}

}  // namespace

ProbeOutput RunCpuProbe(const ProbeContext& ctx) {
  std::shared_ptr<KeptProcFiles> files = KeptProcFiles::ForRun(ctx, {"stat", "loadavg"});
  auto first = TakeFirstSample<ProcStat>(ctx, [&] { return ReadStat(*files); });
  if (!first.ok()) return ProbeFailed(first.status().ToString());
  TimePoint t1 = SteadyClock::now();
  auto second = ReadStat(*files);
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
  if (auto text = files->Read(kLoadavg, 4096); text.ok()) {
    if (auto load = ParseLoadAvg(*text); load.ok()) {
      cpu.load1 = load->load1;
      cpu.load5 = load->load5;
      cpu.load15 = load->load15;
    }
  }
  ProbeOutput out = ProbeOk([cpu](Snapshot& s) { s.host.cpu = cpu; });
  out.next = CarrySample(ctx, std::move(*second), t1, std::move(files));
  return out;
}

}  // namespace gpudoctor
