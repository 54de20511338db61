// XidRepeatCache: the Xid-storm shortcut of the kernel-log scanner. A storm repeats a few Xid
// lines (the same GPU, code, process name and text) that differ only in the pid; this cache keeps
// the parsed form of the last clean line seen for each distinct head ("NVRM: Xid (PCI:...): 13,
// pid=") and answers a line whose head and tail (everything after the pid digits) are
// byte-identical to a cached one with that parse, the pid replaced: no split, no search, no copy.
// A line that differs anywhere, or whose pid is not a plain decimal (1-9 digits, no leading
// zero), is not answered and goes through ParseNvrmLine as before (which then Learn()s it).
// The answer equals ParseNvrmLine's on the same text (tests/unit/kmsg_repeat_cache_test.cc,
// tests/fuzz/kmsg_scan_fuzz.cc compare both). Bounded: kSlots entries. Not thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kmsg/event_aggregator.h"
#include "kmsg/xid_parser.h"

namespace gpudoctor {

class XidRepeatCache {
 public:
  static constexpr size_t kSlots = 256;

  XidRepeatCache() = default;
  ~XidRepeatCache();
  XidRepeatCache(const XidRepeatCache&) = delete;
  XidRepeatCache& operator=(const XidRepeatCache&) = delete;

  // `msg` starts at "NVRM: Xid (" and runs to the end of the buffer (not only of its line).
  // When its line repeats a cached one except for the pid, returns the cached parse (valid until
  // the next Learn; its pid is the cached line's), sets *pid to this line's pid and *end to the
  // end of the message: the '\n' that ends it, or msg.data() + msg.size() when the buffer ends
  // there, and, when `hint` is given, *hint to the entry's aggregator hint (the caller's to use
  // and update; reset when the entry is learnt anew). Returns nullptr otherwise (*pid, *end,
  // *hint unspecified).
  const XidLine* Match(std::string_view msg, int64_t* pid, const char** end,
                       EventSlotHint** hint = nullptr) const;

  // Remembers a message that ParseNvrmLine parsed as an Xid with `parsed.pid` read from plain
  // digits. `msg` is exactly one clean line's message (no '\n', no '\r'). Messages of another
  // shape are ignored.
  void Learn(std::string_view msg, const XidLine& parsed);

  bool empty() const { return learned_ == 0; }

  // MatchFast's answer.
  struct FastHit {
    const XidLine* x = nullptr;     // the cached parse (its pid is the cached line's)
    EventSlotHint* hint = nullptr;  // the entry's aggregator hint
    int64_t pid = 0;                // this line's pid
    const char* end = nullptr;      // the '\n' that ends the line
    bool plain = false;             // x has no MIG instance, NVLink tail or recovery action
    bool reset = false;             // x's "RST: Yes"
    bool drain_reset = false;       // x's "D-RST: Yes"
  };
  // How many bytes MatchFast reads from msg: the caller guarantees that many.
  static constexpr size_t kFastSpan = 48 + 8 + 192;
  // Match for the common case, inline (the Xid-storm loop calls it on every line): `msg` has at
  // least kFastSpan readable bytes. True (and *hit filled) when msg's line, with its '\n',
  // repeats a cached line whose head and tail fit the fixed blocks, with a pid of 1-7 digits;
  // false when Match may still answer (a longer head, tail or pid, a line near the buffer's end)
  // or would not. Where both answer, the answers are the same.
  inline bool MatchFast(const char* msg, FastHit* hit) const;

  // Heads and tails up to these lengths are compared in fixed blocks, without a loop whose
  // length depends on the line (a storm alternates between a few lines of different lengths,
  // and such a loop's exit is then mispredicted on most lines); longer ones byte run by byte run.
  static constexpr size_t kHeadBlock = 48;
  static constexpr size_t kTailBlock = 192;
  // One cached line. Public for the scanner's storm loops (read only); Learn writes it. What a
  // repeat reads comes first (the first two cache lines, then the bytes compared).
  struct alignas(64) Entry {
    size_t head = 0;     // text[0, head) ends with "pid="
    size_t tail_nl = 0;  // tail length with the '\n'
    // The masks below as bit masks (bit i: byte i), for AVX-512's masked compares.
    uint64_t head_bits = 0;
    uint64_t tail_bits[kTailBlock / 64] = {};
    bool fast = false;           // head <= kHeadBlock and tail_nl <= kTailBlock: MatchFast answers
    bool plain = false;          // FastHit::plain
    bool reset = false;          // x.reset_required.value_or(false)
    bool drain_reset = false;    // x.drain_reset_required.value_or(false)
    mutable EventSlotHint hint;  // where the aggregator keeps x's entry (the scanner's to set)
    // text's head, and its tail followed by '\n', zero-padded; each with a mask of 0xff over
    // its bytes (0 past them): a line matches when (bytes ^ these) & mask is zero throughout.
    alignas(16) unsigned char head_bytes[kHeadBlock] = {};
    alignas(64) unsigned char tail_bytes[kTailBlock] = {};
    alignas(16) unsigned char head_mask[kHeadBlock] = {};
    alignas(16) unsigned char tail_mask[kTailBlock] = {};
    std::string text;  // the message
    size_t tail = 0;   // text[tail, end): after the pid digits, starts with ','
    XidLine x;         // ParseNvrmLine(text).xid, views into text
  };
  // The kSlots entries (nullptr before the first Learn). A message's line can only be cached in
  // entry SlotOf(msg) or SlotOf(msg) ^ 1; MatchFast shows how they are compared.
  const Entry* slots() const { return slots_; }
  static size_t SlotOf(const char* msg);

  // What UseStorage needs: kStorageBytes bytes, aligned to kStorageAlign.
  static constexpr size_t kStorageBytes = kSlots * sizeof(Entry);
  static constexpr size_t kStorageAlign = alignof(Entry);
  // Builds the table, when the first Learn needs it, in `storage` (kStorageBytes, aligned to
  // kStorageAlign, zero or not, owned by the caller and outliving this cache: the scanner's
  // MappedPages) instead of on the heap. Ignored once the table exists.
  void UseStorage(void* storage) {
    if (slots_ == nullptr) storage_ = storage;
  }

 private:
  // kSlots entries, allocated on the first Learn (a scanner that never sees an Xid line pays
  // nothing); an entry with an empty text is free.
  // In storage_ when UseStorage gave one (destroyed, not freed, here), else owned_.
  Entry* slots_ = nullptr;
  std::unique_ptr<Entry[]> owned_;
  void* storage_ = nullptr;
  size_t learned_ = 0;
};

namespace xid_repeat_detail {

inline constexpr size_t kXidHeadBytes = 11;  // "NVRM: Xid ("

// The slot of a message: a hash of the 24 bytes after "NVRM: Xid (" (the PCI address and
// usually the code). Heads that share them share a slot pair; the head itself is compared.
inline size_t WindowSlot(const char* msg, size_t slots) {
  uint64_t a, b, c;
  std::memcpy(&a, msg + kXidHeadBytes, 8);
  std::memcpy(&b, msg + kXidHeadBytes + 8, 8);
  std::memcpy(&c, msg + kXidHeadBytes + 16, 8);
  uint64_t h =
      (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xff51afd7ed558ccdull) ^ (c * 0xc4ceb9fe1a85ec53ull);
  return static_cast<size_t>(h >> 40) & (slots - 1);
}

// Whether (a ^ bytes) & mask is zero over N bytes (a multiple of 16): a fixed number of blocks,
// no early exit, so the cost and the branches are the same whatever the line.
template <size_t N>
inline bool SameMasked(const char* a, const unsigned char* bytes, const unsigned char* mask) {
  static_assert(N % 16 == 0);
#if defined(__SSE2__)
  __m128i acc = _mm_setzero_si128();
  for (size_t i = 0; i < N; i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
    const __m128i y = _mm_load_si128(reinterpret_cast<const __m128i*>(bytes + i));
    const __m128i m = _mm_load_si128(reinterpret_cast<const __m128i*>(mask + i));
    acc = _mm_or_si128(acc, _mm_and_si128(_mm_xor_si128(x, y), m));
  }
  return _mm_movemask_epi8(_mm_cmpeq_epi8(acc, _mm_setzero_si128())) == 0xffff;
#else
  uint64_t acc = 0;
  for (size_t i = 0; i < N; i += 8) {
    uint64_t x, y, m;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, bytes + i, 8);
    std::memcpy(&m, mask + i, 8);
    acc |= (x ^ y) & m;
  }
  return acc == 0;
#endif
}

// The pid digits in the 8 bytes at p when they are 1-7 digits without a leading zero followed
// by ',': their number (the value in *value); 0 otherwise (not such a pid, or 8 digits or more).
inline size_t ShortPid8(const char* p, int64_t* value) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  // A byte is a digit when its high nibble is 3 and adding 6 keeps it there (low nibble <= 9).
  const uint64_t non_digit = ((v & (kOnes * 0xf0)) ^ (kOnes * 0x30)) |
                             (((v + kOnes * 0x06) & (kOnes * 0xf0)) ^ (kOnes * 0x30));
  // (A carry of +6 out of a non-digit byte only changes bytes after the first non-digit.)
  if (non_digit == 0) return 0;
  const size_t n = static_cast<size_t>(__builtin_ctzll(non_digit)) / 8;
  if (n == 0 || p[0] == '0' || p[n] != ',') return 0;
  // The n digits moved to the top bytes (zeros before them), then summed pairwise: 8 digits,
  // the first one in the lowest byte (little-endian load).
  uint64_t d = (v - kOnes * 0x30) << (8 * (8 - n));
  d = ((d & 0x0f0f0f0f0f0f0f0full) * 2561) >> 8;
  d = ((d & 0x00ff00ff00ff00ffull) * 6553601) >> 16;
  d = ((d & 0x0000ffff0000ffffull) * 42949672960001ull) >> 32;
  *value = static_cast<int64_t>(d);
  return n;
}

}  // namespace xid_repeat_detail

inline size_t XidRepeatCache::SlotOf(const char* msg) {
  return xid_repeat_detail::WindowSlot(msg, kSlots);
}

inline bool XidRepeatCache::MatchFast(const char* msg, FastHit* hit) const {
  using namespace xid_repeat_detail;
  if (!slots_) return false;
  const size_t slot = WindowSlot(msg, kSlots);
  const Entry* e = &slots_[slot];
  if (!e->fast || !SameMasked<kHeadBlock>(msg, e->head_bytes, e->head_mask)) {
    e = &slots_[slot ^ 1];
    if (!e->fast || !SameMasked<kHeadBlock>(msg, e->head_bytes, e->head_mask)) return false;
  }
  const size_t digits = ShortPid8(msg + e->head, &hit->pid);
  if (digits == 0) return false;
  const char* at = msg + e->head + digits;
  if (!SameMasked<kTailBlock>(at, e->tail_bytes, e->tail_mask)) return false;
  hit->x = &e->x;
  hit->hint = &e->hint;
  hit->end = at + e->tail_nl - 1;
  hit->plain = e->plain;
  hit->reset = e->reset;
  hit->drain_reset = e->drain_reset;
  return true;
}

}  // namespace gpudoctor
