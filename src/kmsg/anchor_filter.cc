#include "kmsg/anchor_filter.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace gpudoctor {

AnchorFilter::AnchorFilter(const std::vector<Anchor>& anchors, Simd max) {
  if (anchors.size() > 32) std::abort();  // PresentMask has one bit per anchor
  // Anchors with the same fingerprint share a bucket; the others are spread over 8 buckets.
  std::vector<std::string_view> bucket_fp;
  for (const Anchor& a : anchors) {
    size_t off = a.text.find(a.fingerprint);
    if (a.fingerprint.size() != 3 || off == std::string_view::npos) off = 0;
    std::string_view fp = a.text.substr(off, 3);
    size_t bucket = bucket_fp.size();
    for (size_t b = 0; b < bucket_fp.size(); ++b) {
      if (bucket_fp[b] == fp) bucket = b;
    }
    if (bucket == bucket_fp.size()) bucket_fp.push_back(fp);
    uint8_t bit = static_cast<uint8_t>(1u << (bucket % 8));
    entries_.push_back({a.text, off});
    entry_bucket_.push_back(bit);
    if (off > max_offset_) max_offset_ = off;
    for (int k = 0; k < 3; ++k) {
      uint8_t c = static_cast<uint8_t>(fp[k]);
      lo_[k][c & 15] |= bit;
      lo_[k][16 + (c & 15)] |= bit;
      hi_[k][c >> 4] |= bit;
      hi_[k][16 + (c >> 4)] |= bit;
      byte_[k][c] |= bit;
    }
  }
#if defined(__x86_64__)
  if (max >= Simd::kAvx2 && __builtin_cpu_supports("avx2")) simd_ = Simd::kAvx2;
  if (max >= Simd::kAvx512 && __builtin_cpu_supports("avx512f") &&
      __builtin_cpu_supports("avx512bw")) {
    simd_ = Simd::kAvx512;
  }
#else
  (void)max;
#endif
}

const char* AnchorFilter::Verify(const char* begin, const char* p, const char* end, uint8_t buckets,
                                 size_t* anchor_index) const {
  for (size_t k = 0; k < entries_.size(); ++k) {
    if (!(entry_bucket_[k] & buckets)) continue;
    const Entry& e = entries_[k];
    if (static_cast<size_t>(p - begin) < e.offset) continue;
    const char* start = p - e.offset;
    if (static_cast<size_t>(end - start) < e.text.size()) continue;
    if (std::memcmp(start, e.text.data(), e.text.size()) == 0) {
      if (anchor_index) *anchor_index = k;
      return start;
    }
  }
  return nullptr;
}

const char* AnchorFilter::FindScalar(const char* begin, const char* from, const char* end,
                                     size_t* anchor_index) const {
  const auto* u = reinterpret_cast<const uint8_t*>(from);
  const auto* uend = reinterpret_cast<const uint8_t*>(end);
  for (; u + 3 <= uend; ++u) {
    uint8_t m = byte_[0][u[0]];
    if (!m) continue;
    m &= byte_[1][u[1]] & byte_[2][u[2]];
    if (!m) continue;
    if (const char* hit = Verify(begin, reinterpret_cast<const char*>(u), end, m, anchor_index)) {
      return hit;
    }
  }
  return nullptr;
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) const char* AnchorFilter::FindAvx2(const char* begin,
                                                                   const char* from,
                                                                   const char* end,
                                                                   size_t* anchor_index) const {
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  const __m256i lo0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo_[0]));
  const __m256i lo1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo_[1]));
  const __m256i lo2 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo_[2]));
  const __m256i hi0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi_[0]));
  const __m256i hi1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi_[1]));
  const __m256i hi2 = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi_[2]));
  const __m256i zero = _mm256_setzero_si256();
  const char* p = from;
  alignas(32) uint8_t masks[32];
  while (p + 34 <= end) {
    __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 1));
    __m256i v2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2));
    __m256i m0 = _mm256_and_si256(
        _mm256_shuffle_epi8(lo0, _mm256_and_si256(v0, low4)),
        _mm256_shuffle_epi8(hi0, _mm256_and_si256(_mm256_srli_epi16(v0, 4), low4)));
    __m256i m1 = _mm256_and_si256(
        _mm256_shuffle_epi8(lo1, _mm256_and_si256(v1, low4)),
        _mm256_shuffle_epi8(hi1, _mm256_and_si256(_mm256_srli_epi16(v1, 4), low4)));
    __m256i m2 = _mm256_and_si256(
        _mm256_shuffle_epi8(lo2, _mm256_and_si256(v2, low4)),
        _mm256_shuffle_epi8(hi2, _mm256_and_si256(_mm256_srli_epi16(v2, 4), low4)));
    __m256i m = _mm256_and_si256(_mm256_and_si256(m0, m1), m2);
    uint32_t bits = ~static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(m, zero)));
    if (bits) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(masks), m);
      while (bits) {
        int i = __builtin_ctz(bits);
        bits &= bits - 1;
        if (const char* hit = Verify(begin, p + i, end, masks[i], anchor_index)) return hit;
      }
    }
    p += 32;
  }
  return FindScalar(begin, p, end, anchor_index);
}

// FindAvx2's nibble-mask test on 64 bytes a step (the 32-byte tables repeat in both halves).
__attribute__((target("avx512f,avx512bw"))) const char* AnchorFilter::FindAvx512(
    const char* begin, const char* from, const char* end, size_t* anchor_index) const {
  const __m512i low4 = _mm512_set1_epi8(0x0f);
#define GPUDOCTOR_TABLE512(t) \
  _mm512_broadcast_i64x4(_mm256_load_si256(reinterpret_cast<const __m256i*>(t)))
  const __m512i lo0 = GPUDOCTOR_TABLE512(lo_[0]), lo1 = GPUDOCTOR_TABLE512(lo_[1]),
                lo2 = GPUDOCTOR_TABLE512(lo_[2]);
  const __m512i hi0 = GPUDOCTOR_TABLE512(hi_[0]), hi1 = GPUDOCTOR_TABLE512(hi_[1]),
                hi2 = GPUDOCTOR_TABLE512(hi_[2]);
#undef GPUDOCTOR_TABLE512
  const char* p = from;
  alignas(64) uint8_t masks[64];
  while (p + 66 <= end) {
    const __m512i v0 = _mm512_loadu_si512(p);
    const __m512i v1 = _mm512_loadu_si512(p + 1);
    const __m512i v2 = _mm512_loadu_si512(p + 2);
    const __m512i m0 = _mm512_and_si512(
        _mm512_shuffle_epi8(lo0, _mm512_and_si512(v0, low4)),
        _mm512_shuffle_epi8(hi0, _mm512_and_si512(_mm512_srli_epi16(v0, 4), low4)));
    const __m512i m1 = _mm512_and_si512(
        _mm512_shuffle_epi8(lo1, _mm512_and_si512(v1, low4)),
        _mm512_shuffle_epi8(hi1, _mm512_and_si512(_mm512_srli_epi16(v1, 4), low4)));
    const __m512i m2 = _mm512_and_si512(
        _mm512_shuffle_epi8(lo2, _mm512_and_si512(v2, low4)),
        _mm512_shuffle_epi8(hi2, _mm512_and_si512(_mm512_srli_epi16(v2, 4), low4)));
    const __m512i m = _mm512_and_si512(_mm512_and_si512(m0, m1), m2);
    uint64_t bits = _mm512_test_epi8_mask(m, m);
    if (bits) {
      _mm512_store_si512(masks, m);
      while (bits) {
        const int i = __builtin_ctzll(bits);
        bits &= bits - 1;
        if (const char* hit = Verify(begin, p + i, end, masks[i], anchor_index)) return hit;
      }
    }
    p += 64;
  }
  return FindAvx2(begin, p, end, anchor_index);
}
#else
const char* AnchorFilter::FindAvx2(const char* begin, const char* from, const char* end,
                                   size_t* anchor_index) const {
  return FindScalar(begin, from, end, anchor_index);
}
const char* AnchorFilter::FindAvx512(const char* begin, const char* from, const char* end,
                                     size_t* anchor_index) const {
  return FindScalar(begin, from, end, anchor_index);
}
#endif

const char* AnchorFilter::Find(const char* begin, const char* from, const char* end,
                               size_t* anchor_index) const {
  (void)begin;  // anchors must start at or after `from`; bytes before it are never read
  switch (simd_) {
    case Simd::kAvx512:
      return FindAvx512(from, from, end, anchor_index);
    case Simd::kAvx2:
      return FindAvx2(from, from, end, anchor_index);
    case Simd::kScalar:
      break;
  }
  return FindScalar(from, from, end, anchor_index);
}

uint32_t AnchorFilter::PresentMask(const char* begin, const char* end) const {
  uint32_t mask = 0;
  size_t k = 0;
  for (const char* from = begin; from < end;) {
    const char* hit = Find(begin, from, end, &k);
    if (hit == nullptr) break;
    mask |= 1u << k;
    from = hit + 1;
  }
  return mask;
}

}  // namespace gpudoctor
