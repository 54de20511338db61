#include "kmsg/xid_repeat_cache.h"

#include <cstring>
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

// The slot of a message: a hash of the 24 bytes after "NVRM: Xid (" (the PCI address and
// usually the code). Heads that share them share a slot pair; the head itself is compared.
constexpr size_t kWindowAt = kXidHead.size();
constexpr size_t kWindowEnd = kWindowAt + 24;

size_t WindowSlot(const char* msg, size_t slots) {
  uint64_t a, b, c;
  std::memcpy(&a, msg + kWindowAt, 8);
  std::memcpy(&b, msg + kWindowAt + 8, 8);
  std::memcpy(&c, msg + kWindowAt + 16, 8);
  uint64_t h =
      (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xff51afd7ed558ccdull) ^ (c * 0xc4ceb9fe1a85ec53ull);
  return static_cast<size_t>(h >> 40) & (slots - 1);
}

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

}  // namespace

const XidLine* XidRepeatCache::Match(std::string_view msg, int64_t* pid, const char** end) const {
  if (msg.size() < kWindowEnd) return nullptr;
  const size_t slot = WindowSlot(msg.data(), kSlots);
  const Entry* e = nullptr;
  for (size_t s : {slot, slot ^ 1}) {
    const Entry* c = slots_[s].get();
    if (c != nullptr && c->head < msg.size() && SameBytes(c->text.data(), msg.data(), c->head)) {
      e = c;
      break;
    }
  }
  if (e == nullptr) return nullptr;
  const size_t digits = PlainPid(msg, e->head, pid);
  if (digits == 0) return nullptr;
  const size_t at = e->head + digits;
  const size_t tail = e->text.size() - e->tail;
  if (msg.size() - at < tail || !SameBytes(msg.data() + at, e->text.data() + e->tail, tail)) {
    return nullptr;
  }
  const size_t stop = at + tail;
  if (stop != msg.size() && msg[stop] != '\n') return nullptr;
  *end = msg.data() + stop;
  return &e->x;
}

void XidRepeatCache::Learn(std::string_view msg, const XidLine& parsed) {
  const size_t head = HeadLength(msg);
  if (head == 0 || !parsed.pid) return;
  int64_t pid = 0;
  const size_t digits = PlainPid(msg, head, &pid);
  if (digits == 0 || pid != *parsed.pid) return;
  if (msg.size() < kWindowEnd || msg.find_first_of("\n\r") != std::string_view::npos) return;
  const size_t slot = WindowSlot(msg.data(), kSlots);
  size_t use = slot;
  for (size_t s : {slot, slot ^ 1}) {
    const Entry* c = slots_[s].get();
    if (c == nullptr || (c->head == head && std::memcmp(c->text.data(), msg.data(), head) == 0)) {
      use = s;
      break;
    }
  }
  auto e = std::make_unique<Entry>();
  e->text.assign(msg);
  e->head = head;
  e->tail = head + digits;
  // Views into the entry's own copy: parse it again (once per learnt line, not per repeat).
  NvrmLine n = ParseNvrmLine(e->text);
  if (n.type != NvrmLineType::kXid || n.xid.pid != parsed.pid) return;
  e->x = n.xid;
  if (!slots_[use]) ++learned_;
  slots_[use] = std::move(e);
}

}  // namespace gpudoctor
