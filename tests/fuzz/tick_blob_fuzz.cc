// Fuzzes the history store's decoders of stored blobs (a damaged or planted database file): the
// tick blob (tick_codec.h), the per-minute sample blob and the rollup blob (sample_codec.h) must
// decode or fail cleanly, and what decodes must encode back to the same points.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "store/history_store_internal.h"
#include "store/sample_codec.h"
#include "store/tick_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view blob(reinterpret_cast<const char*>(data), size);
  if (auto points = gpudoctor::DecodeTick(blob)) {
    auto again = gpudoctor::DecodeTick(gpudoctor::EncodeTick(*points));
    if (!again || again->size() != points->size()) __builtin_trap();
    for (size_t i = 0; i < points->size(); ++i) {
      if ((*again)[i].series_id != (*points)[i].series_id ||
          std::memcmp(&(*again)[i].value, &(*points)[i].value, sizeof(double)) != 0) {
        __builtin_trap();
      }
    }
  }
  size_t used = 0;
  if (auto samples = gpudoctor::DecodeSamples(blob, &used)) {
    if (used > size) __builtin_trap();
    for (const auto& [slot, v] : *samples) {
      if (slot < 0 || slot >= gpudoctor::kCodecSlots) __builtin_trap();
    }
  }
  (void)gpudoctor::DecodeRollups(blob);
  return 0;
}
