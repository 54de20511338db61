// Compact encoding of one series' samples over a fixed window of slots (60 one-second slots of a
// minute, or 60 one-minute slots of an hour): the history store keeps one blob per series and
// window instead of one row per sample, which keeps 8 GPUs at 1 s under 200 MiB.
//
// Layout: u64 little-endian presence bitmap (bit i: slot i present), then one 2-bit tag per
// present sample (4 per byte), then the payloads in slot order. Tags: 0 the previous value again
// (the first sample's "previous" is 0), 1 float32 exactly representing the value (lossy mode:
// rounded to float32), 2 float32 difference from the previous value that reproduces it exactly,
// 3 a full double. Lossy mode (gauges, rollups) stores float32 (7 significant digits); counters
// are stored exactly. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpudoctor {

inline constexpr int kCodecSlots = 60;

// samples: (slot 0..59, value), slots strictly increasing. Out-of-range slots are skipped; of
// samples at the same slot the first is kept.
std::string EncodeSamples(const std::vector<std::pair<int, double>>& samples, bool lossy);

// EncodeSamples one sample at a time, for a writer that sees a window's samples in slot order
// and must not hold them all (the store's minute pack): Add() in strictly increasing slot order,
// then Finish() gives the bytes EncodeSamples gives for the same samples. Holds the bitmap, the
// tags and the payloads only (≈ 4.25 bytes a sample that changed, 0.25 one that did not).
// Not thread-safe (one writer).
class SampleEncoder {
 public:
  explicit SampleEncoder(bool lossy) : lossy_(lossy) {}
  // Empty again (as if constructed with `lossy`), keeping the buffers' capacity: an encoder used
  // minute after minute allocates nothing once grown.
  void Reset(bool lossy);
  // False (nothing added) for a slot out of range or not above the last one added.
  bool Add(int slot, double value);
  size_t size() const { return count_; }
  std::string Finish() const;
  // Finish()'s bytes appended to *out.
  void FinishInto(std::string* out) const;

 private:
  bool lossy_;
  int last_slot_ = -1;
  size_t count_ = 0;
  uint64_t bitmap_ = 0;
  double prev_ = 0;
  std::string tags_;     // 2 bits a sample, 4 a byte
  std::string payload_;  // the values' bytes in slot order
};
// nullopt on malformed input (never reads past the end). `consumed` gets the bytes used.
std::optional<std::vector<std::pair<int, double>>> DecodeSamples(std::string_view blob,
                                                                 size_t* consumed = nullptr);

}  // namespace gpudoctor
