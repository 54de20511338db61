// Maps a kernel-log PCI address to a GPU (index, uuid, serial). Sources of the table: the driver's
// companion lines in the log itself ("NVRM: GPU at PCI:...: GPU-uuid", board serial) and, when the
// GPU layer has them, NVML devices (index, uuid, PCI bus id). Addresses are compared as integer
// tuples (domain, bus, device), never as strings. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "facts/kernel_facts.h"
#include "facts/pci_tuple.h"

namespace gpudoctor {

struct GpuBusEntry {
  std::optional<int> index;  // NVML index; absent for log-only entries
  std::string uuid;
  PciTuple pci;
  std::string serial;
};

// The entry whose (domain, bus, device) equals pci's; nullptr when none.
const GpuBusEntry* MapBusToGpu(const PciTuple& pci, const std::vector<GpuBusEntry>& gpus);

// Entries from the log's companion lines.
std::vector<GpuBusEntry> GpusFromLog(const KernelLogFacts& facts);

// `primary` (e.g. NVML) first; entries of `secondary` fill in what primary lacks (uuid, serial)
// or add GPUs primary does not know.
std::vector<GpuBusEntry> MergeGpuTables(std::vector<GpuBusEntry> primary,
                                        const std::vector<GpuBusEntry>& secondary);

}  // namespace gpudoctor
