// Fuzzes the GPU layer's text parsers (PCI bus ids in every form, sysfs PCI ids, the kernel
// module version, /proc/PID/status Uid, /etc/passwd): any input parses or fails cleanly, and a
// parsed bus id survives a format/parse round trip.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "facts/pci_bus_id.h"
#include "parsers/gpu_sysfs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto a = gpudoctor::ParsePciBusId(text)) {
    auto again = gpudoctor::ParsePciBusId(gpudoctor::FormatPciBusId(*a));
    if (!again || !(*again == *a)) __builtin_trap();
  }
  size_t third = size / 3;
  (void)gpudoctor::ParsePciIds(text.substr(0, third), text.substr(third, third),
                               text.substr(2 * third));
  (void)gpudoctor::ParseModuleVersion(text);
  (void)gpudoctor::ParseStatusUid(text);
  (void)gpudoctor::PasswdUserName(text, 1000);
  return 0;
}
