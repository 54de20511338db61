#include "store/tick_codec.h"

#include <cmath>
#include <cstring>

namespace gpudoctor {
namespace {

void PutVarint(std::string* out, uint64_t v) {
  char buf[10];
  size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out->append(buf, n);
}

uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

// Integers of magnitude below 2^53 (every one a double holds exactly), not -0.0.
bool AsInteger(double v, int64_t* out) {
  if (!(std::fabs(v) < 9007199254740992.0)) return false;  // also NaN
  if (v != std::trunc(v) || (v == 0 && std::signbit(v))) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

}  // namespace

namespace tick_codec_internal {

bool ReadVarint(std::string_view blob, size_t* pos, uint64_t* v) {
  uint64_t r = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (*pos >= blob.size()) return false;
    const auto b = static_cast<unsigned char>(blob[(*pos)++]);
    if (shift == 63 && b > 1) return false;  // more than 64 bits
    r |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *v = r;
      return true;
    }
  }
  return false;
}

double DoubleFromLe(const char* p) {
  uint64_t bits = 0;
  for (int i = 7; i >= 0; --i) bits = (bits << 8) | static_cast<unsigned char>(p[i]);
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

}  // namespace tick_codec_internal

TickEncoder::TickEncoder(std::string* out) : out_(out) {
  out_->clear();
  out_->push_back(static_cast<char>(kTickBlobFormat));
}

void TickEncoder::Add(int64_t series_id, double value) {
  const uint64_t delta = ZigZag(
      static_cast<int64_t>(static_cast<uint64_t>(series_id) - static_cast<uint64_t>(prev_id_)));
  prev_id_ = series_id;
  int64_t iv = 0;
  const bool is_int = AsInteger(value, &iv);
  PutVarint(out_, (delta << 1) | (is_int ? 1 : 0));
  if (is_int) {
    PutVarint(out_, ZigZag(iv));
    return;
  }
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  char buf[8];
  for (char& c : buf) {
    c = static_cast<char>(bits & 0xff);
    bits >>= 8;
  }
  out_->append(buf, 8);
}

std::string EncodeTick(const std::vector<TickPoint>& points) {
  std::string out;
  TickEncoder e(&out);
  for (const auto& p : points) e.Add(p.series_id, p.value);
  return out;
}

std::optional<std::vector<TickPoint>> DecodeTick(std::string_view blob) {
  std::vector<TickPoint> out;
  if (!ForEachTickPoint(blob, [&](int64_t id, double v) { out.push_back({id, v}); })) {
    return std::nullopt;
  }
  return out;
}

}  // namespace gpudoctor
