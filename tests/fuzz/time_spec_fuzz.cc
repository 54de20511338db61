// Fuzzes the history command's duration / time parsers and the store's sample codec: durations
// are positive and at most 10 years; decoding never reads out of bounds, yields slots in order
// below 60, and re-encoding what it decoded reproduces the values exactly.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "core/time_spec.h"
#include "store/sample_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto d = gpudoctor::ParseDurationS(text)) {
    if (*d <= 0 || *d > 10LL * 366 * 86400) __builtin_trap();
  }
  constexpr int64_t kNow = 1700000000;
  if (auto t = gpudoctor::ParseTimeSpec(text, kNow)) {
    if (*t < -1 || *t > 1000000000000LL) __builtin_trap();
    (void)gpudoctor::FormatUtc(*t);
  }
  // An absolute time printed by the one formatter reads back as the same instant.
  if (auto t = gpudoctor::ParseRfc3339(text)) {
    if (*t < 0) __builtin_trap();
    std::string printed = gpudoctor::FormatUtc(*t);
    auto back = gpudoctor::ParseRfc3339(printed);
    if (!back || *back != *t) __builtin_trap();
  }
  size_t used = 0;
  if (auto samples = gpudoctor::DecodeSamples(text, &used)) {
    if (used > size) __builtin_trap();
    int prev = -1;
    for (const auto& [slot, v] : *samples) {
      if (slot <= prev || slot >= gpudoctor::kCodecSlots) __builtin_trap();
      prev = slot;
    }
    auto again = gpudoctor::DecodeSamples(gpudoctor::EncodeSamples(*samples, false));
    if (!again || again->size() != samples->size()) __builtin_trap();
    for (size_t i = 0; i < samples->size(); ++i) {
      double a = (*samples)[i].second, b = (*again)[i].second;
      if ((*samples)[i].first != (*again)[i].first) __builtin_trap();
      if (!(a == b || (std::isnan(a) && std::isnan(b)))) __builtin_trap();
    }
  }
  return 0;
}
