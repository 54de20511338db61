// PciTuple: a PCI device address as integers (domain, bus, device, function). Every textual form
// the kernel log, sysfs and NVML use is parsed to this tuple and compared as integers, never as
// strings (xid.md §7). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpudoctor {

struct PciTuple {
  uint32_t domain = 0;    // 16 bits on most hosts, up to 32 bits in NVML's 8-digit form
  uint32_t bus = 0;       // 0..255
  uint32_t device = 0;    // 0..31
  uint32_t function = 0;  // 0..7; the Xid line has none (0)

  // Same GPU: domain, bus and device equal (the function is ignored: GPUs are function 0 and the
  // Xid form carries none).
  bool SameDevice(const PciTuple& o) const {
    return domain == o.domain && bus == o.bus && device == o.device;
  }
  bool operator==(const PciTuple& o) const = default;
  // "0000:3b:00.0" (sysfs form, lower-case hex, 4-digit domain unless wider).
  std::string ToString() const;
};

// Parses "PCI:0000:3b:00", "0000:3b:00", "0000:3b:00.0", "00000000:3B:00.0", "0018:01:00",
// "3b:00.0" (domain 0). Rejects out-of-range fields and trailing garbage.
std::optional<PciTuple> ParsePciTuple(std::string_view text);

}  // namespace gpudoctor
