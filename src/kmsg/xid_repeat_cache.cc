#include "kmsg/xid_repeat_cache.h"

#include <cstring>
#include <new>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpudoctor {
namespace {

constexpr std::string_view kXidHead = "NVRM: Xid (";
constexpr std::string_view kPidKey = ", pid=";

// Length of the head "NVRM: Xid (...): CODE, pid=" of msg, or 0 when msg has another shape.
size_t HeadLength(std::string_view msg) {
  if (msg.size() < kXidHead.size() || msg.compare(0, kXidHead.size(), kXidHead) != 0) return 0;
  const size_t from = kXidHead.size();
  const size_t window = std::min<size_t>(msg.size() - from, 65);
  const void* close = std::memchr(msg.data() + from, ')', window);
  if (close == nullptr) return 0;
  size_t i = static_cast<size_t>(static_cast<const char*>(close) - msg.data()) + 1;
  if (msg.size() < i + 2 || msg[i] != ':' || msg[i + 1] != ' ') return 0;
  i += 2;
  size_t digits = 0;
  while (i < msg.size() && msg[i] >= '0' && msg[i] <= '9' && digits < 6) {
    ++i;
    ++digits;
  }
  if (digits == 0 || digits > 5) return 0;
  if (msg.size() < i + kPidKey.size() || msg.compare(i, kPidKey.size(), kPidKey) != 0) return 0;
  return i + kPidKey.size();
}

// The pid digits at msg[at, ...): 1-9 digits, no leading zero, followed by ','. Returns the
// number of digits (0: not such a pid) and the value.
size_t PlainPid(std::string_view msg, size_t at, int64_t* value) {
  if (at >= msg.size() || msg[at] < '1' || msg[at] > '9') return 0;
  int64_t v = 0;
  size_t n = 0;
  while (at + n < msg.size() && n < 10 && msg[at + n] >= '0' && msg[at + n] <= '9') {
    v = v * 10 + (msg[at + n] - '0');
    ++n;
  }
  if (n > 9 || at + n >= msg.size() || msg[at + n] != ',') return 0;
  *value = v;
  return n;
}

// PlainPid for a message with at least 8 bytes from `at`: the digits found 8 bytes at a time,
// without a loop (a storm's pids have 1-6 digits in no order). Pids of 8 or 9 digits, and
// anything that is not a plain pid, are left to PlainPid.
inline size_t PlainPidWide(std::string_view msg, size_t at, int64_t* value) {
  uint64_t v;
  std::memcpy(&v, msg.data() + at, 8);
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  // A byte is a digit when its high nibble is 3 and adding 6 keeps it there (low nibble <= 9).
  const uint64_t non_digit = ((v & (kOnes * 0xf0)) ^ (kOnes * 0x30)) |
                             (((v + kOnes * 0x06) & (kOnes * 0xf0)) ^ (kOnes * 0x30));
  // (A carry of +6 out of a non-digit byte only changes bytes after the first non-digit.)
  const size_t n = non_digit == 0 ? 8 : static_cast<size_t>(__builtin_ctzll(non_digit)) / 8;
  if (n == 0 || n >= 8) return PlainPid(msg, at, value);
  if (msg[at] == '0' || msg[at + n] != ',') return 0;
  // The n digits moved to the top bytes (zeros before them), then summed pairwise: 8 digits,
  // the first one in the lowest byte (little-endian load).
  uint64_t d = (v - kOnes * 0x30) << (8 * (8 - n));
  d = ((d & 0x0f0f0f0f0f0f0f0full) * 2561) >> 8;
  d = ((d & 0x00ff00ff00ff00ffull) * 6553601) >> 16;
  d = ((d & 0x0000ffff0000ffffull) * 42949672960001ull) >> 32;
  *value = static_cast<int64_t>(d);
  return n;
}

using xid_repeat_detail::SameMasked;
using xid_repeat_detail::WindowSlot;
constexpr size_t kWindowEnd = kXidHead.size() + 24;

// memcmp(a, b, n) == 0, inline: the two compares of a line are short (30-150 bytes) and a call
// into libc costs as much as the compare.
inline bool SameBytes(const char* a, const char* b, size_t n) {
#if defined(__SSE2__)
  if (n >= 16) {
    const char* last_a = a + n - 16;
    const char* last_b = b + n - 16;
    for (; a < last_a; a += 16, b += 16) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
      const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
      if (_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) != 0xffff) return false;
    }
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(last_a));
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(last_b));
    return _mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) == 0xffff;
  }
#endif
  return std::memcmp(a, b, n) == 0;
}

// Copies s into bytes[0, n) zero-padded, and sets mask to 0xff over s's bytes (0 past them).
void FillMasked(std::string_view s, unsigned char* bytes, unsigned char* mask, size_t n) {
  std::memset(bytes, 0, n);
  std::memset(mask, 0, n);
  std::memcpy(bytes, s.data(), s.size());
  std::memset(mask, 0xff, s.size());
}

}  // namespace

const XidLine* XidRepeatCache::Match(std::string_view msg, int64_t* pid, const char** end,
                                     EventSlotHint** hint) const {
  if (msg.size() < kWindowEnd || !slots_) return nullptr;
  const size_t slot = WindowSlot(msg.data(), kSlots);
  const Entry* e = nullptr;
  for (size_t s : {slot, slot ^ 1}) {
    const Entry& c = slots_[s];
    if (c.head == 0 || c.head >= msg.size()) continue;  // free, or longer than what is left
    const bool same = c.head <= kHeadBlock && msg.size() >= kHeadBlock
                          ? SameMasked<kHeadBlock>(msg.data(), c.head_bytes, c.head_mask)
                          : SameBytes(c.text.data(), msg.data(), c.head);
    if (same) {
      e = &c;
      break;
    }
  }
  if (e == nullptr) return nullptr;
  const size_t digits =
      msg.size() - e->head >= 8 ? PlainPidWide(msg, e->head, pid) : PlainPid(msg, e->head, pid);
  if (digits == 0) return nullptr;
  if (hint != nullptr) *hint = &e->hint;
  const size_t at = e->head + digits;
  if (e->tail_nl <= kTailBlock && msg.size() - at >= kTailBlock) {
    // The tail and the '\n' after it in one fixed-size masked compare.
    if (!SameMasked<kTailBlock>(msg.data() + at, e->tail_bytes, e->tail_mask)) return nullptr;
    *end = msg.data() + at + e->tail_nl - 1;
    return &e->x;
  }
  const size_t tail = e->text.size() - e->tail;
  if (msg.size() - at < tail || !SameBytes(msg.data() + at, e->text.data() + e->tail, tail)) {
    return nullptr;
  }
  const size_t stop = at + tail;
  if (stop != msg.size() && msg[stop] != '\n') return nullptr;
  *end = msg.data() + stop;
  return &e->x;
}

XidRepeatCache::~XidRepeatCache() {
  if (slots_ != nullptr && owned_ == nullptr) {
    for (size_t i = 0; i < kSlots; ++i) slots_[i].~Entry();
  }
}

void XidRepeatCache::Learn(std::string_view msg, const XidLine& parsed) {
  const size_t head = HeadLength(msg);
  if (head == 0 || !parsed.pid) return;
  int64_t pid = 0;
  const size_t digits = PlainPid(msg, head, &pid);
  if (digits == 0 || pid != *parsed.pid) return;
  if (msg.size() < kWindowEnd || msg.find_first_of("\n\r") != std::string_view::npos) return;
  if (NvrmLine n = ParseNvrmLine(msg); n.type != NvrmLineType::kXid || n.xid.pid != parsed.pid) {
    return;
  }
  if (!slots_) {
    if (storage_ != nullptr) {
      slots_ = static_cast<Entry*>(storage_);
      for (size_t i = 0; i < kSlots; ++i) new (&slots_[i]) Entry();
    } else {
      owned_ = std::make_unique<Entry[]>(kSlots);
      slots_ = owned_.get();
    }
  }
  const size_t slot = WindowSlot(msg.data(), kSlots);
  size_t use = slot;
  for (size_t s : {slot, slot ^ 1}) {
    const Entry& c = slots_[s];
    if (c.head == 0 || (c.head == head && std::memcmp(c.text.data(), msg.data(), head) == 0)) {
      use = s;
      break;
    }
  }
  Entry& e = slots_[use];
  if (e.head == 0) ++learned_;
  e.text.assign(msg);
  e.head = head;
  e.tail = head + digits;
  e.hint = {};
  // Views into the entry's own copy: parse it again (once per learnt line, not per repeat).
  e.x = ParseNvrmLine(e.text).xid;
  std::string_view text(e.text);
  if (head <= kHeadBlock) FillMasked(text.substr(0, head), e.head_bytes, e.head_mask, kHeadBlock);
  e.tail_nl = text.size() - e.tail + 1;
  if (e.tail_nl <= kTailBlock) {
    FillMasked(text.substr(e.tail), e.tail_bytes, e.tail_mask, kTailBlock);
    e.tail_bytes[e.tail_nl - 1] = '\n';
    e.tail_mask[e.tail_nl - 1] = 0xff;
  }
  e.head_bits = head <= kHeadBlock ? (uint64_t{1} << head) - 1 : 0;
  for (size_t b = 0; b < kTailBlock / 64; ++b) {
    uint64_t bits = 0;
    for (size_t i = 0; i < 64; ++i) bits |= uint64_t{e.tail_mask[b * 64 + i] != 0} << i;
    e.tail_bits[b] = e.tail_nl <= kTailBlock ? bits : 0;
  }
  e.fast = head <= kHeadBlock && e.tail_nl <= kTailBlock;
  e.reset = e.x.reset_required.value_or(false);
  e.drain_reset = e.x.drain_reset_required.value_or(false);
  e.plain = !e.x.gpu_instance && e.x.nvlink_unit.empty() && e.x.recovery_action.empty();
}

}  // namespace gpudoctor
