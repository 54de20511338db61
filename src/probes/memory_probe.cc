// Memory probe. Source: /proc/meminfo once; /proc/vmstat (pswpin, pswpout, oom_kill) at both
// ends of the sampling window. Units: bytes (meminfo kB × 1024), swap pages per second.
// Failure modes: missing or garbled /proc/meminfo → failed; missing/garbled /proc/vmstat →
// memory facts without swap rates and OOM count; counters going backwards → rates absent.
// Under watch both files stay open from tick to tick (probes/kept_proc_files.h).
// References: proc(5); Documentation/filesystems/proc.rst (MemAvailable).
#include <thread>

#include "parsers/meminfo.h"
#include "parsers/vmstat.h"
#include "probes/kept_proc_files.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {
namespace {

// The files this probe reads, by index in its KeptProcFiles set.
enum MemoryFile : size_t { kMeminfo, kVmstat };

std::optional<VmstatCounters> ReadVmstat(KeptProcFiles& files) {
  auto text = files.Read(kVmstat, 4u << 20);
  if (!text.ok()) return std::nullopt;
  auto counters = ParseVmstat(*text);
  if (!counters.ok()) return std::nullopt;
  return *counters;
}

}  // namespace

ProbeOutput RunMemoryProbe(const ProbeContext& ctx) {
  // The previous run's vmstat read, else one now (check) or none (watch's first tick).
  std::optional<VmstatCounters> first;
  TimePoint t0 = SteadyClock::now();
  if (auto* prev = dynamic_cast<SampleCarry<VmstatCounters>*>(ctx.previous.get())) {
    first = prev->sample;
    t0 = prev->at;
  }
  std::shared_ptr<KeptProcFiles> files = KeptProcFiles::ForRun(ctx, {"meminfo", "vmstat"});
  if (!first && !ctx.continuous) first = ReadVmstat(*files);
  std::shared_ptr<ProbeCarry> next;  // under watch the files stay open for the next run

  auto text = files->Read(kMeminfo, 4u << 20);
  if (!text.ok()) return ProbeFailed(text.status().ToString());
  auto meminfo = ParseMeminfo(*text);
  if (!meminfo.ok()) {
    return ProbeFailed(files->path(kMeminfo) + ": " + meminfo.status().message());
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
    if (second) next = CarrySample(ctx, *second, t1, files);
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
      next = CarrySample(ctx, *now, SteadyClock::now(), files);
    }
  }
  ProbeOutput out = ProbeOk([mem](Snapshot& s) { s.host.memory = mem; });
  out.next = std::move(next);
  return out;
}

}  // namespace gpudoctor
