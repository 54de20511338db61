#include "rules/gpu_map.h"

namespace gpudoctor {

const GpuBusEntry* MapBusToGpu(const PciTuple& pci, const std::vector<GpuBusEntry>& gpus) {
  for (const auto& g : gpus) {
    if (g.pci.SameDevice(pci)) return &g;
  }
  return nullptr;
}

std::vector<GpuBusEntry> GpusFromLog(const KernelLogFacts& facts) {
  std::vector<GpuBusEntry> out;
  for (const auto& g : facts.gpus) out.push_back({std::nullopt, g.uuid, g.pci, g.serial});
  return out;
}

std::vector<GpuBusEntry> MergeGpuTables(std::vector<GpuBusEntry> primary,
                                        const std::vector<GpuBusEntry>& secondary) {
  for (const auto& s : secondary) {
    bool found = false;
    for (auto& p : primary) {
      if (!p.pci.SameDevice(s.pci)) continue;
      found = true;
      if (p.uuid.empty()) p.uuid = s.uuid;
      if (p.serial.empty()) p.serial = s.serial;
    }
    if (!found) primary.push_back(s);
  }
  return primary;
}

}  // namespace gpudoctor
