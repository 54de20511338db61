// Catalogue section: GPUs and the NVIDIA driver (issue: GPU layer). Thresholds from
// ../shared/reference/signals.md (DCGM health limits, per-generation PCIe replay rates).
#include "rules/catalogue.h"

namespace gpudoctor {

const std::vector<CatalogueEntry>& GpuCatalogue() {
  static const std::vector<CatalogueEntry> entries = {
      {"gpu.none",
       Layer::kHardware,
       Severity::kInfo,
       Action::kNone,
       "No NVIDIA GPU or driver found",
       "No NVIDIA driver library (libnvidia-ml) could be loaded and no NVIDIA GPU is visible on "
       "the PCI bus. On a GPU server this means the cards or the driver are not there at all; on "
       "other hosts it is simply the normal state. The other layers are still diagnosed.",
       {"If this host should have GPUs: `lspci -d 10de:` lists NVIDIA devices on the bus.",
        "Install the NVIDIA driver matching your CUDA stack, or pass `--nvml-lib PATH` when the "
        "library lives somewhere unusual."},
       {}},
      {"driver.not_loaded",
       Layer::kSoftware,
       Severity::kCrit,
       Action::kFixConfig,
       "NVIDIA driver not loaded",
       "NVIDIA GPUs are on the PCI bus but the driver is not usable: the NVML library is missing "
       "or reports that the kernel module is not loaded. No CUDA program can run.",
       {"Check the module: `lsmod | grep nvidia`; load it: `modprobe nvidia` and read `dmesg | "
        "grep -i nvrm` for why it failed.",
        "After a kernel update, rebuild the module (DKMS: `dkms status`, `dkms autoinstall`).",
        "Check Secure Boot: an unsigned module is refused (`mokutil --sb-state`)."},
       {},
       {.reboot_fixable = true}},
      {"driver.mismatch",
       Layer::kSoftware,
       Severity::kCrit,
       Action::kReboot,
       "Driver library and kernel module versions differ",
       "NVML returned LIB_RM_VERSION_MISMATCH: the user-space driver libraries and the loaded "
       "kernel module come from different driver versions, typically after a driver upgrade "
       "without a reboot or module reload. CUDA programs fail to start. The kernel log says the "
       "same with both versions (`NVRM: API mismatch: the client has the version X, but this "
       "kernel module has the version Y`), also when NVML cannot be asked.",
       {"Reboot, or unload and reload the modules: stop GPU users, then `rmmod nvidia_uvm "
        "nvidia_drm nvidia_modeset nvidia && modprobe nvidia`.",
        "Make sure only one driver version is installed (`dpkg -l | grep nvidia-driver` or `rpm "
        "-qa | grep nvidia`); containers must not ship their own driver libraries."},
       {},
       {.reboot_fixable = true}},
      {"driver.no_permission",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kFixConfig,
       "No permission to use the NVIDIA driver",
       "NVML refused access (NO_PERMISSION or OPERATING_SYSTEM): the /dev/nvidia* device nodes "
       "are not accessible to this user, or a container/cgroup blocks them.",
       {"Check `ls -l /dev/nvidia*` and the user's groups; run gpudoctor as root to compare.",
        "In containers use the NVIDIA container toolkit (`--gpus all`) so the devices are "
        "exposed."},
       {},
       {.reboot_fixable = true}},
      {"driver.nvml_init_failed",
       Layer::kSoftware,
       Severity::kCrit,
       Action::kReboot,
       "NVML could not be initialised",
       "The NVIDIA management library loaded but failed to initialise or enumerate GPUs, or it "
       "lacks functions every supported driver has. Monitoring and most tools (nvidia-smi, DCGM) "
       "will fail the same way.",
       {"Run `nvidia-smi` and read its error; check `dmesg | grep -i nvrm` for driver errors.",
        "Reinstall the driver if the library is damaged or far older than the kernel module."},
       {},
       {.reboot_fixable = true}},
      {"driver.nvml_hang",
       Layer::kSoftware,
       Severity::kCrit,
       Action::kDrainReset,
       "NVML call hung",
       "An NVML call did not return within the deadline and was abandoned: the classic "
       "\"nvidia-smi hangs\" case. The driver is stuck on this GPU (often GSP timeouts, Xid "
       "119/120, or a GPU that stopped responding); every tool that touches it will hang too.",
       {"Do not start more nvidia-smi or monitoring calls: they queue up in D state.",
        "Look for Xid 79/119/120 in the kernel log: `dmesg | grep -i xid`.",
        "Drain the node and try a GPU reset (`nvidia-smi -r -i N`); usually only a reboot helps.",
        "If it recurs on the same GPU after reboots, reseat or replace that card."},
       {},
       {.reboot_fixable = true}},
      {"gpu.not_in_container",
       Layer::kHardware,
       Severity::kInfo,
       Action::kFixConfig,
       "GPU on the bus but hidden from this container",
       "The card is on the PCI bus (sysfs is not namespaced, so a container sees every card of "
       "the node) but neither NVML nor /proc/driver/nvidia/gpus lists it: the NVIDIA container "
       "toolkit exposes only the GPUs given to this container. Normal for a pod or container "
       "with fewer GPUs than the node.",
       {"Nothing to do if this container was given fewer GPUs on purpose "
        "(NVIDIA_VISIBLE_DEVICES, `--gpus`, the pod's nvidia.com/gpu limit).",
        "To judge the whole node, run gpudoctor on the host (or in a privileged container with "
        "all GPUs)."},
       {}},
      {"gpu.nvml_error",
       Layer::kHardware,
       Severity::kCrit,
       Action::kDrainReset,
       "The driver refuses the GPU",
       "NVML answered a call on this GPU with an error that is a fault in its own right "
       "(nvml.md §4.1): INSUFFICIENT_POWER (8, auxiliary power missing), IRQ_ISSUE (11, "
       "interrupts not delivered), CORRUPTED_INFOROM (14), RESET_REQUIRED (16), or any error "
       "from the handle lookup itself, which leaves the GPU unusable for every tool and CUDA "
       "program. The evidence names the call and the NVML return code; the first next step is "
       "specific to that code.",
       {"Run `nvidia-smi -q -i N` and read `dmesg | grep -i nvrm` for the driver's view of it.",
        "If the error persists after a reset or reboot, drain the node and replace the card "
        "(by serial)."},
       {},
       {.reboot_fixable = true}},
      {"gpu.readings_failed",
       Layer::kHardware,
       Severity::kCrit,
       Action::kDrainReset,
       "GPU readings fail",
       "NVML answers the GPU's readings (temperature, power, utilisation, memory, clocks, "
       "counters) with an error: what `nvidia-smi` shows as `ERR!`. NVML_ERROR_UNKNOWN usually "
       "means the driver lost contact with part of the GPU; RESET_REQUIRED (\"GPU requires "
       "reset\") that the GPU must be reset before it is usable again; a call that answered "
       "before and now says NOT_SUPPORTED that the GPU's state changed under the driver. The "
       "values it did return cannot be trusted, so the GPU is never reported as ok. The evidence "
       "names each failing call with its NVML error. The action is reset_gpu when every failing "
       "call asks for a reset, drain_reset otherwise.",
       {"Look for the cause in the kernel log: `dmesg | grep -iE 'nvrm|xid'` (an Xid right "
        "before the errors names it).",
        "Drain the GPU's jobs and reset it (`nvidia-smi -r -i N`) or reboot; if the readings "
        "fail again, take the node out and test or replace the card (by serial)."},
       {}},
      {"driver.persistence_off",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kFixConfig,
       "Persistence mode off",
       "Without persistence the driver tears GPU state down when the last client exits and "
       "re-initialises it (with ECC scrubbing, 1-3 s per GPU) on the next use: nvidia-smi and the "
       "first CUDA call of every job are slow, and volatile ECC counters reset between clients.",
       {"Enable the persistence daemon: `systemctl enable --now nvidia-persistenced`.",
        "Or the legacy setting: `nvidia-smi -pm 1` (lost at reboot)."},
       {},
       {.reboot_fixable = true}},
      {"driver.version",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kFixConfig,
       "Inconsistent driver or firmware versions",
       "Components that should agree report different versions: the NVML library and the driver, "
       "the loaded kernel module and the user-space driver, or GPUs of the same model running "
       "different VBIOS versions. Mixed versions cause subtle failures and make a node behave "
       "unlike its peers.",
       {"Compare `cat /sys/module/nvidia/version` with `nvidia-smi` and reboot after driver "
        "upgrades.",
        "Align VBIOS versions across GPUs of a node with the vendor's firmware update tool."},
       {},
       {.reboot_fixable = true}},
      {"gpu.missing",
       Layer::kHardware,
       Severity::kCrit,
       Action::kDrainReset,
       "GPU on the PCI bus but not visible to the driver",
       "An NVIDIA GPU is present on the PCI bus (sysfs) but NVML does not list it: the driver "
       "failed to initialise it (RmInitAdapter failed, insufficient power, fallen off the bus) or "
       "no driver is bound. Jobs see fewer GPUs than the node should have.",
       {"Read the kernel log for that bus id: `dmesg | grep -i -e nvrm -e BUSID`.",
        kPhysicalChecklistStep, kSwapTestStep},
       {{"expected_count", 0,
         "GPUs this node should have ([gpu] expected_count); fewer on the PCI bus is the "
         "classic card that fell off after a reboot (0: not checked)"}},
       {.reboot_fixable = true}},
      {"gpu.lost",
       Layer::kHardware,
       Severity::kCrit,
       Action::kDrainReset,
       "GPU has fallen off the bus",
       "NVML reports GPU_IS_LOST: the GPU stopped responding on the PCI bus (Xid 79). It cannot "
       "run work until it is reset, usually by a reboot.",
       {"Drain the node; try `nvidia-smi -r -i N`, otherwise reboot.",
        "Check `dmesg` for Xid 79 and PCIe AER errors around the same time.",
        "If it recurs, check power and cooling of that slot.", kPhysicalChecklistStep,
        kSwapTestStep},
       {},
       {.reboot_fixable = true}},
      {"gpu.ecc.dbe",
       Layer::kHardware,
       Severity::kCrit,
       Action::kDrainReset,
       "Uncorrectable (double-bit) ECC errors",
       "The GPU reported uncorrectable memory errors since the driver loaded, or new ones during "
       "the check. Data in GPU memory was corrupted; the affected application has usually been "
       "killed (Xid 48/94/95).",
       {"Drain the node and reset the GPU (`nvidia-smi -r -i N`) so pending retirement or row "
        "remapping takes effect.",
        "Check remapped rows / retired pages after the reset (`nvidia-smi -q -d "
        "ROW_REMAPPER,PAGE_RETIREMENT`).",
        "Run the field diagnostic (`dcgmi diag -r 3`); RMA when errors recur."},
       {{"crit_volatile_count", 1, "uncorrectable errors since the driver loaded"}},
       {.fleet_class = FleetClass::kGpuMemory}},
      {"gpu.ecc.sbe_rate",
       Layer::kHardware,
       Severity::kWarn,
       Action::kWatch,
       "Correctable ECC errors growing",
       "Correctable (single-bit) ECC errors increased during the check. Single corrected errors "
       "are harmless, but a sustained rate precedes page retirement, row remapping and "
       "uncorrectable errors.",
       {"Watch the trend: `nvidia-smi -q -d ECC` a few minutes apart.",
        "Reset the GPU at the next idle point; if the rate persists, run `dcgmi diag -r 3` and "
        "plan a replacement."},
       {{"warn_per_min", 10, "correctable errors per minute over the window (DCGM limit 10)"},
        {"min_new_count", 10,
         "new correctable errors needed within the window before a rate is judged (the window "
         "is short: one error in 0.25 s would read as 240/min)"}},
       {.pace = Pace::kSustained, .fleet_class = FleetClass::kGpuMemory}},
      {"gpu.retired_pages",
       Layer::kHardware,
       Severity::kCrit,
       Action::kDrainReset,
       "Memory pages retired",
       "The driver retired GPU memory pages after ECC errors (pre-Ampere page retirement). A "
       "pending retirement takes effect only after a GPU reset; many retired pages mean the "
       "memory is wearing out (DCGM fails the GPU at 63).",
       {"Reset the GPU at the next idle point when a retirement is pending (`nvidia-smi -r -i N`).",
        "Above the limit: drain the node, run `dcgmi diag -r 3` and RMA the card."},
       {{"warn_count", 10, "retired pages (single- plus double-bit) worth watching"},
        {"crit_count", 63, "retired pages at which DCGM fails the GPU"}},
       {.fleet_class = FleetClass::kGpuMemory}},
      {"gpu.remap.pending",
       Layer::kHardware,
       Severity::kWarn,
       Action::kResetGpu,
       "Row remap pending",
       "A memory row remap (Ampere and later) is waiting for the next GPU reset. Running work is "
       "protected by containment meanwhile, but the spare row is only used after the reset.",
       {"Reset the GPU at the next idle point: drain it, then `nvidia-smi -r -i N` (or reboot)."},
       {},
       {.reboot_fixable = true, .fleet_class = FleetClass::kGpuMemory}},
      {"gpu.remap.failed",
       Layer::kHardware,
       Severity::kCrit,
       Action::kInspectHardware,
       "Row remapping failed",
       "The GPU's row remapper failed (no spare rows left in a bank, or a remapped row failed "
       "again), or uncorrectable remaps reached the limit. This is NVIDIA's RMA criterion once a "
       "field diagnostic confirms it.",
       {"Drain the node and run the field diagnostic (`dcgmi diag -r 3`).",
        "Open an RMA with the serial number shown in the evidence."},
       {{"warn_uncorrectable_rows", 512, "rows remapped for uncorrectable errors (DCGM warns)"}},
       {.fleet_class = FleetClass::kGpuMemory}},
      {"gpu.thermal",
       Layer::kHardware,
       Severity::kCrit,
       Action::kInspectHardware,
       "GPU hot or thermally throttled",
       "The GPU reports thermal slowdown, or its temperature is within a few degrees of the "
       "slowdown threshold. Clocks drop and the GPU becomes the straggler of every collective "
       "job; a hot GPU among cool ones points at its slot, fan or airflow.",
       {"Check cooling: inlet temperature, fans and airflow of the chassis (`ipmitool sdr type "
        "Temperature`), blanking panels and cable clutter.",
        "Compare with the other GPUs: one hot card points at its slot or heatsink; reseat it and "
        "cross-test in another slot.",
        "Check the data-centre side: hot aisle containment, CRAC setpoints.",
        kPhysicalChecklistStep},
       {{"warn_margin_c", 5, "degrees below the slowdown threshold that count as too hot"}},
       {.pace = Pace::kSustained}},
      {"gpu.power.brake",
       Layer::kHardware,
       Severity::kCrit,
       Action::kContactProvider,
       "Power brake slowdown",
       "The GPU's clocks are cut by the external power brake signal (HwPowerBrakeSlowdown): the "
       "power supply or the board's power controller is asking GPUs to draw less.",
       {"Check the PSUs and their redundancy (`ipmitool sdr type 'Power Supply'`), and the rack's "
        "power budget.",
        "Check the BMC event log for power events (`ipmitool sel elist`)."},
       {},
       {.pace = Pace::kSustained}},
      {"gpu.power.cap",
       Layer::kHardware,
       Severity::kInfo,
       Action::kNone,
       "Busy GPU held back by its power cap",
       "The GPU is busy and its clocks are reduced by the software power cap. Normal under heavy "
       "load at the rated limit; worth checking when the enforced limit is below the board's "
       "default (someone ran `nvidia-smi -pl`).",
       {"Compare the enforced and default limits: `nvidia-smi -q -d POWER`.",
        "Reset a lowered limit with `nvidia-smi -pl <default W>` if it was not intended."},
       {{"busy_util_pct", 50, "GPU utilisation from which the GPU counts as busy"},
        {"max_clock_pct", 90, "SM clock below this share of its maximum counts as held back"}},
       {.pace = Pace::kSustained}},
      {"gpu.hw_slowdown",
       Layer::kHardware,
       Severity::kCrit,
       Action::kInspectHardware,
       "Hardware slowdown",
       "The GPU reports HW slowdown (clocks cut by at least half) across the sampling window: "
       "triggered by temperature, the power brake or excessive power draw. It flashes briefly "
       "during clock changes, so it only counts when it persists.",
       {"Check cooling and power (see gpu.thermal and gpu.power.brake).",
        "If it persists on one GPU only, reseat and cross-test the card; replace it when the "
        "slowdown follows the card."},
       {{"busy_util_pct", 50, "utilisation above which the slowdown is critical"}},
       {.pace = Pace::kSustained, .reboot_fixable = true}},
      {"gpu.clocks.low",
       Layer::kHardware,
       Severity::kWarn,
       Action::kWatch,
       "Busy GPU running at low clocks without a reason",
       "The GPU is busy but its SM clock is far below its maximum and the driver reports no "
       "throttle reason. Typical causes: locked clocks (`nvidia-smi -lgc`), application clocks, "
       "or a GPU stuck in a low performance state.",
       {"Check clock locks and application clocks: `nvidia-smi -q -d CLOCK,PERFORMANCE`.",
        "Reset them: `nvidia-smi -rgc` and `nvidia-smi -rac`."},
       {{"busy_util_pct", 50, "GPU utilisation from which the GPU counts as busy"},
        {"low_clock_pct", 50, "SM clock below this share of its maximum is low"}},
       {.pace = Pace::kSustained}},
      {"gpu.pcie.degraded",
       Layer::kHardware,
       Severity::kWarn,
       Action::kInspectHardware,
       "PCIe link degraded",
       "The GPU's PCIe link runs with fewer lanes than it and its slot support (judged always: "
       "lanes are not given up at idle), or at a lower generation while the GPU is busy (idle "
       "GPUs lower their link generation on purpose, so generation is judged only under load). "
       "Host-device copies, GPUDirect RDMA and NCCL across PCIe slow down.",
       {"Check the link: `lspci -vv -s BUS_ID | grep -e LnkCap -e LnkSta`.",
        "Reseat the card and its riser; cross-test it in another slot to tell card from slot.",
        "Check BIOS PCIe settings (forced generation, bifurcation)."},
       {{"busy_util_pct", 50, "GPU utilisation from which the link generation is judged"}},
       {.reboot_fixable = true, .fleet_class = FleetClass::kNvlinkPcie}},
      {"gpu.pcie.replays",
       Layer::kHardware,
       Severity::kWarn,
       Action::kWatch,
       "PCIe replays above the expected rate",
       "The PCIe replay counter grows faster than the bit-error rate of a healthy link allows for "
       "its current generation and width (DCGM's per-generation rule). Replays cost bandwidth "
       "and precede link errors and Xid 79.",
       {"Reseat the card and its riser or cable; check for bent pins and dust.",
        "Cross-test the card in another slot; check AER counters of the upstream port "
        "(`/sys/bus/pci/devices/BDF/aer_dev_correctable`)."},
       {{"errors_per_tbit", 1,
         "bit errors per 10^12 bits on a healthy link; replays/min/lane is that times the line "
         "rate times 60 s"},
        {"min_replays", 10, "replays needed within the window before a rate is judged"}},
       {.pace = Pace::kSustained, .fleet_class = FleetClass::kNvlinkPcie}},
      {"gpu.nvlink.down",
       Layer::kHardware,
       Severity::kCrit,
       Action::kDrainReset,
       "NVLink down",
       "NVLinks of this GPU are inactive while others are up (or while its peers' links are "
       "up). Peer-to-peer traffic falls back to PCIe or fails; NCCL performance collapses.",
       {"Check `nvidia-smi nvlink -s` and the fabric manager (`systemctl status "
        "nvidia-fabricmanager`) on NVSwitch systems.",
        "Reset the GPUs or reboot; if the link stays down, reseat the GPU baseboard or RMA."},
       {},
       {.reboot_fixable = true, .fleet_class = FleetClass::kNvlinkPcie}},
      {"gpu.nvlink.errors",
       Layer::kHardware,
       Severity::kCrit,
       Action::kInspectHardware,
       "NVLink errors growing",
       "NVLink error counters grew during the check: replay or recovery errors (DCGM fails on "
       "any), or CRC errors (a warning; critical at 100 per second). Lifetime totals are not "
       "judged, only growth.",
       {"Check per-link counters: `nvidia-smi nvlink -e -i N`.",
        "Reset the GPU; if errors keep growing on the same link, reseat or RMA the board."},
       {{"crit_crc_per_s", 100, "CRC errors per second that make it critical"}},
       {.pace = Pace::kSustained, .fleet_class = FleetClass::kNvlinkPcie}},
      {"gpu.fan",
       Layer::kHardware,
       Severity::kCrit,
       Action::kInspectHardware,
       "GPU fan problem",
       "The GPU's fan reports 0% while the GPU is hot (a stopped fan), or runs at full speed "
       "while the GPU is still hot (cooling at its limit).",
       {"Inspect the card's fan; clean dust; check the chassis airflow.",
        "Replace the fan or the card if it stays stopped.", kPhysicalChecklistStep},
       {{"hot_temp_c", 70, "GPU temperature above which the fan is judged"},
        {"max_fan_pct", 95, "fan speed counted as full speed"}},
       {.pace = Pace::kSustained}},
      {"gpu.memory.full",
       Layer::kResources,
       Severity::kWarn,
       Action::kFixConfig,
       "GPU memory nearly full",
       "Almost all GPU memory is allocated. New allocations fail with out-of-memory. Caching "
       "allocators (PyTorch, vLLM) and frameworks that preallocate (TensorFlow, JAX) reserve most "
       "memory on purpose, so check the job's own view before acting. For LLM serving, a KV "
       "cache that grows with long prompts ends here: requests queue or are preempted.",
       {"See who holds it: `nvidia-smi --query-compute-apps=pid,used_memory --format=csv`.",
        "Reduce batch size or sequence length; look for leftover processes holding memory.",
        "Preallocation is expected with TensorFlow (`allow_growth`) and JAX "
        "(`XLA_PYTHON_CLIENT_PREALLOCATE=false`); vLLM reserves `gpu_memory_utilization` (0.9 by "
        "default) on purpose.",
        "LLM serving: cap context length and concurrent sequences (`max_model_len`, "
        "`max_num_seqs`) so the KV cache fits."},
       {{"warn_used_pct", 98, "share of GPU memory allocated"}},
       {.fleet_class = FleetClass::kSoftware}},
      {"gpu.util.low",
       Layer::kResources,
       Severity::kInfo,
       Action::kWatch,
       "Processes attached but GPU idle",
       "Processes hold this GPU but it is nearly idle: the job may be waiting for input (data "
       "loading, CPU), for other ranks (a hung collective), or be an idle notebook.",
       {"Check the job: `py-spy dump --pid PID` for Python, or its logs for a hung collective.",
        "Check CPU and I/O findings of this report: input pipelines starve GPUs."},
       {{"max_util_pct", 10, "utilisation at or below which an occupied GPU counts as idle"}},
       {.fleet_class = FleetClass::kSoftware}},
      {"gpu.util.imbalance",
       Layer::kResources,
       Severity::kWarn,
       Action::kWatch,
       "GPU load imbalanced on the node",
       "Some GPUs of this node are saturated while others are idle. When the idle ones hold "
       "processes of the same job, a rank is stuck or the work is badly partitioned.",
       {"Check which processes run where: `nvidia-smi --query-compute-apps=pid,gpu_uuid "
        "--format=csv`.",
        "For distributed jobs, look for the straggler rank (NCCL_DEBUG=INFO, py-spy dump)."},
       {{"busy_util_pct", 90, "utilisation counted as saturated"},
        {"idle_util_pct", 10, "utilisation counted as idle"}},
       {.fleet_class = FleetClass::kSoftware}},
      // The utilisation pattern of static batching, seen in watch history.
      {"gpu.util.sawtooth",
       Layer::kResources,
       Severity::kInfo,
       Action::kFixConfig,
       "GPU busy/idle saw-tooth (static batching)",
       "Under watch, this GPU's utilisation alternates between busy and idle in cycles: the "
       "pattern of a server that batches requests statically (waits to fill a batch, then runs "
       "it to the longest request's end). Continuous, iteration-level batching with a paged KV "
       "cache keeps the GPU busy instead and cuts latency.",
       {"Explore it with your numbers: `gpudoctor plan batching --model MODEL --gpu-mem SIZE "
        "--rate R` (static against continuous batching).",
        "Use a server with continuous batching (vLLM, TGI, SGLang, TensorRT-LLM in-flight "
        "batching) or lower its batch wait time."},
       {},
       {.fleet_class = FleetClass::kSoftware}},
      // Windowed (watch): the mean over minutes, not one tick. An idle GPU is gpu.util.low's
      // fact and a busy/idle saw-tooth gpu.util.sawtooth's; this is the partly busy GPU between.
      {"gpu.util.underused",
       Layer::kResources,
       Severity::kInfo,
       Action::kWatch,
       "GPU under-used by its job (busy ~30%)",
       "Under watch, a job has held this GPU for the whole window but kept it busy only part of "
       "the time on average (above gpu.util.low's idle threshold, below max_mean_util_pct): the "
       "GPU waits for something else. The finding names the likely limiter from the same window, "
       "with its figures: the input pipeline (host CPU saturated or iowait high: data loading "
       "and preprocessing cannot keep up), host-to-GPU transfers (PCIe RX high against the "
       "link), collectives (the busiest NIC or InfiniBand port loaded: ranks wait on each other; "
       "NVLink throughput is not read), or scheduling (an inference server with requests waiting "
       "while the GPU idles); \"unknown\" when none stands out (small batches, Python overhead, "
       "synchronisation in the job itself). One finding per fact: an idle occupied GPU is "
       "gpu.util.low, a static-batching saw-tooth gpu.util.sawtooth, and neither is repeated "
       "here.",
       {"`input`: give the input pipeline more: more data-loader workers (`num_workers`), "
        "`pin_memory=True`, prefetching, decoding on the GPU (DALI), data on local NVMe instead "
        "of a network share; check `top` for the loader processes.",
        "`transfers`: keep data on the GPU between steps, use pinned memory and non-blocking "
        "copies, overlap copies with compute (CUDA streams); check the link with "
        "`nvidia-smi dmon -s t` and gpu.pcie.degraded.",
        "`collectives`: check NCCL's transport (`NCCL_DEBUG=INFO`: IB/RoCE, not sockets), "
        "overlap communication with compute (gradient bucketing), and the fabric "
        "(`gpudoctor netcheck`, net.* findings).",
        "`scheduling`: the server queues requests while the GPU idles: raise the batch limits "
        "(`max_num_seqs`, `max_num_batched_tokens`) or use continuous batching; compare with "
        "`gpudoctor plan batching`.",
        "`unknown`: profile a few steps (`nsys profile`, PyTorch profiler) to see where the "
        "step's time goes; a larger batch often raises utilisation.",
        "See it over time: `gpudoctor history --metric gpudoctor_gpu_utilization_ratio --gpu N "
        "--since 1h`."},
       {{"window_s", 600, "window the mean utilisation is taken over (seconds)"},
        {"max_mean_util_pct", 40, "mean utilisation below which a held GPU counts as under-used"},
        {"cpu_busy_pct", 85, "mean host CPU busy share that names the input pipeline"},
        {"iowait_pct", 20, "mean host iowait share that names the input pipeline"},
        {"pcie_h2d_link_pct", 30,
         "mean host-to-GPU PCIe traffic, percent of the link, that names transfers"},
        {"net_link_pct", 40, "mean load of the busiest NIC / IB port that names collectives"}},
       {.for_s = 0.0, .resolve_after_s = 120.0, .fleet_class = FleetClass::kSoftware}},
      {"gpu.memory.thrashing",
       Layer::kResources,
       Severity::kWarn,
       Action::kFixConfig,
       "GPU memory thrashing (full VRAM, PCIe busy both ways)",
       "Under watch, this GPU's memory has stayed nearly full while PCIe carried sustained "
       "traffic in both directions over the window: data is paged back and forth between host "
       "and GPU memory instead of staying resident. Typical causes are CUDA unified memory "
       "oversubscribed (the working set exceeds VRAM), an inference server offloading its KV "
       "cache or weights to host memory, and CPU offload in training (ZeRO-Offload, FSDP CPU "
       "offload). Each step then waits on PCIe, far slower than HBM.",
       {"Make the working set fit: a smaller batch or context (`max_model_len`, "
        "`max_num_seqs`), a quantised model or KV cache (FP8), activation checkpointing.",
        "Spread it out: more GPUs with tensor or pipeline parallelism instead of offloading to "
        "host memory; turn off CPU/KV offload (vLLM `--cpu-offload-gb`, `--swap-space`; "
        "DeepSpeed `offload_param`/`offload_optimizer`) if it is on.",
        "Unified memory: prefetch (`cudaMemPrefetchAsync`) and set hints (`cudaMemAdvise`), or "
        "allocate explicitly; see who holds the memory: `nvidia-smi "
        "--query-compute-apps=pid,used_memory --format=csv`."},
       {{"window_s", 300, "window the traffic must persist over (seconds)"},
        {"min_used_pct", 95, "share of GPU memory in use that counts as full"},
        {"min_each_way_mb_per_s", 2000, "PCIe traffic each way (MB/s, 10^6 bytes) that counts"},
        {"min_share_pct", 80, "share of the window's samples that must show both"}},
       {.for_s = 0.0, .resolve_after_s = 120.0, .fleet_class = FleetClass::kGpuMemory}},
      {"driver.nvml_slow",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kFixConfig,
       "NVML slow (nvidia-smi takes seconds)",
       "NVML initialisation or a GPU's sample took longer than it should, without hanging. With "
       "persistence mode off the driver tears the GPUs down whenever no client holds them and "
       "every nvidia-smi or monitoring call pays the full initialisation again; a GPU whose "
       "sample is slow may be recovering from errors.",
       {"Enable persistence: `systemctl enable --now nvidia-persistenced` (or `nvidia-smi -pm 1`).",
        "If it stays slow with persistence on, look for Xid 119/120 (GSP timeouts) in `dmesg`.",
        "Compare `time nvidia-smi` before and after; a single slow GPU points at that card."},
       {{"warn_init_ms", 1000, "NVML initialisation time (ms) that counts as slow"},
        {"warn_gpu_sample_ms", 1000, "one GPU's NVML calls (ms, the window excluded)"}},
       {.reboot_fixable = true}},
      {"gpu.ecc.disabled",
       Layer::kHardware,
       Severity::kWarn,
       Action::kFixConfig,
       "ECC disabled on a data-centre GPU",
       "ECC is off on a GPU that supports it. Memory errors then corrupt results silently instead "
       "of being corrected or reported, and page retirement / row remapping cannot protect the "
       "card.",
       {"Enable ECC: `nvidia-smi -e 1 -i N`, then reset the GPU or reboot for it to take effect.",
        "Find out who turned it off (a benchmark tuning script?) and make the setting part of the "
        "node's provisioning."},
       {},
       {.fleet_class = FleetClass::kGpuMemory}},
      {"gpu.ecc.lifetime",
       Layer::kHardware,
       Severity::kWarn,
       Action::kWatch,
       "Many ECC errors over the card's lifetime",
       "The board's aggregate (lifetime) ECC counters are high even if nothing grew during this "
       "check: the memory has a history of errors. Such cards fail again; keep them out of "
       "long synchronous jobs and track them.",
       {"Read the history: `nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER -i N`.",
        "Run the field diagnostic (`dcgmi diag -r 3`) at the next maintenance window; RMA when "
        "uncorrectable errors keep appearing."},
       {{"warn_sbe_aggregate", 1000, "lifetime correctable errors"},
        {"warn_dbe_aggregate", 1, "lifetime uncorrectable errors"}},
       {.fleet_class = FleetClass::kGpuMemory}},
  };
  return entries;
}

}  // namespace gpudoctor
