// Facts about the host: CPU, memory, pressure, filesystems, processes. Filled by the host probes
// (src/probes/{cpu,memory,pressure,disk,process}_probe.cc). Every measured value is optional:
// absent means unknown/unsupported, never 0.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "facts/upkeep_facts.h"

namespace gpudoctor {

struct CpuFacts {
  std::optional<int> logical_cores;
  std::optional<double> window_s;  // length of the sampling window
  std::optional<double> busy_pct;  // all cores, user+nice+system+irq+softirq+steal
  std::optional<double> iowait_pct;
  std::optional<double> steal_pct;
  std::optional<double> load1, load5, load15;
};

struct MemoryFacts {
  std::optional<uint64_t> total_bytes;
  std::optional<uint64_t> available_bytes;
  std::optional<uint64_t> swap_total_bytes;
  std::optional<uint64_t> swap_free_bytes;
  std::optional<double> swap_in_pages_per_s;   // pswpin delta over the window
  std::optional<double> swap_out_pages_per_s;  // pswpout delta over the window
  std::optional<uint64_t> oom_kill_count;      // /proc/vmstat oom_kill since boot
  std::optional<uint64_t> shmem_bytes;         // Shmem: tmpfs and shared memory (/dev/shm)
  std::optional<double> window_s;              // time between the two vmstat samples
};

struct PressureLine {
  std::optional<double> avg10_pct, avg60_pct, avg300_pct;
  std::optional<uint64_t> total_us;
};
struct PressureResource {
  PressureLine some;
  std::optional<PressureLine> full;  // absent for cpu on older kernels
};
struct PressureFacts {
  std::optional<PressureResource> cpu, memory, io;  // absent: no PSI (kernel < 4.20 or psi=0)
};

struct MountFacts {
  std::string device;
  std::string mount_point;
  std::string fs_type;
  bool read_only = false;
  std::optional<uint64_t> total_bytes, available_bytes;
  std::optional<uint64_t> free_bytes;                 // including root-reserved blocks
  std::optional<uint64_t> inodes_total, inodes_free;  // absent when the fs has no inode limit
  std::string error;                                  // why statvfs failed, empty on success
  bool timed_out = false;  // statvfs did not answer in time (stale network mount?)
};

// One task (thread) in state D at both ends of the sampling window.
struct StuckProcess {
  int pid = 0;              // process (thread group) id
  int tid = 0;              // the task in D; equals pid for the main thread
  std::string comm;         // process name (main thread's comm; never cmdline)
  std::string thread_comm;  // the task's own comm when it differs, else empty
  std::string wchan;        // kernel symbol it waits in; empty when unreadable
  // Whether it got the CPU between the two samples (its run time or context-switch count
  // moved): true = it cycles through short D sleeps (I/O), not stuck; false = it did not run
  // at all during the window; nullopt = the kernel shows neither counter.
  std::optional<bool> ran_in_window;
  // Time since it last ran, measured on the clock of the CPU it last ran on. Only for tasks
  // that did not run in the window; nullopt when that CPU's clock could not be read or the
  // estimate was not sane (negative, or longer than the uptime).
  std::optional<double> stuck_s;
  std::optional<int> cpu;    // the CPU it last ran on (stat field 39)
  bool nvidia_tool = false;  // nvidia-smi, nvidia-persistenced, nv-hostengine, dcgm...
  bool nvidia_wait = false;  // waits inside the NVIDIA driver (wchan uvm_*, nv_*, os_*)
};

struct ProcessFacts {
  int total = 0;          // processes (thread groups)
  int tasks_scanned = 0;  // threads whose state was read
  int zombie_count = 0;   // processes in state Z
  // Tasks in state D at both ends of the sampling window: nvidia first, then longest stuck.
  std::vector<StuckProcess> dstate;
  int dstate_count = 0;            // all of them, also beyond the bounded list
  std::optional<double> window_s;  // time between the two samples
  // The scan stopped early (the check's deadline came near, or the task cap was hit): every
  // count above covers only the tasks_scanned tasks read.
  bool truncated = false;
  // /sys/module/nvidia exists (the NVIDIA kernel module is loaded); nullopt: not looked at.
  std::optional<bool> nvidia_module_loaded;
};

// One `[node] required_mounts` entry, looked up in the mount table the disk probe read.
struct RequiredMountFacts {
  std::string mount_point;  // as configured, without a trailing '/'
  bool mounted = false;
  std::string fs_type, device;  // of the visible (last) mount on that point, when mounted
};

struct HostFacts {
  std::optional<CpuFacts> cpu;
  std::optional<MemoryFacts> memory;
  std::optional<PressureFacts> pressure;
  std::optional<std::vector<MountFacts>> mounts;
  // Set when [node] required_mounts is not empty and the mount table could be read.
  std::optional<std::vector<RequiredMountFacts>> required_mounts;
  std::optional<ProcessFacts> processes;
  std::optional<double> uptime_s;
  // Upkeep: facts/upkeep_facts.h.
  std::optional<ThermalFacts> thermal;
  std::optional<BootFacts> boot;
  std::optional<BackupFacts> backups;
  // Shared, not copied: the boot probe runs on the slow cadence and its answer (a package list)
  // is applied to every tick's snapshot between its runs. Null: not read.
  std::shared_ptr<const UpdateFacts> updates;
};

}  // namespace gpudoctor
