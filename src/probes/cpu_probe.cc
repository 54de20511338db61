// CPU probe. Source: /proc/stat (the previous run's read, or read twice across the sampling
// window), /proc/loadavg. Units: percent of all logical CPUs' time; load as the kernel reports
// it. Failure modes: missing /proc/stat → failed; garbled read → failed with the parse error;
// too few ticks between the reads (tiny window, idle tickless host; kMinCpuShareTicks) or no
// previous read (watch, first tick) → shares absent. Under watch both files stay open from tick
// to tick (KeptFile: re-read from offset 0, fresh each time).
#include "core/kept_file.h"
#include "parsers/proc_stat.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {
namespace {

// The files this probe reads, kept open from tick to tick under watch (core/kept_file.h).
struct CpuFiles {
  // keep: under watch only; a check reads each file afresh (open, read, close).
  CpuFiles(const RootFs& fs, bool keep)
      : stat(fs.ProcPath("stat"), keep), loadavg(fs.ProcPath("loadavg"), keep) {}
  KeptFile stat, loadavg;
  std::string text;
};

struct CpuCarry : SampleCarry<ProcStat> {
  CpuCarry(ProcStat s, TimePoint at, std::shared_ptr<CpuFiles> f)
      : SampleCarry<ProcStat>(std::move(s), at), files(std::move(f)) {}
  std::shared_ptr<CpuFiles> files;
};

Result<ProcStat> ReadStat(const ProbeContext& ctx, CpuFiles& files) {
  if (Status s = files.stat.Read(&files.text, 4u << 20); !s.ok()) return s;
  auto stat = ParseProcStat(files.text);
  if (!stat.ok())
    return Status(stat.status().code(), ctx.fs().ProcPath("stat") + ": " + stat.status().message());
  return stat;
}

}  // namespace

ProbeOutput RunCpuProbe(const ProbeContext& ctx) {
  std::shared_ptr<CpuFiles> files;
  if (auto* prev = dynamic_cast<const CpuCarry*>(ctx.previous.get())) files = prev->files;
  if (files == nullptr) files = std::make_shared<CpuFiles>(ctx.fs(), ctx.continuous);
  auto first = TakeFirstSample<ProcStat>(ctx, [&] { return ReadStat(ctx, *files); });
  if (!first.ok()) return ProbeFailed(first.status().ToString());
  TimePoint t1 = SteadyClock::now();
  auto second = ReadStat(ctx, *files);
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
  if (files->loadavg.Read(&files->text, 4096).ok()) {
    if (auto load = ParseLoadAvg(files->text); load.ok()) {
      cpu.load1 = load->load1;
      cpu.load5 = load->load5;
      cpu.load15 = load->load15;
    }
  }
  ProbeOutput out = ProbeOk([cpu](Snapshot& s) { s.host.cpu = cpu; });
  if (ctx.continuous) {
    out.next = std::make_shared<CpuCarry>(std::move(*second), t1, std::move(files));
  } else {
    out.next = std::make_shared<SampleCarry<ProcStat>>(std::move(*second), t1);
  }
  return out;
}

}  // namespace gpudoctor
