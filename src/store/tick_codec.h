// One tick's metric points packed into one blob: the history store writes one samples_ticks row
// per tick (one SQLite insert) instead of one row per series, and the minute pack and the readers
// decode it.
//
// Layout: a format byte (kTickBlobFormat), then per point, in the order given:
//   varint(zigzag(series_id - previous series_id) << 1 | is_integer)   (previous: 0 at the start)
//   is_integer: varint(zigzag(value)), the value is an integer of magnitude < 2^53 (not -0.0)
//   otherwise:  the IEEE-754 double, 8 bytes little-endian
// Values come back bit for bit (integers exactly, others as stored); NaN and infinities are kept
// as doubles (the writer skips them). Series ids round-trip when consecutive ids differ by less
// than 2^62 (SQLite rowids of the series table: small positive numbers). Varints: LEB128, at most
// 10 bytes. Pure functions, thread-safe; a TickEncoder is used by one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpudoctor {

inline constexpr unsigned char kTickBlobFormat = 1;

struct TickPoint {
  int64_t series_id = 0;
  double value = 0;
  bool operator==(const TickPoint& o) const = default;
};

// Appends one blob's bytes to *out (cleared first): reuses out's capacity, so a writer that
// keeps the string allocates nothing per tick once it has grown.
class TickEncoder {
 public:
  explicit TickEncoder(std::string* out);
  void Add(int64_t series_id, double value);

 private:
  std::string* out_;
  int64_t prev_id_ = 0;
};

std::string EncodeTick(const std::vector<TickPoint>& points);

// Calls fn(series_id, value) for every point in order. False on malformed input (unknown format,
// truncated or overlong varint, truncated double); points before the fault were already given
// (callers that must not use a partial blob decode into a buffer first). Never reads past the end.
template <typename Fn>
bool ForEachTickPoint(std::string_view blob, Fn&& fn);

// nullopt on malformed input.
std::optional<std::vector<TickPoint>> DecodeTick(std::string_view blob);

namespace tick_codec_internal {
bool ReadVarint(std::string_view blob, size_t* pos, uint64_t* v);
double DoubleFromLe(const char* p);
}  // namespace tick_codec_internal

template <typename Fn>
bool ForEachTickPoint(std::string_view blob, Fn&& fn) {
  using tick_codec_internal::ReadVarint;
  if (blob.empty() || static_cast<unsigned char>(blob[0]) != kTickBlobFormat) return false;
  size_t pos = 1;
  uint64_t id = 0;
  while (pos < blob.size()) {
    uint64_t head = 0;
    if (!ReadVarint(blob, &pos, &head)) return false;
    const uint64_t zz = head >> 1;
    id += (zz >> 1) ^ (~(zz & 1) + 1);  // unsigned: wraps, never undefined
    double value;
    if (head & 1) {
      uint64_t iv = 0;
      if (!ReadVarint(blob, &pos, &iv)) return false;
      value = static_cast<double>(static_cast<int64_t>((iv >> 1) ^ (~(iv & 1) + 1)));
    } else {
      if (blob.size() - pos < 8) return false;
      value = tick_codec_internal::DoubleFromLe(blob.data() + pos);
      pos += 8;
    }
    fn(static_cast<int64_t>(id), value);
  }
  return true;
}

}  // namespace gpudoctor
