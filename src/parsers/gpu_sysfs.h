// Parsers for the small sysfs and procfs texts the GPU layer reads: PCI device attributes
// (/sys/bus/pci/devices/BDF/{vendor,device,class}), the NVIDIA kernel module version
// (/sys/module/nvidia/version), the owner uid of a process (/proc/PID/status "Uid:") and a user
// name from /etc/passwd. Pure functions; thread-safe; garbage gives nullopt / empty.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpudoctor {

struct PciIds {
  uint32_t vendor = 0;
  uint32_t device = 0;
  uint32_t class_code = 0;  // 24 bits: class << 16 | subclass << 8 | prog-if
};

// vendor/device "0x10de\n", class "0x030200\n". nullopt when any part is not a hex number in range.
std::optional<PciIds> ParsePciIds(std::string_view vendor, std::string_view device,
                                  std::string_view class_code);

// NVIDIA (0x10de) display controller (base class 0x03: VGA 0x0300, 3D 0x0302, other 0x0380).
bool IsNvidiaGpu(const PciIds& ids);
// An NVIDIA "other bridge" (class 0x0680xx): an NVSwitch on HGX/DGX baseboards.
bool IsNvidiaNvSwitch(const PciIds& ids);

// "550.54.15\n" -> "550.54.15"; empty when the text is not a plausible version.
std::string ParseModuleVersion(std::string_view text);

// Real uid from the "Uid:\t1000\t1000\t1000\t1000" line of /proc/PID/status.
std::optional<uint32_t> ParseStatusUid(std::string_view status);

// Name of `uid` in /etc/passwd text ("name:x:uid:gid:..."); empty when absent.
std::string PasswdUserName(std::string_view passwd, uint32_t uid);

}  // namespace gpudoctor
