// PCI GPU probe. Source: /sys/bus/pci/devices/*/{vendor,device,class,driver},
// /sys/module/nvidia/version and the directory names under /proc/driver/nvidia/gpus. Lists NVIDIA
// display/3D controllers whatever NVML says, so rules can tell "card on the bus but NVML does not
// see it" (gpu.missing) and "no driver loaded" apart. Failure modes: no /sys/bus/pci → skipped;
// unreadable or malformed device entries are ignored. References: xid.md §7 (bus id forms),
// signals.md §4.
#include "core/strings.h"
#include "facts/pci_bus_id.h"
#include "parsers/gpu_sysfs.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {

ProbeOutput RunPciGpuProbe(const ProbeContext& ctx) {
  const RootFs& fs = ctx.fs();
  auto entries = RootFs::ListDir(fs.SysPath("bus/pci/devices"));
  if (!entries.ok()) return ProbeSkipped("no PCI bus in sysfs: " + entries.status().ToString());
  std::vector<PciGpuDevice> devices;
  int nvswitches = 0;
  for (const auto& name : *entries) {
    std::string bus_id = NormalizePciBusId(name);
    if (bus_id.empty()) continue;
    std::string dir = "bus/pci/devices/" + name + "/";
    auto vendor = fs.ReadSys(dir + "vendor", 64);
    if (!vendor.ok()) continue;
    auto device = fs.ReadSys(dir + "device", 64);
    auto cls = fs.ReadSys(dir + "class", 64);
    if (!device.ok() || !cls.ok()) continue;
    auto ids = ParsePciIds(*vendor, *device, *cls);
    if (ids && IsNvidiaNvSwitch(*ids)) ++nvswitches;
    if (!ids || !IsNvidiaGpu(*ids)) continue;
    PciGpuDevice d;
    d.bus_id = bus_id;
    d.device_id = ids->device;
    d.class_code = ids->class_code;
    if (auto link = RootFs::ReadLink(fs.SysPath(dir + "driver")); link.ok()) {
      size_t slash = link->rfind('/');
      d.driver = Sanitize(slash == std::string::npos ? *link : link->substr(slash + 1), 64);
    }
    devices.push_back(std::move(d));
  }
  std::optional<std::vector<std::string>> proc_gpus;
  if (auto dirs = RootFs::ListDir(fs.ProcPath("driver/nvidia/gpus")); dirs.ok()) {
    proc_gpus.emplace();
    for (const auto& name : *dirs) {
      std::string id = NormalizePciBusId(name);  // "0000:3b:00.0"
      if (!id.empty()) proc_gpus->push_back(std::move(id));
    }
  }
  std::string module_version;
  if (auto v = fs.ReadSys("module/nvidia/version", 256); v.ok()) {
    module_version = ParseModuleVersion(*v);
  }
  return ProbeOk(
      [devices = std::move(devices), module_version, proc_gpus, nvswitches](Snapshot& snap) {
        snap.gpu.pci_devices = devices;
        snap.gpu.pci_nvswitches = nvswitches;
        snap.gpu.driver_proc_gpus = proc_gpus;
        snap.gpu.driver.kernel_module_version = module_version;
      });
}

}  // namespace gpudoctor
