// Catalogue section: host resources and stuck processes (issue: foundation).
#include "rules/catalogue.h"

namespace gpudoctor {

const std::vector<CatalogueEntry>& HostCatalogue() {
  static const std::vector<CatalogueEntry> entries = {
      {"host.cpu.saturated",
       Layer::kResources,
       Severity::kCrit,
       Action::kWatch,
       "CPU saturated",
       "All CPU cores were busy (user+system+irq+softirq+steal) over the sampling window. Data "
       "loaders, tokenisers and NCCL proxy threads starve, and GPUs wait for input.",
       {"Find the top consumers: `top -o %CPU` or `pidstat 1 5`.",
        "Check data-loader worker counts (num_workers) against the core count.",
        "If steal is high, the hypervisor is short of CPU: move the VM or ask the provider."},
       {{"warn_busy_pct", 90, "average busy share of all cores over the window"},
        {"crit_busy_pct", 98, "average busy share that starves the GPUs"}}},
      {"host.iowait.high",
       Layer::kResources,
       Severity::kCrit,
       Action::kWatch,
       "CPUs waiting for I/O",
       "A large share of CPU time went to waiting on block I/O: storage is the bottleneck "
       "(dataset reads, checkpoint writes, swapping).",
       {"See which device is busy: `iostat -x 1 5`; which process: `iotop -o` or `pidstat -d 1`.",
        "Stage the dataset on local NVMe, or raise read-ahead and loader prefetching.",
        "Spread checkpoint writes out or write them asynchronously."},
       {{"warn_iowait_pct", 20, "share of CPU time in iowait over the window"},
        {"crit_iowait_pct", 50, "share of CPU time in iowait that stalls training"}}},
      {"host.load.high",
       Layer::kResources,
       Severity::kWarn,
       Action::kWatch,
       "Load average above core count",
       "The 1-minute load average is well above the number of logical cores: runnable tasks (and "
       "tasks in uninterruptible sleep, which also count) queue up.",
       {"Check for tasks in D state (they inflate load without using CPU): `ps -eo state,pid,comm "
        "| "
        "grep ^D`.",
        "Find CPU hogs with `top`; reduce oversubscribed worker pools."},
       {{"warn_load_per_core", 2, "1-minute load average divided by logical cores"}}},
      {"host.memory.low",
       Layer::kResources,
       Severity::kCrit,
       Action::kWatch,
       "Little memory available",
       "MemAvailable (what can be allocated without swapping) is a small share of RAM. The OOM "
       "killer or heavy swapping follows; pinned-memory allocations for GPUs fail.",
       {"Find the largest processes: `ps aux --sort=-rss | head`.",
        "Lower data-loader workers or prefetch depth; check for a memory leak in the job.",
        "Check /dev/shm usage: `df -h /dev/shm` (shared memory of loaders counts as RAM)."},
       {{"warn_available_pct", 10, "MemAvailable as a share of MemTotal"},
        {"crit_available_pct", 5, "MemAvailable share at which the OOM killer is near"}}},
      {"host.swap.active",
       Layer::kResources,
       Severity::kCrit,
       Action::kWatch,
       "Host is actively swapping",
       "Pages are moving to and from swap during the sampling window. Every swapped page a job "
       "touches costs milliseconds: throughput collapses.",
       {"Find who is swapped out: `grep VmSwap /proc/*/status | sort -k2 -n | tail`.",
        "Reduce memory use or add RAM; consider `vm.swappiness=10` on GPU servers.",
        "Check `host.memory.low` at the same time: swapping usually follows low memory."},
       {{"warn_pages_per_s", 100, "pages swapped in + out per second"},
        {"crit_pages_per_s", 2000, "swap traffic that makes the host unresponsive"}}},
      {"host.pressure.cpu",
       Layer::kResources,
       Severity::kCrit,
       Action::kWatch,
       "CPU pressure (PSI)",
       "Pressure stall information: the share of the last 10 s in which runnable tasks waited "
       "for a CPU.",
       {"Find CPU hogs: `top`; check cgroup CPU limits of the job (`cpu.max`)."},
       {{"warn_some_avg10_pct", 30, "some avg10: share of time at least one task waited"},
        {"crit_some_avg10_pct", 70, "some avg10 at which the host is CPU-starved"}}},
      {"host.pressure.memory",
       Layer::kResources,
       Severity::kCrit,
       Action::kWatch,
       "Memory pressure (PSI)",
       "Pressure stall information: the share of the last 10 s in which tasks stalled on memory "
       "(reclaim, swap-in, refaults). `full` means all non-idle tasks stalled at once.",
       {"Free memory: see `host.memory.low`; check the job's cgroup `memory.max`.",
        "Look at `memory.events` of the job's cgroup for oom and high events."},
       {{"warn_some_avg10_pct", 10, "some avg10: share of time a task stalled on memory"},
        {"crit_full_avg10_pct", 10, "full avg10: share of time every task stalled on memory"}}},
      {"host.pressure.io",
       Layer::kResources,
       Severity::kCrit,
       Action::kWatch,
       "I/O pressure (PSI)",
       "Pressure stall information: the share of the last 10 s in which tasks stalled on I/O.",
       {"See `iostat -x 1 5` for the busy device and `iotop -o` for the process.",
        "Move hot data to local NVMe; check network storage latency."},
       {{"warn_some_avg10_pct", 30, "some avg10: share of time a task waited for I/O"},
        {"crit_full_avg10_pct", 20, "full avg10: share of time every task waited for I/O"}}},
      {"host.disk.full",
       Layer::kResources,
       Severity::kCrit,
       Action::kFixConfig,
       "Filesystem nearly full",
       "A real (non-pseudo) filesystem is nearly full. Checkpoints fail to write, logs stop, "
       "container images cannot be pulled.",
       {"Find what is large: `du -xh --max-depth=2 MOUNT | sort -h | tail`.",
        "Delete old checkpoints, caches (`~/.cache/huggingface`, pip, docker images: `docker "
        "system df`).",
        "Check for deleted-but-open files: `lsof +L1`."},
       {{"warn_used_pct", 90, "used share of the space available to users"},
        {"crit_used_pct", 97, "used share at which writes are about to fail"}}},
      {"host.disk.inodes",
       Layer::kResources,
       Severity::kCrit,
       Action::kFixConfig,
       "Filesystem out of inodes",
       "The filesystem is running out of inodes: new files cannot be created although space is "
       "left (many small files: datasets unpacked into single files, caches).",
       {"Find directories with many files: `du --inodes -x MOUNT | sort -n | tail`.",
        "Pack small files into archives or shards (tar, webdataset, parquet)."},
       {{"warn_used_pct", 90, "used share of inodes"},
        {"crit_used_pct", 97, "used share of inodes at which file creation fails"}}},
      {"host.disk.unresponsive",
       Layer::kResources,
       Severity::kWarn,
       Action::kWatch,
       "Filesystem does not answer",
       "statvfs(2) of a mounted filesystem did not return within the probe's timeout. This is "
       "almost always a network filesystem (NFS, CIFS, Lustre) whose server is gone, or a FUSE "
       "daemon that died: every process that touches the mount hangs in D state, including "
       "`df` and data loaders reading from it.",
       {"Check the server of the mount: `mount | grep MOUNT`, `showmount -e SERVER`, `ping "
        "SERVER`.",
        "Look for tasks stuck on it: `ps -eo state,pid,wchan:32,comm | grep ^D`.",
        "If the server is gone for good, detach it lazily: `umount -l MOUNT` (or `umount -f` "
        "for NFS)."},
       {}},
      {"host.mount.missing",
       Layer::kResources,
       Severity::kCrit,
       Action::kReboot,
       "Required filesystem not mounted",
       "A mount point listed in `[node] required_mounts` is not in the mount table. Jobs that "
       "read their data or write checkpoints there fail, or worse, write into the empty "
       "directory on the root filesystem and fill it. Slurm drains the node (the action takes it "
       "out of service) until the mount is back, as NHC's check_fs_mount does.",
       {"See what the host expects and has: `findmnt MOUNT`, `grep MOUNT /etc/fstab`, "
        "`systemctl status $(systemd-escape -p --suffix=mount MOUNT)`.",
        "Mount it (`mount MOUNT` or `mount -a`); a network filesystem needs its server: "
        "`showmount -e SERVER`, `ping SERVER`.",
        "If it will not mount, reboot the node; it comes back into service at the next check "
        "that finds the mount."},
       {}},
      {"proc.dstate",
       Layer::kSoftware,
       Severity::kCrit,
       Action::kWatch,
       "Processes stuck in uninterruptible sleep",
       "Tasks are in state D (uninterruptible sleep) and did not get the CPU at all between two "
       "samples (a task cycling through short D sleeps, as in disk I/O, is not stuck); how long "
       "each has not run is read from the clock of the CPU it last ran on. They cannot be killed; "
       "when an NVIDIA tool (nvidia-smi, nvidia-persistenced, nv-hostengine, dcgm) is among them, "
       "the driver is hung: this is the classic \"nvidia-smi hangs\" symptom, often with Xid "
       "119/120 (GSP timeout) in the kernel log.",
       {"Look at where they wait: `cat /proc/PID/wchan` and, as root, `cat /proc/PID/stack`.",
        "Do not run more nvidia-smi calls: each one joins the queue of stuck tasks.",
        "If an NVIDIA tool is stuck: drain the node (Slurm: `scontrol update nodename=$(hostname) "
        "state=drain reason=gpu-hang`) and reboot; a GPU reset rarely works in this state.",
        "If the tasks wait on NFS or another network filesystem (wchan rpc_/nfs_), check the "
        "storage server instead."},
       {{"min_stuck_s", 10, "a task must be in D without running at least this long to count"},
        {"crit_count", 10, "this many stuck tasks is critical even without an NVIDIA tool"}}},
      {"proc.zombies",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kRestartApp,
       "Zombie process flood",
       "Many processes have exited but were not reaped by their parent. They hold pids (and "
       "sometimes GPU contexts until the parent reaps them).",
       {"Find the parent: `ps -eo ppid,stat | awk '$2 ~ /Z/ {print $1}' | sort | uniq -c`.",
        "Restart or fix the parent process (often a launcher or a container init missing)."},
       {{"warn_count", 200, "zombie processes on the host"}}},
      {"gpudoctor.probe.failed",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kWatch,
       "A probe could not measure",
       "A gpudoctor probe failed: the files or interfaces it reads exist but could not be read "
       "or made no sense (unreadable /proc files, a procfs path that is wrong, garbled content). "
       "What it would have checked is unknown, so a healthy verdict would be misleading. (Data "
       "that is simply absent, such as PSI on old kernels or InfiniBand on hosts without it, "
       "makes a probe `skipped`, not failed.)",
       {"Read the reason in the finding; check --path.procfs/--path.sysfs/--path.rootfs when "
        "running in a container (mount the host's /proc and /sys and point the flags at them).",
        "Run as root if the reason is a permission error."},
       {},
       {.pace = Pace::kSustained}},
      {"gpudoctor.probe.timeout",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kWatch,
       "A probe did not finish",
       "A gpudoctor probe was abandoned at its deadline. The files or calls it makes are "
       "blocking: on a healthy host they answer in microseconds, so this is itself a symptom "
       "(a hung driver, a stuck filesystem, a task holding kernel locks).",
       {"Run `gpudoctor check --json` and look at the probe list for which probe timed out.",
        "Check `proc.dstate` findings and the kernel log (`dmesg | tail -50`) for hung tasks."},
       {},
       {.pace = Pace::kSustained}},
      {"gpudoctor.history.degraded",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kFixConfig,
       "gpudoctor is not recording history",
       "`gpudoctor watch` cannot open or write its history database; the error names the cause "
       "(another process holds a lock on it, the disk is full, an I/O error, the path was "
       "replaced by a file that is not a gpudoctor database). The daemon keeps judging and "
       "serving; ticks are not recorded until the cause clears, and it retries by itself. (A "
       "full filesystem is reported separately as host.disk.full, from statvfs.)",
       {"Read the error in the finding; `journalctl -u gpudoctor` has the same line.",
        "Locked: find the holder with `fuser -v DB` (a backup tool or an `sqlite3` shell) and "
        "end it.",
        "Disk full: free space on the filesystem of the database (see host.disk.full)."},
       {}},
      {"gpudoctor.history.replaced",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kWatch,
       "History database deleted or replaced",
       "The history database file was deleted or replaced while `gpudoctor watch` ran (a "
       "cleanup script, a restore, a manual `rm`). The daemon noticed (the file's device and "
       "inode changed), stopped writing into the old file and opened the one now at the path; "
       "history before that is not in the new file.",
       {"Find what removed it (cron jobs, configuration management, tmpfiles rules).",
        "A restored copy is adopted as is; a foreign file at the path is never written "
        "(gpudoctor.history.degraded says so)."},
       {}},
      {"gpudoctor.clock.step",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kWatch,
       "Wall clock stepped",
       "The system's wall clock jumped against the monotonic clock between two ticks (NTP or "
       "an operator set it, a VM resumed). gpudoctor's history keeps every sample (none is "
       "replaced), retention does not age data by the jump, and finding timers run on the "
       "monotonic clock; but timestamps around the step are off by its size.",
       {"Check time synchronisation: `timedatectl status`, `chronyc tracking`.",
        "Frequent steps: fix the time source (a reachable NTP server, the VM's clock)."},
       {}},
  };
  return entries;
}

}  // namespace gpudoctor
