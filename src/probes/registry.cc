#include "probes/registry.h"

#include "probes/probe_entry_points.h"

namespace gpudoctor {

const std::vector<ProbeSpec>& ProbeRegistry() {
  static const std::vector<ProbeSpec> probes = {
      // In troubleshooting order. name, layer, default on, cadence, entry point, what it reads,
      // cannot hang (watch runs it on the tick thread; default false)
      // network
      {"reachability", Layer::kNetwork, true, Cadence::kSlow, RunReachabilityProbe,
       "ICMP/TCP RTT and loss to [network] targets and references, else the default gateway"},
      {"nic", Layer::kNetwork, true, Cadence::kFast, RunNicProbe,
       "NIC state, errors and throughput vs link speed (/sys/class/net)"},
      {"infiniband", Layer::kNetwork, true, Cadence::kFast, RunInfinibandProbe,
       "InfiniBand port state, rate and error counters (/sys/class/infiniband)"},
      {"sockets", Layer::kNetwork, true, Cadence::kSlow, RunSocketsProbe,
       "bytes per process and peer over the window (sock_diag tcp_info, /proc/PID/fd)"},
      // hardware
      {"nvml", Layer::kHardware, true, Cadence::kFast, RunNvmlProbe,
       "GPUs through NVML (libnvidia-ml): identity, load, thermals, clocks, ECC, PCIe, NVLink"},
      {"pci_gpu", Layer::kHardware, true, Cadence::kSlow, RunPciGpuProbe,
       "NVIDIA GPUs on the PCI bus and the kernel module version (/sys/bus/pci, /sys/module)"},
      {"kmsg", Layer::kHardware, true, Cadence::kFast, RunKmsgProbe,
       "kernel log of this boot: Xid, AER, hung tasks, OOM, MCE, NIC links (/dev/kmsg, journal)"},
      {"thermal", Layer::kHardware, true, Cadence::kSlow, RunThermalProbe,
       "inlet/ambient and board temperature sensors (/sys/class/hwmon, ipmitool sdr)"},
      // software
      {"processes", Layer::kSoftware, true, Cadence::kFast, RunProcessProbe,
       "tasks stuck in D state with their wchan, zombies (/proc/PID/stat, wchan, sched)"},
      {"suspicious", Layer::kSoftware, true, Cadence::kSlow, RunSuspiciousProbe,
       "miner-like process signs: names, stratum ports, deleted exe, CPU, GPU use"},
      {"boot", Layer::kSoftware, true, Cadence::kSlow, RunBootProbe,
       "running vs installed kernels, reboot-required, NVIDIA module per kernel (/boot, "
       "/lib/modules), pending security updates (apt lists vs dpkg status, dnf cache)"},
      // resources
      {"cpu", Layer::kResources, true, Cadence::kFast, RunCpuProbe,
       "CPU busy/iowait/steal over the window, load average (/proc/stat, /proc/loadavg)", true},
      {"memory", Layer::kResources, true, Cadence::kFast, RunMemoryProbe,
       "RAM and swap use, swap traffic over the window, OOM kills (/proc/meminfo, /proc/vmstat)",
       true},
      {"pressure", Layer::kResources, true, Cadence::kFast, RunPressureProbe,
       "CPU, memory and I/O pressure stall shares (/proc/pressure/*)", true},
      {"disk", Layer::kResources, true, Cadence::kSlow, RunDiskProbe,
       "space and inodes of real filesystems, unresponsive mounts (/proc/1/mounts, statvfs)"},
      {"backup", Layer::kResources, true, Cadence::kSlow, RunBackupProbe,
       "age of the newest file matching [backup] paths (checkpoints)"},
      // the jobs themselves
      {"job", Layer::kSoftware, true, Cadence::kFast, RunJobProbe,
       "step time of each [[job]]: its training log (tailed), pushed step marks, a Prometheus "
       "metric"},
      {"inference", Layer::kSoftware, true, Cadence::kFast, RunInferenceProbe,
       "inference servers' own /metrics (vLLM, TGI, SGLang, Triton): [[inference]] and local "
       "listeners of known engines"},
  };
  return probes;
}

std::string SlowProbeNames() {
  std::string names;
  for (const auto& p : ProbeRegistry()) {
    if (p.cadence != Cadence::kSlow) continue;
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  }
  return names;
}

const ProbeSpec* FindProbe(std::string_view name) {
  for (const auto& p : ProbeRegistry()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<const ProbeSpec*> EnabledProbes(const Settings& settings) {
  std::vector<const ProbeSpec*> out;
  if (!settings.only_probes.empty()) {
    for (const auto& p : ProbeRegistry()) {
      for (const auto& n : settings.only_probes) {
        if (p.name == n) {
          out.push_back(&p);
          break;
        }
      }
    }
    return out;
  }
  for (const auto& p : ProbeRegistry()) {
    auto it = settings.probe_enabled.find(p.name);
    bool on = it == settings.probe_enabled.end() ? p.default_on : it->second;
    if (on) out.push_back(&p);
  }
  return out;
}

}  // namespace gpudoctor

namespace gpudoctor {

Status ValidateProbeNames(const Settings& settings) {
  auto check = [](const std::string& name) -> Status {
    if (FindProbe(name) != nullptr) return Status::Ok();
    std::string known;
    for (const auto& p : ProbeRegistry())
      known += (known.empty() ? "" : ", ") + std::string(p.name);
    return InvalidArgument("unknown probe '" + name + "' (known: " + known + ")");
  };
  for (const auto& n : settings.only_probes) {
    if (Status s = check(n); !s.ok()) return s;
  }
  for (const auto& [n, on] : settings.probe_enabled) {
    if (Status s = check(n); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace gpudoctor
