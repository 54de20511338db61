// Fuzzes the /proc/meminfo parser: any input must parse or fail cleanly, and what parses must be
// consistent (available and free never above total, swap free never above swap total).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parsers/meminfo.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto m = gpudoctor::ParseMeminfo(text);
  if (m.ok()) {
    if (!m->total_bytes || *m->total_bytes == 0) __builtin_trap();
    if (m->available_bytes && *m->available_bytes > *m->total_bytes) __builtin_trap();
    if (m->swap_total_bytes && m->swap_free_bytes && *m->swap_free_bytes > *m->swap_total_bytes) {
      __builtin_trap();
    }
  }
  return 0;
}
