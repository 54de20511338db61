// Fuzzes the /proc/vmstat parser and the counter-rate helper on two halves of the input.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parsers/vmstat.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string_view a = text.substr(0, size / 2), b = text.substr(size / 2);
  auto before = gpudoctor::ParseVmstat(a);
  auto after = gpudoctor::ParseVmstat(b);
  if (before.ok() && after.ok()) {
    auto rate = gpudoctor::CounterRate(before->pswpin, after->pswpin, 0.25);
    if (rate && *rate < 0) __builtin_trap();
  }
  (void)gpudoctor::ParseVmstat(text);
  return 0;
}
