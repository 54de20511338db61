// CpuPlacement: keeps the threads of a `watch` on one CPU while its ticks run on time, and lets
// them run on every CPU they may use again when ticks start late.
//
// Why: a tick hands work between threads (the probe lane, the NVML sampler, the history writer)
// and sleeps a second in between. Spread over CPUs, every hand-off wakes an idle CPU (an
// inter-processor interrupt; on a virtual machine an exit to the hypervisor on both sides) and
// each thread starts on caches the others warmed elsewhere. On one CPU the same tick costs 14-19%
// less CPU on an idle 2-core VM (docs/cost.md, seventeenth round). A tick needs a few ms of a CPU a
// second, so one CPU is plenty, as long as that CPU is not taken by others: then ticks start late,
// and the threads may run anywhere again (a late tick is one that starts `late_s` or more after it
// was due, `late_ticks_to_widen` ticks in a row). After `on_time_ticks_to_pin` ticks on time
// they are kept on one CPU again: the one the calling thread runs on then.
//
// Which CPUs: those the process may run on when the CpuPlacement is made (sched_getaffinity:
// systemd's CPUAffinity=, a container's cpuset, taskset), never others. With one allowed CPU, or
// when disabled (`[watch] one_cpu = false`, `--any-cpu`), it never changes any thread's CPUs.
// Threads started after a change inherit the CPUs of the thread that starts them.
//
// Thread-safety: OnTick() from one thread (the watch loop's). Applying a set of CPUs changes
// every thread of this process (listed from the kernel's own procfs, RootFs(): its own threads,
// not the host the probes look at, so not through --path.procfs).
#pragma once

#include <sched.h>

#include <functional>
#include <string>

namespace gpudoctor {

struct CpuPlacementPolicy {
  double late_s = 0.05;            // a tick that starts this many seconds late, or more, is late
  int late_ticks_to_widen = 2;     // late ticks in a row before the threads may run anywhere
  int on_time_ticks_to_pin = 600;  // ticks on time, after widening, before one CPU again
};

class CpuPlacement {
 public:
  // Gives every thread of this process the CPUs in `set`; false when a thread refused.
  using Apply = std::function<bool(const cpu_set_t& set)>;
  // The CPU the calling thread runs on (sched_getcpu), -1 when unknown.
  using CurrentCpu = std::function<int()>;

  // `allowed`: the CPUs the process may run on (AllowedCpus() in production).
  CpuPlacement(bool enabled, const cpu_set_t& allowed, CpuPlacementPolicy policy = {},
               Apply apply = ApplyToAllThreads, CurrentCpu current = CurrentCpuOfThisThread);

  // At the start of each tick, with how late it started (seconds; 0 or less: on time). The first
  // call keeps the threads on one CPU. Returns a line for the log when the placement changed,
  // "" otherwise.
  std::string OnTick(double late_s);

  // A reload's `[watch] one_cpu`: false lets the threads run on any allowed CPU at once; true
  // keeps them on one CPU from the next tick.
  void SetEnabled(bool enabled);

  // The CPU the threads are kept on; -1 while they may run on any allowed CPU.
  int pinned_cpu() const { return pinned_cpu_; }

  // The CPUs the calling thread may run on; empty on error.
  static cpu_set_t AllowedCpus();
  static bool ApplyToAllThreads(const cpu_set_t& set);
  static int CurrentCpuOfThisThread();

 private:
  bool Pin();
  void Widen();

  bool enabled_;
  bool can_pin_;  // two allowed CPUs or more
  cpu_set_t allowed_;
  CpuPlacementPolicy policy_;
  Apply apply_;
  CurrentCpu current_;
  bool started_ = false;
  int pinned_cpu_ = -1;
  int late_in_a_row_ = 0;
  int on_time_since_widen_ = 0;
};

}  // namespace gpudoctor
