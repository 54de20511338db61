// PCI bus ids in every form gpudoctor meets (xid.md §7): NVML busId "00000000:3B:00.0", NVML
// busIdLegacy and sysfs "0000:3b:00.0", kernel Xid lines "0000:3b:00" (no function), and the
// short "3b:00.0". All are parsed to integers and compared as tuples, never as strings.
// Pure functions; thread-safe.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpudoctor {

struct PciAddress {
  uint32_t domain = 0;
  uint32_t bus = 0;       // 0 .. 0xff
  uint32_t device = 0;    // 0 .. 0x1f
  uint32_t function = 0;  // 0 .. 7; 0 when the form has none
  auto operator<=>(const PciAddress&) const = default;
  // Same GPU: domain, bus and device equal (the function is ignored: GPUs are function 0 and the
  // kernel's Xid form carries none).
  bool SameDevice(const PciAddress& o) const {
    return domain == o.domain && bus == o.bus && device == o.device;
  }
  // "0000:3b:00.0" (see FormatPciBusId).
  std::string ToString() const;
};

// Accepts [domain:]bus:device[.function], hex, any case, domain up to 8 hex digits.
// nullopt on anything else (empty parts, out-of-range bus/device/function, trailing garbage).
std::optional<PciAddress> ParsePciBusId(std::string_view text);

// "0000:3b:00.0": lower-case, 4-digit domain (more digits when the domain needs them).
std::string FormatPciBusId(const PciAddress& a);

// Parse and format in one go; empty string when `text` does not parse.
std::string NormalizePciBusId(std::string_view text);

}  // namespace gpudoctor
