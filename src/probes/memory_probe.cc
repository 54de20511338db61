// Memory probe. Source: /proc/meminfo once; /proc/vmstat (pswpin, pswpout, oom_kill) at both
// ends of the sampling window. Units: bytes (meminfo kB × 1024), swap pages per second.
// Failure modes: missing or garbled /proc/meminfo → failed; missing/garbled /proc/vmstat →
// memory facts without swap rates and OOM count; counters going backwards → rates absent.
// Under watch both files stay open from tick to tick (KeptFile: re-read from offset 0).
// References: proc(5); Documentation/filesystems/proc.rst (MemAvailable).
#include <thread>

#include "core/kept_file.h"
#include "parsers/meminfo.h"
#include "parsers/vmstat.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {
namespace {

// The files this probe reads, kept open from tick to tick under watch (core/kept_file.h).
struct MemoryFiles {
  // keep: under watch only; a check reads each file afresh (open, read, close).
  MemoryFiles(const RootFs& fs, bool keep)
      : meminfo(fs.ProcPath("meminfo"), keep), vmstat(fs.ProcPath("vmstat"), keep) {}
  KeptFile meminfo, vmstat;
  std::string text;
};

struct MemoryCarry : SampleCarry<VmstatCounters> {
  MemoryCarry(VmstatCounters s, TimePoint at, std::shared_ptr<MemoryFiles> f)
      : SampleCarry<VmstatCounters>(std::move(s), at), files(std::move(f)) {}
  std::shared_ptr<MemoryFiles> files;
};

std::optional<VmstatCounters> ReadVmstat(MemoryFiles& files) {
  if (!files.vmstat.Read(&files.text, 4u << 20).ok()) return std::nullopt;
  auto counters = ParseVmstat(files.text);
  if (!counters.ok()) return std::nullopt;
  return *counters;
}

}  // namespace

ProbeOutput RunMemoryProbe(const ProbeContext& ctx) {
  // The previous run's vmstat read, else one now (check) or none (watch's first tick).
  std::optional<VmstatCounters> first;
  TimePoint t0 = SteadyClock::now();
  std::shared_ptr<MemoryFiles> files;
  if (auto* prev = dynamic_cast<SampleCarry<VmstatCounters>*>(ctx.previous.get())) {
    first = prev->sample;
    t0 = prev->at;
    if (auto* kept = dynamic_cast<MemoryCarry*>(prev)) files = kept->files;
  }
  if (files == nullptr) files = std::make_shared<MemoryFiles>(ctx.fs(), ctx.continuous);
  if (!first && !ctx.continuous) first = ReadVmstat(*files);
  // Under watch the files stay open for the next run.
  auto carry = [&](const VmstatCounters& sample, TimePoint at) -> std::shared_ptr<ProbeCarry> {
    if (ctx.continuous) return std::make_shared<MemoryCarry>(sample, at, files);
    return std::make_shared<SampleCarry<VmstatCounters>>(sample, at);
  };
  std::shared_ptr<ProbeCarry> next;

  if (Status s = files->meminfo.Read(&files->text, 4u << 20); !s.ok()) {
    return ProbeFailed(s.ToString());
  }
  auto meminfo = ParseMeminfo(files->text);
  if (!meminfo.ok()) {
    return ProbeFailed(ctx.fs().ProcPath("meminfo") + ": " + meminfo.status().message());
  }

  MemoryFacts mem;
  mem.total_bytes = meminfo->total_bytes;
  mem.available_bytes = meminfo->available_bytes;
  mem.swap_total_bytes = meminfo->swap_total_bytes;
  mem.swap_free_bytes = meminfo->swap_free_bytes;
  mem.shmem_bytes = meminfo->shmem_bytes;

  if (first) {
    if (!ctx.previous) std::this_thread::sleep_until(t0 + ctx.sample_window());
    TimePoint t1 = SteadyClock::now();
    auto second = ReadVmstat(*files);
    double window_s = std::chrono::duration<double>(t1 - t0).count();
    if (second) next = carry(*second, t1);
    if (second) {
      mem.window_s = window_s;
      mem.swap_in_pages_per_s = CounterRate(first->pswpin, second->pswpin, window_s);
      mem.swap_out_pages_per_s = CounterRate(first->pswpout, second->pswpout, window_s);
      mem.oom_kill_count = second->oom_kill;
    }
  }
  if (!first && ctx.continuous) {
    if (auto now = ReadVmstat(*files)) {
      mem.oom_kill_count = now->oom_kill;
      next = carry(*now, SteadyClock::now());
    }
  }
  ProbeOutput out = ProbeOk([mem](Snapshot& s) { s.host.memory = mem; });
  out.next = std::move(next);
  return out;
}

}  // namespace gpudoctor
