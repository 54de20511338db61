// Joins NVML's and the kernel log's view of lost GPUs. When the handle lookup itself returns
// GPU_IS_LOST, NVML knows the GPU's index but not its bus id, while the log (Xid 79, "fallen off
// the bus") knows the slot but not the index. Both rule sets call this so that the pair becomes
// one gpu.lost finding (the kernel-log one, with the NVML index added). Pure; thread-safe.
#pragma once

#include <vector>

#include "facts/pci_bus_id.h"
#include "facts/snapshot.h"

namespace gpudoctor {

struct LostGpuPair {
  PciAddress slot;  // from the kernel log
  int nvml_index = 0;
};

// Pairs NVML GPUs lost without a bus id with the lost slots of the log that no NVML GPU's bus id
// names. Only when both counts agree (then in order: NVML enumerates in PCI bus order);
// otherwise empty, and each side reports on its own.
std::vector<LostGpuPair> PairBuslessLostGpus(const Snapshot& snap);

}  // namespace gpudoctor
