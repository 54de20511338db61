// AnchorFilter: finds the next occurrence of any of a small set of literal keywords ("anchors")
// in a buffer, fast. Each anchor has a 3-byte fingerprint; a SIMD pass (AVX2 where the CPU has
// it, AVX-512BW where it has that, else a scalar table walk) flags positions whose three bytes
// match some fingerprint's nibble masks (8 buckets, in the manner of the "Teddy" multi-literal
// matcher), then each flagged position is verified with memcmp against the anchors of its buckets.
// This keeps the per-byte cost of scanning a kernel log far below parsing every line. Immutable
// after construction; thread-safe for concurrent Find calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace gpudoctor {

struct Anchor {
  std::string_view text;         // literal, >= 3 bytes, no '\n'
  std::string_view fingerprint;  // 3 bytes that occur in text (the rarest part)
};

class AnchorFilter {
 public:
  // The widest search the CPU can run, capped at `max` (tests run each one).
  enum class Simd { kScalar, kAvx2, kAvx512 };
  explicit AnchorFilter(const std::vector<Anchor>& anchors, Simd max = Simd::kAvx512);

  // Position of the first byte of the first anchor occurrence that starts at or after `from`
  // and lies fully inside [begin, end); nullptr when none. `anchor_index` (optional) receives
  // which anchor matched.
  const char* Find(const char* begin, const char* from, const char* end,
                   size_t* anchor_index = nullptr) const;

  // Bit k set when anchor k (in constructor order; at most 32 anchors) occurs in [begin, end).
  uint32_t PresentMask(const char* begin, const char* end) const;

  Simd simd() const { return simd_; }

 private:
  struct Entry {
    std::string_view text;
    size_t offset;  // fingerprint position inside text
  };
  // Checks the anchors of bucket bits `buckets` at fingerprint position p.
  const char* Verify(const char* begin, const char* p, const char* end, uint8_t buckets,
                     size_t* anchor_index) const;
  const char* FindScalar(const char* begin, const char* from, const char* end,
                         size_t* anchor_index) const;
  const char* FindAvx2(const char* begin, const char* from, const char* end,
                       size_t* anchor_index) const;
  // 64 bytes a step; the last 65 or fewer bytes go to FindAvx2.
  const char* FindAvx512(const char* begin, const char* from, const char* end,
                         size_t* anchor_index) const;

  std::vector<Entry> entries_;
  std::vector<uint8_t> entry_bucket_;
  size_t max_offset_ = 0;
  alignas(32) uint8_t lo_[3][32] = {};  // nibble masks, duplicated for both AVX2 lanes
  alignas(32) uint8_t hi_[3][32] = {};
  uint8_t byte_[3][256] = {};  // exact per-byte bucket masks for the scalar path
  Simd simd_ = Simd::kScalar;
};

}  // namespace gpudoctor
