// Fuzzes the PSI parser (/proc/pressure/*): parsed percentages must lie in 0..100.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parsers/pressure.h"

namespace {
void CheckLine(const gpudoctor::PressureLine& l) {
  for (const auto& v : {l.avg10_pct, l.avg60_pct, l.avg300_pct}) {
    if (!v || *v < 0 || *v > 100) __builtin_trap();
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = gpudoctor::ParsePressure(text);
  if (r.ok()) {
    CheckLine(r->some);
    if (r->full) CheckLine(*r->full);
  }
  return 0;
}
