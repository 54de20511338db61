#include "store/sample_codec.h"

#include <cstring>

namespace gpudoctor {
namespace {

void PutBytes(std::string& out, const void* p, size_t n) {
  out.append(static_cast<const char*>(p), n);
}

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

bool SampleEncoder::Add(int slot, double value) {
  if (slot < 0 || slot >= kCodecSlots || slot <= last_slot_) return false;
  last_slot_ = slot;
  bitmap_ |= uint64_t{1} << slot;
  int tag;
  if (SameBits(value, prev_)) {
    tag = 0;
  } else if (static_cast<double>(static_cast<float>(value)) == value || lossy_) {
    float f = static_cast<float>(value);
    PutBytes(payload_, &f, 4);
    tag = 1;
    value = f;
  } else if (float d = static_cast<float>(value - prev_); prev_ + static_cast<double>(d) == value) {
    PutBytes(payload_, &d, 4);
    tag = 2;
  } else {
    PutBytes(payload_, &value, 8);
    tag = 3;
  }
  if (count_ % 4 == 0) tags_.push_back('\0');
  tags_.back() = static_cast<char>(tags_.back() | (tag << (2 * (count_ % 4))));
  prev_ = value;
  ++count_;
  return true;
}

void SampleEncoder::Reset(bool lossy) {
  lossy_ = lossy;
  last_slot_ = -1;
  count_ = 0;
  bitmap_ = 0;
  prev_ = 0;
  tags_.clear();
  payload_.clear();
}

std::string SampleEncoder::Finish() const {
  std::string out;
  out.reserve(8 + tags_.size() + payload_.size());
  FinishInto(&out);
  return out;
}

void SampleEncoder::FinishInto(std::string* out) const {
  uint8_t b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(bitmap_ >> (8 * i));
  PutBytes(*out, b, 8);
  *out += tags_;
  *out += payload_;
}

std::string EncodeSamples(const std::vector<std::pair<int, double>>& samples, bool lossy) {
  // The first sample of each slot, then in slot order.
  uint64_t bitmap = 0;
  double values[kCodecSlots] = {};
  for (const auto& [slot, value] : samples) {
    if (slot < 0 || slot >= kCodecSlots || (bitmap & (uint64_t{1} << slot))) continue;
    bitmap |= uint64_t{1} << slot;
    values[slot] = value;
  }
  SampleEncoder encoder(lossy);
  for (int slot = 0; slot < kCodecSlots; ++slot) {
    if (bitmap & (uint64_t{1} << slot)) encoder.Add(slot, values[slot]);
  }
  return encoder.Finish();
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
