#include "store/sample_codec.h"

#include <cstring>

namespace gpudoctor {
namespace {

void PutBytes(std::string& out, const void* p, size_t n) {
  out.append(static_cast<const char*>(p), n);
}

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

std::string EncodeSamples(const std::vector<std::pair<int, double>>& samples, bool lossy) {
  uint64_t bitmap = 0;
  std::vector<std::pair<int, double>> in;
  in.reserve(samples.size());
  for (const auto& s : samples) {
    if (s.first < 0 || s.first >= kCodecSlots) continue;
    if (bitmap & (uint64_t{1} << s.first)) continue;
    bitmap |= uint64_t{1} << s.first;
    in.push_back(s);
  }
  // Slot order.
  std::vector<std::pair<int, double>> ordered;
  for (int slot = 0; slot < kCodecSlots; ++slot) {
    if (!(bitmap & (uint64_t{1} << slot))) continue;
    for (const auto& s : in) {
      if (s.first == slot) {
        ordered.push_back(s);
        break;
      }
    }
  }
  std::string out;
  uint8_t b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(bitmap >> (8 * i));
  PutBytes(out, b, 8);
  size_t tag_pos = out.size();
  out.append((ordered.size() + 3) / 4, '\0');
  double prev = 0;
  for (size_t i = 0; i < ordered.size(); ++i) {
    double v = ordered[i].second;
    int tag;
    if (SameBits(v, prev)) {
      tag = 0;
    } else if (static_cast<double>(static_cast<float>(v)) == v || lossy) {
      float f = static_cast<float>(v);
      PutBytes(out, &f, 4);
      tag = 1;
      v = f;
    } else if (float d = static_cast<float>(v - prev); prev + static_cast<double>(d) == v) {
      PutBytes(out, &d, 4);
      tag = 2;
    } else {
      PutBytes(out, &v, 8);
      tag = 3;
    }
    out[tag_pos + i / 4] = static_cast<char>(out[tag_pos + i / 4] | (tag << (2 * (i % 4))));
    prev = v;
  }
  return out;
}

std::optional<std::vector<std::pair<int, double>>> DecodeSamples(std::string_view blob,
                                                                 size_t* consumed) {
  if (blob.size() < 8) return std::nullopt;
  uint64_t bitmap = 0;
  for (int i = 0; i < 8; ++i) bitmap |= uint64_t{static_cast<uint8_t>(blob[i])} << (8 * i);
  if (bitmap >> kCodecSlots) return std::nullopt;
  size_t n = static_cast<size_t>(__builtin_popcountll(bitmap));
  size_t pos = 8;
  size_t tags = pos;
  pos += (n + 3) / 4;
  if (pos > blob.size()) return std::nullopt;
  std::vector<std::pair<int, double>> out;
  out.reserve(n);
  double prev = 0;
  size_t i = 0;
  for (int slot = 0; slot < kCodecSlots; ++slot) {
    if (!(bitmap & (uint64_t{1} << slot))) continue;
    int tag = (static_cast<uint8_t>(blob[tags + i / 4]) >> (2 * (i % 4))) & 3;
    double v = prev;
    if (tag == 1 || tag == 2) {
      if (pos + 4 > blob.size()) return std::nullopt;
      float f;
      std::memcpy(&f, blob.data() + pos, 4);
      pos += 4;
      v = tag == 1 ? static_cast<double>(f) : prev + static_cast<double>(f);
    } else if (tag == 3) {
      if (pos + 8 > blob.size()) return std::nullopt;
      std::memcpy(&v, blob.data() + pos, 8);
      pos += 8;
    }
    out.emplace_back(slot, v);
    prev = v;
    ++i;
  }
  if (consumed) *consumed = pos;
  return out;
}

}  // namespace gpudoctor
