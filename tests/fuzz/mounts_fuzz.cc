// Fuzzes the /proc/mounts and mountinfo parsers, the octal unescaping and the mount selection
// policy.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parsers/mounts.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  int skipped = 0;
  auto mounts = gpudoctor::ParseMounts(text, &skipped);
  if (skipped < 0) __builtin_trap();
  if (mounts.ok()) {
    for (const auto& m : *mounts) {
      if (m.mount_point.empty() || m.mount_point[0] != '/') __builtin_trap();
    }
    auto selected = gpudoctor::SelectMountsToCheck(*mounts);
    if (selected.size() > mounts->size()) __builtin_trap();
  }
  auto info = gpudoctor::ParseMountInfo(text, &skipped);
  if (info.ok()) {
    for (const auto& m : *info) {
      if (m.mount_point.empty() || m.mount_point[0] != '/' || m.fs_type.empty()) __builtin_trap();
    }
  }
  if (gpudoctor::UnescapeMountField(text).size() > size) __builtin_trap();
  return 0;
}
