// Catalogue section: the machine's surroundings and upkeep: room and
// inlet temperature, an absolute GPU temperature alarm, pending reboots, the NVIDIA module vs the
// installed kernels, driver branch end of life, and the age of the newest checkpoint.
#include "rules/catalogue.h"

namespace gpudoctor {

const std::vector<CatalogueEntry>& UpkeepCatalogue() {
  static const std::vector<CatalogueEntry> entries = {
      {"host.inlet.temperature",
       Layer::kHardware,
       Severity::kCrit,
       Action::kContactProvider,
       "Inlet air outside the machine-room band",
       "A sensor labelled inlet, ambient or intake (hwmon or the BMC) reads outside the band "
       "machine rooms are kept in (16-25 C here; ASHRAE recommends 18-27 C and allows 10-35 C for "
       "class A2 servers). Every degree more at the inlet is about a degree more on the GPUs: "
       "fans run at full speed, GPUs reach their slowdown temperature sooner and throttle. Too "
       "cold wastes cooling energy and, below the dew point, risks condensation. Board/system "
       "sensors run 10-20 C above inlet and are reported but never judged against this band.",
       {"Compare with the neighbours in the rack and the room: one node hot → its airflow; a "
        "whole row hot → the room's cooling.",
        "Check the room's cooling: CRAC/CRAH alarms and setpoints, chilled-water supply, a "
        "failed unit or a door left open.",
        "Check airflow at the rack: blanking panels in every empty unit, no cable bundles in "
        "front of the intakes, hot/cold aisle containment closed, no hot exhaust recirculating "
        "over the rack top.",
        "Read the BMC's event log for fan and temperature events: `ipmitool sel elist`; sensors: "
        "`ipmitool sdr type Temperature`."},
       {{"warn_low_c", 16, "inlet temperature below this is a warning (overcooled room)"},
        {"warn_high_c", 25, "inlet temperature above this is a warning (warm room)"},
        {"crit_low_c", 10, "inlet temperature below this is critical (condensation risk)"},
        {"crit_high_c", 35,
         "inlet temperature above this is critical (ASHRAE A2 allowable maximum)"}},
       {.for_s = 60.0, .resolve_after_s = 300.0, .fleet_class = FleetClass::kHost}},
      {"gpu.temp.absolute",
       Layer::kHardware,
       Severity::kWarn,
       Action::kWatch,
       "GPU above the configured temperature alarm",
       "The GPU's core temperature reached the absolute alarm temperature set in the config "
       "([gpu] temp_alarm_c). Beside the relative rule (gpu.thermal: within a margin of the "
       "GPU's own slowdown threshold), this catches a fleet policy such as \"no GPU above 80 C\" "
       "and cooling that degrades slowly.",
       {"See whether it is one GPU (its airflow, fan, heatsink paste) or all of them (inlet "
        "temperature, room cooling): `nvidia-smi --query-gpu=index,temperature.gpu,fan.speed,"
        "power.draw --format=csv`.",
        "Check the inlet temperature (host.inlet.temperature) and the rack's airflow."},
       {{"alarm_c", 0, "GPU core temperature at or above this is reported; 0: off"}},
       {.pace = Pace::kSustained}},
      {"host.reboot.pending",
       Layer::kSoftware,
       Severity::kInfo,
       Action::kReboot,
       "Reboot pending",
       "A newer kernel than the running one is installed (or the distribution flagged "
       "/run/reboot-required): its security fixes are not active until the next boot. The next "
       "boot also starts a different kernel, so check that the NVIDIA module is built for it "
       "(driver.module.kernel_mismatch) before you schedule it.",
       {"Check that the NVIDIA module exists for the new kernel: `dkms status`, `ls "
        "/lib/modules/NEW/updates/dkms/`.",
        "Drain the node and reboot in a maintenance window; afterwards run `gpudoctor check`."},
       {},
       {.reboot_fixable = true}},
      {"driver.module.kernel_mismatch",
       Layer::kSoftware,
       Severity::kCrit,
       Action::kReboot,
       "NVIDIA module built for another kernel",
       "The NVIDIA kernel module exists for some installed kernels but not for the one that "
       "runs now or for the newest one, which the next boot will start. Typical cause: an "
       "unattended kernel upgrade whose DKMS build failed (missing headers, compiler), or a "
       "precompiled module package that was not updated with the kernel. Without the module the "
       "driver does not load and every GPU is gone.",
       {"Build the module for that kernel: `dkms status`, then `dkms autoinstall -k VERSION` "
        "(needs linux-headers-VERSION), or install the matching precompiled package "
        "(linux-modules-nvidia-BRANCH-VERSION, kmod-nvidia).",
        "Until it is built, keep the working kernel as the boot default (grub-set-default / "
        "grubby --set-default) and do not reboot into the new one.",
        "After the fix: `modinfo -k VERSION nvidia` shows the module."},
       {},
       // Rebuilding the module or upgrading the branch fixes it, a reboot alone does not.
       {.reboot_fixable = false}},
      {"driver.branch.eol",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kFixConfig,
       "NVIDIA driver branch at end of life",
       "The running driver belongs to a data-center branch that NVIDIA no longer supports (or "
       "will stop supporting soon): no security fixes or bug fixes after its end-of-life date. "
       "Production branches get one year of support, long-term support branches (LTSB) three. "
       "The branch table is compiled into gpudoctor (src/rules/driver_branches.cc) with the "
       "date it was written; a branch it does not know is not judged.",
       {"Plan an upgrade to a supported branch, preferably the current LTSB or production "
        "branch: https://docs.nvidia.com/datacenter/tesla/drivers/ (Supported Drivers).",
        "Check the CUDA versions your jobs need against the new branch (CUDA minor version "
        "compatibility) and upgrade a canary node first."},
       {{"info_days_before_eol", 90, "days before end of life from which an info is reported"}},
       // Rebuilding the module or upgrading the branch fixes it, a reboot alone does not.
       {.reboot_fixable = false}},
      {"driver.release.old",
       Layer::kSoftware,
       Severity::kInfo,
       Action::kFixConfig,
       "Older point release of a supported driver branch",
       "The running driver's branch is supported, but newer point releases of it are known: "
       "they carry the branch's later security and bug fixes. The release table is compiled "
       "into gpudoctor (src/rules/driver_releases.cc) with the date it was written, so an even "
       "newer release may exist: check NVIDIA's release notes before you pick one.",
       {"Read the newer release's notes (fixed issues, security bulletins): "
        "https://docs.nvidia.com/datacenter/tesla/ (Release Notes).",
        "Upgrade within the branch on a canary node first (same branch: no CUDA compatibility "
        "change), then roll out node by node with the node drained."},
       {},
       {.reboot_fixable = false}},
      {"driver.cuda_too_old",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kFixConfig,
       "A GPU process's CUDA runtime is newer than the driver supports",
       "A process on the GPU loaded a CUDA runtime (libcudart) newer than the CUDA version the "
       "driver supports (nvmlSystemGetCudaDriverVersion). A newer major version fails outright "
       "(cudaErrorInsufficientDriver) unless the CUDA forward-compatibility package is used; a "
       "newer minor version runs under minor version compatibility, but kernels shipped as PTX "
       "for the newer toolkit cannot be JIT-compiled and the newer APIs are missing. Only the "
       "library paths in /proc/PID/maps are read, nothing else of the process.",
       {"Upgrade the driver to a branch that supports the runtime's CUDA version (NVIDIA's CUDA "
        "toolkit / driver table: https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/).",
        "Or, on data-center GPUs, install the CUDA forward-compatibility package for that "
        "version (cuda-compat-X-Y; in containers, the image's /usr/local/cuda/compat on "
        "LD_LIBRARY_PATH).",
        "Or run the job with a runtime the driver supports (an older CUDA build of the "
        "framework or container image)."},
       {},
       {.reboot_fixable = false}},
      {"host.updates.security",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kFixConfig,
       "Security updates pending",
       "The package manager's own lists (apt's security suite, or dnf's update info) offer "
       "newer versions of installed packages: known vulnerabilities stay open until they are "
       "installed. Read from local state only, no network: the answer is as fresh as the last "
       "`apt update`/`dnf makecache`. The age is how long the oldest pending update has been "
       "published at least (the Date of the list that carries it).",
       {"List them: `apt list --upgradable 2>/dev/null | grep -i security` (or `dnf updateinfo "
        "list --security`).",
        "Install them in a maintenance window: `apt-get upgrade` / `unattended-upgrade -d` (or "
        "`dnf upgrade --security`); a new kernel or NVIDIA module needs a reboot "
        "(host.reboot.pending, driver.module.kernel_mismatch).",
        "Hold the NVIDIA driver packages if they must not move: `apt-mark hold` (or dnf "
        "versionlock)."},
       {{"warn_age_days", 7,
         "a pending security update published at least this many days ago is a warning"}},
       {.reboot_fixable = false}},
      {"host.backup.stale",
       Layer::kResources,
       Severity::kWarn,
       Action::kFixConfig,
       "Newest checkpoint is old",
       "The newest file matching a [backup] paths pattern is older than [backup] max_age_h: a "
       "GPU failure now loses all training since then. Either checkpointing stopped (job "
       "crashed or hung, disk full, storage unmounted) or its interval is too long for the "
       "failure rate of the fleet.",
       {"Check that the job still runs and still writes checkpoints (its log, `ls -lt` of the "
        "checkpoint directory).",
        "Check the checkpoint filesystem: free space (host.disk.full), mount present and "
        "answering.",
        "Shorten the checkpoint interval: large fleets lose most to failures between "
        "checkpoints."},
       {{"max_age_h", 24, "hours the newest matching file may be old"}}},
      {"host.backup.none",
       Layer::kResources,
       Severity::kWarn,
       Action::kFixConfig,
       "Backup pattern matches nothing",
       "A [backup] paths pattern matched no file: the pattern is probably wrong (path, "
       "extension, a mount that is not there), or no checkpoint was ever written.",
       {"Check the pattern against the files: `ls -l PATTERN` on the host.",
        "Check that the checkpoint filesystem is mounted."}},
  };
  return entries;
}

}  // namespace gpudoctor
