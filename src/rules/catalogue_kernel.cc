// Catalogue section: kernel-log findings. `gpu.lost` is emitted by the kernel rules as
// well but its entry belongs to the GPU layer's section (NVML GPU_IS_LOST is the other source).
#include "rules/catalogue.h"

namespace gpudoctor {

const std::vector<CatalogueEntry>& KernelCatalogue() {
  static const std::vector<CatalogueEntry> entries = {
      {"gpu.xid",
       Layer::kHardware,
       Severity::kCrit,
       Action::kRestartApp,
       "NVIDIA Xid error in the kernel log",
       "The NVIDIA driver logged an Xid: a GPU error event with a numeric code (`NVRM: Xid "
       "(PCI:...): N, ...`). One finding per GPU and code, with the count, first and last time and "
       "one sample line. The code decides what it means: application faults (13, 31, 43), memory "
       "errors (48, 63, 64, 94, 95), a GPU gone from the bus (79), firmware/GSP timeouts (119, "
       "120), NVLink errors (74, 144-150). Severity comes from gpudoctor's Xid table (`gpudoctor "
       "explain xid N`); the same Xid from several processes raises it one step (up to warn "
       "while its action keeps the node in service). The action follows NVIDIA's Xid catalog "
       "bucket for the code, read from the line where the catalog makes it conditional (94/95 "
       "RST/D-RST tails, 154's recovery action, 144-150 Fatal/Nonfatal). NVML cannot "
       "report Xid 79/119/120, so the kernel log is the only source for them.",
       {"Read what the code means and its action: `gpudoctor explain xid N`.",
        "Look at the lines around the first occurrence: `dmesg -T | grep -n -A3 -B10 'Xid'`.",
        "`several processes`: Several processes or jobs hitting the same Xid on one GPU point at "
        "the GPU: drain it and "
        "run `dcgmi diag -r 3`.",
        "`memory Xid`: Memory Xids (48, 94, 95, 63, 64): check `nvidia-smi -q -d ECC,ROW_REMAPPER` "
        "and reset "
        "the GPU when it is idle."},
       {{"escalate_distinct_processes", 2,
         "an Xid seen from this many distinct processes is raised one severity step"}},
       {.reboot_fixable = true, .latched = true, .cleared_by_driver_reload = true}},
      {"pcie.aer",
       Layer::kHardware,
       Severity::kCrit,
       Action::kInspectHardware,
       "PCIe AER errors in the kernel log",
       "The PCIe Advanced Error Reporting driver logged errors for a device. Corrected errors "
       "(RxErr, BadTLP, BadDLLP, Replay) are retried by the link and cost bandwidth; many of them "
       "mean a marginal link (riser, slot, cable, retimer). Uncorrectable errors (non-fatal or "
       "fatal) make the kernel recover or reset the link and often come before a GPU falls off "
       "the bus (Xid 79). Vendor 10de is an NVIDIA GPU or NVSwitch.",
       {"See the per-device counters: `grep . /sys/bus/pci/devices/BDF/aer_dev_*`.",
        "Compare the link state with its maximum: `lspci -vvv -s BDF | grep -E 'LnkCap|LnkSta'`.",
        "Reseat the card/riser or move it to another slot; check the PCIe retimer/switch "
        "firmware.",
        "Fatal errors on a GPU: drain the node and power-cycle it; repeated → RMA the part.",
        kPhysicalChecklistStep, kSwapTestStep},
       {{"warn_corrected_count", 10,
         "corrected errors of one device in the scanned log before it is a warning"}},
       {.reboot_fixable = true, .latched = true, .fleet_class = FleetClass::kNvlinkPcie}},
      {"nvswitch.sxid",
       Layer::kHardware,
       Severity::kCrit,
       Action::kReboot,
       "NVSwitch reported an error (SXid)",
       "On HGX/DGX systems the NVSwitch driver logs fabric errors as SXids (`nvidia-nvswitchN: "
       "SXid (PCI:BDF): CODE, Fatal|Non-fatal, Link N ...`, then `Severity 0|1` and `Data` "
       "lines). A fatal SXid leaves the switch or its port needing a reset: the GPUs behind it "
       "lose NVLink (they often log Xid 74, 45 or 79) until the fabric is reset by a node reboot. "
       "Non-fatal SXids (link-level or single-bit ECC) are corrected and the fabric keeps "
       "working; 11004, 12028 and 19084 stall NVLink traffic while they last.",
       {"Fatal: drain the node and reboot it (it resets the whole fabric); check that Fabric "
        "Manager is running after the boot: `systemctl status nvidia-fabricmanager`.",
        "The same fatal SXid after two reboots: hardware inspection of the baseboard (the "
        "switch, its links, the GPU on that link); attach nvidia-bug-report.sh.",
        "Non-fatal: watch how often it comes back (`dmesg -T | grep SXid`); many on one link "
        "point at that link's GPU or cable; jobs failing with Xid 45 at the same time → reboot."},
       {},
       {.reboot_fixable = true, .latched = true, .fleet_class = FleetClass::kNvlinkPcie}},
      {"kernel.hung_task",
       Layer::kSoftware,
       Severity::kCrit,
       Action::kReboot,
       "Kernel reported a hung task",
       "The kernel's hung-task detector found a task in uninterruptible sleep (D state) for more "
       "than hung_task_timeout_secs (`INFO: task NAME:PID blocked for more than N seconds`). "
       "When the task is an NVIDIA tool (nvidia-smi, nvidia-persistenced, nv-hostengine) or its "
       "stack is in the nvidia modules, the GPU driver is hung, usually after a GSP timeout "
       "(Xid 119) or a lost GPU; a GPU reset rarely works then. After 10 reports the kernel stays "
       "silent (hung_task_warnings), so later hangs are not logged.",
       {"See the task's stack trace after the INFO line: `dmesg -T | grep -A30 'blocked for "
        "more'`.",
        "NVIDIA task or nvidia frames: drain the node and reboot it; do not start more "
        "nvidia-smi calls.",
        "Tasks waiting on NFS or other network filesystems: check the storage server."},
       {{"crit_reports", 3, "hung-task reports for one task name that make it critical"}},
       {.reboot_fixable = true}},
      {"kernel.cpu_stall",
       Layer::kSoftware,
       Severity::kCrit,
       Action::kReboot,
       "Kernel reported a stuck CPU (soft lockup, RCU stall)",
       "The kernel's watchdogs found a CPU that did not schedule for many seconds: `BUG: soft "
       "lockup - CPU#N stuck for Ns! [task:pid]`, `Watchdog detected hard LOCKUP on cpu N`, or an "
       "RCU stall (`rcu: INFO: rcu_sched self-detected stall on CPU`). When the stuck task is the "
       "NVIDIA driver's (its interrupt thread `irq/N-nvidia`, `nvidia-modeset`) or the stack "
       "after the report is in the nvidia modules, the driver is spinning and the node does not "
       "recover by itself; a hard lockup means the CPU stopped taking interrupts. Other soft "
       "lockups and RCU stalls are a CPU held for seconds (storage, memory pressure, a busy "
       "hypervisor): jobs on the node stall with it.",
       {"Read the report and the stack after it: `dmesg -T | grep -A40 -E 'soft lockup|hard "
        "LOCKUP|detected stall'`.",
        "NVIDIA driver involved or a hard lockup: drain the node and reboot it; if it recurs, "
        "update the driver or report it to NVIDIA with nvidia-bug-report.sh.",
        "Other tasks: find the module in the RIP line; on a VM compare with the host's steal "
        "time (`top`: st); repeated reports → reboot and update the module or kernel."},
       {{"crit_reports", 3,
         "soft lockup or RCU stall reports of one kind in the scanned log that make it critical "
         "(the NVIDIA driver's and hard lockups are critical at once)"}},
       {.reboot_fixable = true}},
      {"host.oom",
       Layer::kResources,
       Severity::kCrit,
       Action::kRestartApp,
       "OOM killer killed a process",
       "The kernel's out-of-memory killer killed a process (`Out of memory: Killed process PID "
       "(NAME) ... anon-rss:...`). `Memory cgroup out of memory` means the job hit its own "
       "memory limit (container, Slurm cgroup) rather than the whole host running out.",
       {"Check what used the memory: the anon-rss in the evidence is the victim's resident size.",
        "Cgroup kills: raise the job's memory limit or reduce data-loader workers / prefetching.",
        "Host kills: find the largest processes (`ps aux --sort=-rss | head`) and check "
        "`host.memory.low`."},
       {{"crit_kills", 3, "kills of one process name that make it critical (host OOM)"}}},
      {"hardware.mce",
       Layer::kHardware,
       Severity::kCrit,
       Action::kInspectHardware,
       "Machine check / hardware error events",
       "The CPU reported machine check events (`mce: [Hardware Error]`) or the platform firmware "
       "reported hardware errors (APEI GHES). Corrected events are memory/cache/bus errors the "
       "hardware fixed; an uncorrected Machine Check Exception usually crashes the host.",
       {"Decode the records: `mcelog --client` or `ras-mc-ctl --errors`; check `edac-util -v`.",
        "Repeated corrected memory errors on one DIMM: schedule its replacement.",
        "Uncorrected or fatal events: drain the node and have the hardware inspected."},
       {{"crit_events", 50, "machine check records in the scanned log that make it critical"}},
       {.latched = true, .fleet_class = FleetClass::kHost}},
      {"net.link",
       Layer::kNetwork,
       Severity::kCrit,
       Action::kContactProvider,
       "NIC link flapping or transmit timeouts",
       "A network interface lost its link or stalled. Two sources report it: the kernel log (NIC "
       "drivers' `Link down`/`NIC Link is Down`, RDMA port state changes, and `NETDEV WATCHDOG: "
       "... transmit queue N timed out`, after which the driver resets the NIC) and the NIC "
       "probe's sysfs counters (`carrier_changes`, InfiniBand `link_downed`). Flapping links are "
       "usually a cable, transceiver (AOC) or switch port; they stall NCCL collectives. A port "
       "that "
       "is up with no link and never had one since boot (a spare port without cable) is only info; "
       "links coming up are not reported.",
       {"Check the cable/transceiver: `ethtool -m IFACE` (optics), `ethtool IFACE` (speed).",
        "Look at the switch port's error counters and logs for the same time.",
        "InfiniBand/RoCE: `ibstat`, `perfquery -x` for link_downed and symbol errors.",
        "Transmit timeouts: update NIC firmware/driver; note the queue and time in the log."},
       {{"warn_down_events", 2, "link-down events of one interface (kernel log)"},
        {"crit_down_events", 10, "link-down events of one interface that make it critical"},
        {"crit_tx_timeouts", 3, "NETDEV WATCHDOG transmit timeouts that make it critical"},
        {"warn_carrier_changes", 1,
         "carrier changes of one interface during the sampling window (sysfs, NIC probe)"}},
       {.reboot_fixable = true}},
      {"host.thermal",
       Layer::kHardware,
       Severity::kWarn,
       Action::kWatch,
       "CPU thermal throttling",
       "The kernel reported CPU cores or packages above their thermal threshold with the clock "
       "throttled (`CPUn: Core temperature above threshold, cpu clock throttled`). Throttled CPUs "
       "slow data loading and NCCL proxy threads; it also hints at poor airflow that hurts GPUs.",
       {"Read the counters: `grep . /sys/devices/system/cpu/cpu*/thermal_throttle/*`.",
        "Check fans, airflow and inlet temperature (`ipmitool sdr type temperature`)."},
       {{"warn_events", 1, "throttling reports in the scanned log before it is a warning"}},
       {.pace = Pace::kSustained, .fleet_class = FleetClass::kHost}},
      {"driver.init_failed",
       Layer::kSoftware,
       Severity::kCrit,
       Action::kDrainReset,
       "NVIDIA driver failed to initialise a GPU",
       "The NVIDIA kernel module could not initialise a GPU (`NVRM: RmInitAdapter failed! "
       "(0xNN:0xNN:NNNN)`): the GPU is unusable until this is fixed. Common causes: driver and "
       "GSP firmware mismatch, a GPU in a bad state after an error (needs a power cycle), "
       "insufficient power, or an unsupported GPU for this driver branch.",
       {"Read the lines before it: `dmesg -T | grep -B20 RmInitAdapter`.",
        "Reload the driver or reboot; if it persists, power-cycle the node (cold boot).",
        "Check the driver branch supports this GPU and that the firmware files match the module "
        "(`modinfo nvidia | grep version`, /lib/firmware/nvidia)."},
       {},
       {.reboot_fixable = true, .latched = true, .cleared_by_driver_reload = true}},
      {"driver.gsp_timeout",
       Layer::kSoftware,
       Severity::kCrit,
       Action::kDrainReset,
       "NVIDIA GSP firmware stopped answering",
       "The driver timed out waiting for the GPU System Processor firmware (`Timeout waiting for "
       "RPC from GSP`, `Heartbeat timed out`, the `_kgspLogRpcTimeout` GSP Timeout banner) or the "
       "firmware's own watchdog fired (a GSP-CrashCat report whose reason is `GSP task watchdog "
       "timeout`). The GPU usually stays wedged: nvidia-smi hangs in D state, and only a reboot "
       "recovers it. Often logged with Xid 119; some drivers print none.",
       {"Drain the node; avoid further nvidia-smi calls (they queue up in D state).",
        "Reboot the node; if it recurs on this driver, try another driver branch or disable GSP "
        "only where NVIDIA supports it (NVreg_EnableGpuFirmware=0, pre-Blackwell)."},
       {},
       {.reboot_fixable = true, .latched = true, .cleared_by_driver_reload = true}},
      {"gpu.reset_required",
       Layer::kHardware,
       Severity::kCrit,
       Action::kResetGpu,
       "NVIDIA driver says a GPU must be reset",
       "An RM status check in the NVIDIA driver failed with NV_ERR_RESET_REQUIRED (`NVRM: "
       "nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED]`), often "
       "after a GSP allocation failed with status 0x62: the GPU is in a state only a reset clears, "
       "and every new CUDA context on it fails until then. Some drivers log no Xid for it; where "
       "an Xid 154 (GPU recovery action) is in the log, that finding says the same and this one "
       "is not raised. The line names the GPU by the driver's own numbering (`GPU0`) or not at "
       "all, rarely by bus id.",
       {"Find the GPU: `nvidia-smi -q | grep -iE 'Bus Id|Recovery Action|Reset Status'` (the "
        "one asking for a reset), and the lines before it: `dmesg -T | grep -B5 "
        "RESET_REQUIRED`.",
        "Stop its workloads, then reset it: `nvidia-smi -r -i N`; if that is refused or it comes "
        "back, drain the node and reboot.",
        "If it recurs on this driver, collect `nvidia-bug-report.sh` and check the driver "
        "branch's release notes."},
       {},
       {.reboot_fixable = true, .latched = true, .cleared_by_driver_reload = true}},
      {"driver.reloaded",
       Layer::kSoftware,
       Severity::kInfo,
       Action::kNone,
       "NVIDIA driver reloaded after GPU errors",
       "The kernel log shows the NVIDIA kernel module loaded again (`NVRM: loading NVIDIA UNIX "
       "... Kernel Module`) after GPU driver events of this boot (Xids, a lost GPU, GSP timeouts, "
       "failed inits, a library/module mismatch). Unloading and reloading the module is the usual "
       "way a GPU is reset, so those earlier events are history: they no longer count as current "
       "findings, and `watch` resolves their open episodes (`cleared_by_driver_reload`). What the "
       "GPUs say now (NVML, the PCI bus) is judged as usual; an error that comes back after the "
       "reload is a new finding.",
       {"Confirm the GPUs answer: `nvidia-smi`, and that the job runs again.",
        "If the same error returns after the reload, the reset did not help: drain and reboot, "
        "then follow that finding's steps."},
       {},
       {.reboot_fixable = true}},
      {"gpudoctor.kmsg.partial",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kNone,
       "Saved kernel log not read to its end",
       "Reading the saved kernel log (`--kmsg-file`, `gpudoctor logs`) stopped at the deadline "
       "before the end of the input (a very large file, a slow disk, or a pipe/FIFO that never "
       "ends). Findings cover only the part that was read, so a clean result says nothing about "
       "the rest.",
       {"Give the scan more time (`--deadline 60`) or cut the log first: `journalctl -k -b "
        "--since -2h > k.log`.",
        "Pipes and FIFOs must end: use `journalctl -k -b` (no `-f`), not `dmesg -w`."},
       {}},
      {"gpudoctor.kmsg.since_unapplied",
       Layer::kSoftware,
       Severity::kInfo,
       Action::kNone,
       "--since could not filter lines without a wall-clock time",
       "`--since` drops lines older than a time, but some lines carry only seconds since boot "
       "(plain `dmesg`, a raw /dev/kmsg dump) and the boot time of that log is unknown. Those "
       "lines were kept, so findings may include events older than asked.",
       {"Save the log with wall-clock times: `dmesg -T`, `journalctl -k -o short-iso`.",
        "Or keep only the last boot with `--current-boot` instead of `--since`."},
       {}},
  };
  return entries;
}

}  // namespace gpudoctor
