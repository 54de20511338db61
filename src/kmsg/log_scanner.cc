#include "kmsg/log_scanner.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>

#include "core/strings.h"
#include "facts/gpu_facts.h"
#include "kmsg/anchor_filter.h"
#include "kmsg/kernel_signals.h"
#include "kmsg/xid_parser.h"

namespace gpudoctor {
namespace {

// StartsWith, inline: the per-line parsers call it with constant prefixes many times a line.
inline bool HasPrefix(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

// Every line the parsers care about contains one of these; the fingerprint is a rare 3-byte
// part of it. The nibble masks of fingerprints that share a bucket combine, so one new anchor can
// flag common text: "detected stall" (any 3 bytes of it) as the RCU anchor made `logs` ~15%
// slower on bench/kmsg_gen.py's mix, "cu_" with "k w" 2x slower. Count the candidates of a new set
// on that mix before choosing (docs/cost.md, twenty-first round). Anchors that share a fingerprint
// share a bucket. The order is AnchorId's.
enum AnchorId : uint32_t {
  kNvrmAnchor,
  kAerAnchor,
  kPcieBusErrorAnchor,
  kBlockedAnchor,
  kOomKillAnchor,
  kKilledProcessAnchor,
  kHardwareErrorAnchor,
  kMachineCheckAnchor,
  kLinkAnchor,
  kLinuxVersionAnchor,
  kNetdevWatchdogAnchor,
  kTemperatureAnchor,
  kJournalBootAnchor,
  kJournalRebootAnchor,
  kNvidiaFrameAnchor,
  kLinkStatusAnchor,
  kSoftLockupAnchor,
  kHardLockupAnchor,
  kRcuStallAnchor,
  kSxidAnchor,
  kGspWatchdogAnchor,
};

const AnchorFilter& Filter() {
  static const AnchorFilter filter({
      {"NVRM: ", "NVR"},
      {"AER", "AER"},
      {"PCIe Bus Error", "e B"},
      {"blocked for more than", "r m"},
      {"oom-kill", "m-k"},
      {"Killed process", "Kil"},
      {"Hardware Error", "Har"},
      {"Machine check events", "Mac"},
      {"Link ", "Lin"},
      {"Linux version ", "Lin"},
      {"NETDEV WATCHDOG", "WAT"},
      {"temperature", "mpe"},
      {"-- Boot ", "-- "},
      {"-- Reboot --", "-- "},
      {"[nvidia", "[nv"},
      {"link status ", "k s"},  // bonding driver
      {"soft lockup", "oft"},
      {"hard LOCKUP", "CKU"},
      {"INFO: rcu_", "NFO"},                 // RCU stall reports
      {"SXid (PCI:", "SXi"},                 // NVSwitch
      {"GSP task watchdog timeout", "dog"},  // a GSP-CrashCat report's reason line
  });
  return filter;
}

constexpr uint32_t Bit(AnchorId id) { return 1u << id; }

// Detail lines read after a PCIe Bus Error report: the device line and up to five error bits
// (a report rarely sets more; those past it go unnamed, the report is still counted).
constexpr int kAerDetailLines = 6;

// After "Link ": the words NIC drivers print for a state change.
bool LooksLikeLinkChange(const char* p, const char* end) {
  static constexpr std::string_view kWords[] = {"down", "up",     "Down", "Up",
                                                "DOWN", "ACTIVE", "is "};
  std::string_view rest(p, static_cast<size_t>(end - p));
  for (std::string_view w : kWords) {
    if (rest.substr(0, w.size()) == w) return true;
  }
  return false;
}

bool Contains(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

// Contains(s, needle) for a needle that contains anchor `id`: when the anchor is absent from the
// line (its bit clear in `present`), the needle cannot be there either and no search is needed.
bool Contains(uint32_t present, AnchorId id, std::string_view s, std::string_view needle) {
  return (present & Bit(id)) != 0 && Contains(s, needle);
}

// Version token at the start of s ("535.54.03," → "535.54.03"): digits, letters, '.', '-', '_',
// without a trailing '.' (the sentence's full stop).
std::string_view VersionToken(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && n < 32 &&
         ((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'z') ||
          (s[n] >= 'A' && s[n] <= 'Z') || s[n] == '.' || s[n] == '-' || s[n] == '_')) {
    ++n;
  }
  while (n > 0 && s[n - 1] == '.') --n;
  return s.substr(0, n);
}

// The joined text of an "API mismatch" report, continuation prefixes removed: "the client
// ['name' (pid N) ]has the version X, but this kernel module has the version Y.  Please ...".
struct MismatchParts {
  std::string_view client, module, name, pid;
};
MismatchParts ParseMismatchText(std::string_view t) {
  MismatchParts p;
  if (HasPrefix(t, "the client '")) {
    std::string_view rest = t.substr(12);
    size_t q = rest.find('\'');
    if (q != std::string_view::npos && q <= 64) {
      p.name = rest.substr(0, q);
      rest = rest.substr(q + 1);
      if (HasPrefix(rest, " (pid ")) {
        size_t close = rest.find(')');
        if (close != std::string_view::npos && close <= 20) p.pid = rest.substr(6, close - 6);
      }
    }
  }
  constexpr std::string_view kClient = "has the version ";
  constexpr std::string_view kModule = "kernel module has the version ";
  size_t c = t.find(kClient);
  if (c == std::string_view::npos) return p;
  p.client = VersionToken(t.substr(c + kClient.size()));
  size_t m = t.find(kModule, c + kClient.size());
  if (m != std::string_view::npos) p.module = VersionToken(t.substr(m + kModule.size()));
  return p;
}

// Appends s to an "API mismatch" text. A journal entry keeps the report as one message whose
// newlines became '?' (Repair): "...but?NVRM: this kernel module ..." joins like separate lines.
void AppendMismatchText(std::string& out, std::string_view s) {
  for (size_t at; (at = s.find("?NVRM: ")) != std::string_view::npos;) {
    out.append(s.substr(0, at));
    out += ' ';
    s.remove_prefix(at + 7);
  }
  out.append(s);
}

bool CloseInTime(const LogTime& a, const LogTime& b) {
  if (a.boot_us && b.boot_us) return std::llabs(*a.boot_us - *b.boot_us) <= 2000000;
  if (a.wall_us && b.wall_us) return std::llabs(*a.wall_us - *b.wall_us) <= 2000000;
  return true;  // no stamps: adjacency is all we have
}

}  // namespace

namespace {

// True when none of the 8 bytes has its top bit set or is below 0x20 or is 0x7f, i.e. all are
// printable ASCII (a tab makes it false and falls back to the byte loop, which allows it).
bool AllPrintableAscii8(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  uint64_t below_space = (v - kOnes * 0x20) & ~v;  // high bit set where byte < 0x20 (or >= 0x80)
  uint64_t is_del = ((v ^ (kOnes * 0x7f)) - kOnes) & ~(v ^ (kOnes * 0x7f));  // byte == 0x7f
  return ((v | below_space | is_del) & kHigh) == 0;
}

#if defined(__SSE2__)
// The same test for 16 bytes: as signed bytes, printable ASCII is > 0x1f (bytes >= 0x80 are
// negative) and not 0x7f.
bool AllPrintableAscii16(const unsigned char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i printable = _mm_andnot_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f)),
                                             _mm_cmpgt_epi8(v, _mm_set1_epi8(0x1f)));
  return _mm_movemask_epi8(printable) == 0xffff;
}
#endif

}  // namespace

bool IsCleanLogText(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* e = p + s.size();
  // Kernel logs are nearly all printable ASCII: skip it 16 (SSE2) or 8 bytes at a time.
#if defined(__SSE2__)
  while (e - p >= 16 && AllPrintableAscii16(p)) p += 16;
#endif
  while (e - p >= 8 && AllPrintableAscii8(p)) p += 8;
  while (p < e) {
    unsigned char c = *p;
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
      ++p;
      continue;
    }
    int n;
    uint32_t cp;
    if ((c & 0xe0) == 0xc0) {
      n = 1;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (e - p <= n) return false;
    for (int k = 1; k <= n; ++k) {
      if ((p[k] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (p[k] & 0x3f);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
        cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    p += n + 1;
  }
  return true;
}

std::string RepairLogText(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    // Longest clean prefix, one code point at a time (at most 4 bytes each).
    size_t n = 1;
    auto c = static_cast<unsigned char>(s[0]);
    if (c >= 0xc0) n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    if (n <= s.size() && IsCleanLogText(s.substr(0, n))) {
      out.append(s.substr(0, n));
      s.remove_prefix(n);
    } else {
      out += '?';
      s.remove_prefix(1);
    }
  }
  return out;
}

KernelLogScanner::KernelLogScanner(KernelLogScanOptions options) : options_(std::move(options)) {
  format_state_.now_unix_s = options_.now_unix_s;
  facts_.current_boot_only = options_.current_boot_only;
#if defined(__x86_64__)
  storm_avx512_ =
      options_.wide_simd && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
#endif
}

KernelLogScanner::~KernelLogScanner() = default;

char* KernelLogScanner::LargeInputBuffer() {
  // The cache's table first (64-byte aligned at the region's start), the buffer after it.
  constexpr size_t kBufferAt = (XidRepeatCache::kStorageBytes + 4095) & ~size_t{4095};
  static_assert(XidRepeatCache::kStorageAlign <= 4096);
  static_assert(kBufferAt + kLargeReadBytes <= MappedPages::kHugePageBytes);
  if (scratch_ == nullptr) {
    scratch_ = std::make_unique<MappedPages>(MappedPages::kHugePageBytes, MappedPages::Kind::kHuge);
    if (scratch_->data() != nullptr) repeats_.UseStorage(scratch_->data());
  }
  return scratch_->data() == nullptr ? nullptr : scratch_->data() + kBufferAt;
}

void KernelLogScanner::ScanText(std::string_view text) {
  const AnchorFilter& filter = Filter();
  const char* b = text.data();
  const char* e = b + text.size();
  const char* from = b;
  while (from < e) {
    if (!repeats_.empty() && *from == '[' && mismatch_lines_ == 0) {
      if (const char* le = TryRepeatXid(from, e)) {
        // A repeat: the lines after it are likely more of the storm, for the inline loop
        // (tried only here, so that a log with few Xids does not pay for it on other lines).
#if defined(__x86_64__)
        from = storm_avx512_ ? ScanRepeatsAvx512(le + 1, e) : ScanRepeats(le + 1, e);
#else
        from = ScanRepeats(le + 1, e);
#endif
        continue;
      }
    }
    size_t anchor = 0;
    const char* hit = filter.Find(b, from, e, &anchor);
    if (hit == nullptr) return;
    if (anchor == kLinkAnchor && !LooksLikeLinkChange(hit + 5, e)) {
      from = hit + 1;  // "PCI Interrupt Link [LNKC]" and the like: keep looking in this line
      continue;
    }
    const void* nl_before = memrchr(from, '\n', static_cast<size_t>(hit - from));
    const char* ls = nl_before ? static_cast<const char*>(nl_before) + 1 : from;
    const void* nl_after = std::memchr(hit, '\n', static_cast<size_t>(e - hit));
    const char* le = nl_after ? static_cast<const char*>(nl_after) : e;
    // A run of NUL bytes (a crash leaves the unwritten tail of a log block zeroed) ends a line
    // too: otherwise the line after it, often the next boot's "Linux version", is lost with it.
    if (const void* z = memrchr(ls, '\0', static_cast<size_t>(hit - ls))) {
      ls = static_cast<const char*>(z) + 1;
    }
    if (ls > from && anchor == kNvrmAnchor && *ls == '[' && !repeats_.empty() &&
        mismatch_lines_ == 0) {
      // The line after one the storm loop stopped at (noise between the Xids): it may be a
      // repeat, so the storm loop has it first (the lines between hold no anchor).
      from = ls;
      continue;
    }
    if (const void* z = std::memchr(hit, '\0', static_cast<size_t>(le - hit))) {
      le = static_cast<const char*>(z);
    }
    ProcessLine(std::string_view(ls, static_cast<size_t>(le - ls)));
    from = le + 1;
    // A PCIe Bus Error report's detail lines carry no anchor: the few after it are read as they
    // come (a line that is not one is handled as any line would be).
    while (aer_details_left_ > 0 && from < e) {
      --aer_details_left_;
      const void* nl = std::memchr(from, '\n', static_cast<size_t>(e - from));
      le = nl ? static_cast<const char*>(nl) : e;
      aer_detail_line_ = true;
      ProcessLine(std::string_view(from, static_cast<size_t>(le - from)));
      aer_detail_line_ = false;
      from = le + 1;
    }
  }
}

void KernelLogScanner::ScanMessage(std::string_view message, const LogTime& time) {
  const char* b = message.data();
  // A PCIe Bus Error report's detail record (ScanText): read whatever its anchors.
  const bool aer_detail = aer_details_left_ > 0;
  if (aer_detail) {
    --aer_details_left_;
  } else if (Filter().Find(b, b, b + message.size()) == nullptr) {
    return;
  }
  if (message.size() > kMaxLineBytes) {
    ++facts_.truncated_lines;
    return;
  }
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) {
    message.remove_suffix(1);
  }
  message = Repair(message);
  ParsedLine parsed;
  parsed.shape = LineShape::kSyslog;  // a known prefix-less kernel message
  parsed.time = time;
  parsed.message = message;
  while (!parsed.message.empty() && parsed.message.back() == '\n') parsed.message.remove_suffix(1);
  aer_detail_line_ = aer_detail;
  ProcessMessage(parsed, parsed.message);
  aer_detail_line_ = false;
}

std::string_view KernelLogScanner::Repair(std::string_view line) {
  if (IsCleanLogText(line)) return line;
  ++facts_.repaired_lines;
  repaired_ = RepairLogText(line);
  return repaired_;
}

void KernelLogScanner::ProcessLine(std::string_view line) {
  if (line.size() > kMaxLineBytes) {
    ++facts_.truncated_lines;
    return;
  }
  // CRLF files (logs saved on or copied through Windows): the '\r' is not part of the text.
  while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::string_view clean = Repair(line);
  ParsedLine parsed = ParseLinePrefix(clean, format_state_);
  learn_xid_ = options_.repeat_shortcut && clean.data() == line.data() &&
               parsed.shape == LineShape::kDmesg && parsed.kernel;
  ProcessMessage(parsed, clean);
  learn_xid_ = false;
}

namespace {

// "[" spaces, 1-10 digits, '.', 6 digits, "] ": the common dmesg stamp, read exactly as
// ParseDmesg reads it (boot_us). Returns the start of the message, or nullptr.
const char* FastDmesgStamp(const char* p, const char* end, int64_t* boot_us) {
  if (end - p < 12 || *p != '[') return nullptr;
  ++p;
  while (p < end && *p == ' ') ++p;
  int64_t secs = 0;
  const char* d = p;
  while (p < end && *p >= '0' && *p <= '9' && p - d < 11) secs = secs * 10 + (*p++ - '0');
  if (p == d || p - d > 10 || end - p < 9 || *p != '.') return nullptr;
  int64_t frac = 0;
  for (int k = 1; k <= 6; ++k) {
    if (p[k] < '0' || p[k] > '9') return nullptr;
    frac = frac * 10 + (p[k] - '0');
  }
  if (p[7] != ']' || p[8] != ' ') return nullptr;
  *boot_us = secs * 1000000 + frac;
  return p + 9;
}

// The value of a stamp from its two digit words: 8 places each, one digit value (0-9) per byte,
// the first place in the lowest byte; s the whole seconds (leading places 0), f the 6 fraction
// digits (the 2 lowest places 0). Summed pairwise with three multiplications per word (SWAR).
inline int64_t StampMicros(uint64_t s, uint64_t f) {
  s = (s * 2561) >> 8;
  f = (f * 2561) >> 8;
  s = ((s & 0x00ff00ff00ff00ffull) * 6553601) >> 16;
  f = ((f & 0x00ff00ff00ff00ffull) * 6553601) >> 16;
  s = ((s & 0x0000ffff0000ffffull) * 42949672960001ull) >> 32;
  f = ((f & 0x0000ffff0000ffffull) * 42949672960001ull) >> 32;
  return static_cast<int64_t>(s) * 1000000 + static_cast<int64_t>(f);
}

// FastDmesgStamp for a stamp that lies in the 16 bytes at p (17 bytes readable from p), read
// 16 bytes at a time, without a loop: the positions of ']', the digits and the spaces say whether
// it has the shape (at most 7 places before the '.'), and the digits are summed 8 bytes at a
// time. Returns nullptr for anything else (a wider stamp, another shape), which FastDmesgStamp
// may still read; where both answer, the answers are the same.
inline const char* Stamp16(const char* p, int64_t* boot_us) {
#if defined(__SSE2__)
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const auto close_mask =
      static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(']'))));
  if (close_mask == 0 || p[0] != '[') return nullptr;
  const auto close = static_cast<unsigned>(__builtin_ctz(close_mask));
  if (close < 9 || p[close + 1] != ' ') return nullptr;
  const unsigned dot = close - 7;  // "[" spaces digits "." 6 digits "]"; dot <= 8
  const auto digit = static_cast<unsigned>(_mm_movemask_epi8(_mm_and_si128(
      _mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)))));
  const auto space =
      static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(' '))));
  const unsigned frac_bits = 0x3fu << (dot + 1);
  const unsigned int_bits = ((1u << dot) - 1) & ~1u;  // between '[' and '.'
  const unsigned int_digits = digit & int_bits;
  const unsigned int_spaces = space & int_bits;
  // Digits after the '.', some before it, and only spaces before those digits.
  if (p[dot] != '.' || (digit & frac_bits) != frac_bits || int_digits == 0 ||
      (int_digits | int_spaces) != int_bits ||
      (int_spaces & ~((int_digits & (0u - int_digits)) - 1)) != 0) {
    return nullptr;
  }
  constexpr uint64_t kLow = 0x0f0f0f0f0f0f0f0full;
  // The places between '[' and '.' moved to the top of 8 bytes, the '[' and what was below it
  // cleared; a space's low nibble is 0, a digit's its value (the first place in the lowest byte).
  uint64_t w;
  std::memcpy(&w, p, 8);
  uint64_t s = ((w << (8 * (8 - dot))) & (~uint64_t{0} << (8 * (9 - dot)))) & kLow;
  // The 6 digits after the '.', likewise: the digit before the '.' and the '.' made '0's.
  uint64_t f;
  std::memcpy(&f, p + dot - 1, 8);
  f = (((f & ~uint64_t{0xffff}) | 0x3030) - 0x3030303030303030ull) & kLow;
  // Both summed pairwise: 8 places, the first one in the lowest byte.
  *boot_us = StampMicros(s, f);
  return p + close + 2;
#else
  (void)p;
  (void)boot_us;
  return nullptr;
#endif
}

#if defined(__SSE2__)
// The 16 bytes at p with every digit made '0': the shape of a stamp.
inline __m128i StampClasses(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                      _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
  return _mm_or_si128(_mm_andnot_si128(digit, v), _mm_and_si128(digit, _mm_set1_epi8('0')));
}
#endif

// Stamp16 for a run of lines whose stamps have one shape (the storm loops): the shape of the
// last stamp Stamp16 accepted is kept, and a stamp with the same bytes where that one had
// anything but digits, and digits where it had digits, is read without Stamp16's tests (it
// passes them: they look at nothing else). Its value is then summed as Stamp16 sums it. Any
// other stamp goes to Stamp16, whose answer it gives.
class StampShape {
 public:
  inline const char* Read(const char* p, int64_t* boot_us) {
#if defined(__SSE2__)
    if (bits_ != 0) {
      const auto same =
          static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(StampClasses(p), shape_)));
      if ((same & bits_) == bits_) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        uint64_t s = ((w << int_shift_) & int_keep_) & 0x0f0f0f0f0f0f0f0full;
        uint64_t f;
        std::memcpy(&f, p + dot_ - 1, 8);
        f = (((f & ~uint64_t{0xffff}) | 0x3030) - 0x3030303030303030ull) & 0x0f0f0f0f0f0f0f0full;
        *boot_us = StampMicros(s, f);
        return p + close_ + 2;
      }
    }
    const char* msg = Stamp16(p, boot_us);
    if (msg == nullptr) return nullptr;
    close_ = static_cast<unsigned>(msg - p) - 2;
    // The shape covers '[' to the ' ' after ']' when that lies in the 16 bytes.
    bits_ = close_ + 2 <= 16 ? (1u << (close_ + 2)) - 1 : 0;
    shape_ = StampClasses(p);
    dot_ = close_ - 7;
    int_shift_ = 8 * (8 - dot_);
    int_keep_ = ~uint64_t{0} << (8 * (9 - dot_));
    return msg;
#else
    return Stamp16(p, boot_us);
#endif
  }

 private:
#if defined(__SSE2__)
  __m128i shape_ = _mm_setzero_si128();
#endif
  unsigned bits_ = 0;  // bytes of shape_ that must match; 0: no shape yet
  unsigned close_ = 0, dot_ = 0, int_shift_ = 0;
  uint64_t int_keep_ = 0;
};

// Stamp16, or FastDmesgStamp where it does not answer (end - p >= 17).
const char* DmesgStamp16(const char* p, const char* end, int64_t* boot_us) {
  if (const char* msg = Stamp16(p, boot_us)) return msg;
  return FastDmesgStamp(p, end, boot_us);
}

}  // namespace

#define GPUDOCTOR_STORM_FN ScanRepeats
#define GPUDOCTOR_STORM_AVX512 0
#include "kmsg/storm_loop.inc"
#undef GPUDOCTOR_STORM_FN
#undef GPUDOCTOR_STORM_AVX512

#if defined(__x86_64__)
// The same loop compiled for AVX-512BW (ScanText calls it only where the CPU has it).
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw")
#endif
#define GPUDOCTOR_STORM_FN ScanRepeatsAvx512
#define GPUDOCTOR_STORM_AVX512 1
#include "kmsg/storm_loop.inc"
#undef GPUDOCTOR_STORM_FN
#undef GPUDOCTOR_STORM_AVX512
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

const char* KernelLogScanner::TryRepeatXid(const char* from, const char* end) {
  if (mismatch_lines_ > 0) return nullptr;
  int64_t boot_us = 0;
  const char* msg =
      end - from >= 17 ? DmesgStamp16(from, end, &boot_us) : FastDmesgStamp(from, end, &boot_us);
  if (msg == nullptr || end - msg < 11 || msg[0] != 'N') return nullptr;
  int64_t pid = 0;
  const char* le = nullptr;
  EventSlotHint* hint = nullptr;
  const XidLine* x =
      repeats_.Match(std::string_view(msg, static_cast<size_t>(end - msg)), &pid, &le, &hint);
  if (x == nullptr || static_cast<size_t>(le - from) > kMaxLineBytes) return nullptr;
  // What ProcessMessage and HandleNvrmLine do with this line, in their order.
  ++facts_.lines_examined;
  LogTime t;
  t.boot_us = boot_us;
  if (options_.boot_wall_us) t.wall_us = *options_.boot_wall_us + boot_us;
  if (options_.since_wall_us) {
    if (!t.wall_us) {
      ++facts_.since_unapplied_lines;
    } else if (*t.wall_us < *options_.since_wall_us) {
      ++facts_.before_since_lines;
      return le;
    }
  }
  lost_stage_ = 0;
  aggregator_.ObserveXid(*x, t, std::string_view(from, static_cast<size_t>(le - from)), pid, hint);
  return le;
}

void KernelLogScanner::ProcessMessage(const ParsedLine& parsed, std::string_view line) {
  switch (parsed.shape) {
    case LineShape::kKmsgContinuation:
    case LineShape::kJournalNote:
      return;
    case LineShape::kJournalBoot:
      OnBoot();
      return;
    default:
      break;
  }
  if (!parsed.kernel) {
    ++facts_.non_kernel_lines;
    return;
  }
  ++facts_.lines_examined;  // callers Repair() the line first: it is clean text here
  std::string_view msg = parsed.message;
  if (parsed.shape == LineShape::kUnknown) {
    // Unknown prefix (pasted logs, other collectors): NVRM text may sit anywhere.
    if (size_t pos = msg.find("NVRM: "); pos != std::string_view::npos) msg = msg.substr(pos);
  }
  if (HasPrefix(msg, "Linux version ")) {
    OnBoot();
    return;
  }
  LogTime t = parsed.time;
  if (!t.wall_us && t.boot_us && options_.boot_wall_us) {
    t.wall_us = *options_.boot_wall_us + *t.boot_us;
  }
  if (options_.since_wall_us) {
    if (!t.wall_us) {
      ++facts_.since_unapplied_lines;  // no wall-clock time: --since cannot judge it
    } else if (*t.wall_us < *options_.since_wall_us) {
      ++facts_.before_since_lines;
      return;
    }
  }
  if (HasPrefix(msg, "NVRM: ")) {
    HandleNvrm(msg, t, line);
    return;
  }
  lost_stage_ = 0;
  FlushMismatch();
  HandleSignals(msg, t, line);
}

void KernelLogScanner::Observe(const KernelEvent& delta, const LogTime& t, std::string_view line) {
  aggregator_.Observe(delta, t, line);
}

namespace {

// An event of `kind` about the GPU an NVRM line names (bus id, else the driver's "GPU6", else
// "unknown-gpu") with the line's code.
KernelEvent GpuCodeEvent(KernelEventKind kind, const NvrmLine& n) {
  KernelEvent d;
  d.kind = kind;
  d.pci = n.pci;
  d.subject = n.pci ? n.pci->ToString()
                    : (n.subject.empty() ? std::string("unknown-gpu") : std::string(n.subject));
  d.error_code = std::string(n.code);
  return d;
}

}  // namespace

void KernelLogScanner::HandleNvrm(std::string_view msg, const LogTime& t, std::string_view line) {
  // rsyslog writes a multi-line printk as one line, each newline escaped as "#012": handle the
  // parts as the lines they were ("...version 535.54.03, but#012NVRM: this kernel module ...").
  if (msg.find("#012") == std::string_view::npos) {
    HandleNvrmLine(msg, t, line);
    return;
  }
  learn_xid_ = false;  // parts of one line: not a line of their own
  for (size_t from = 0; from <= msg.size();) {
    size_t esc = msg.find("#012", from);
    std::string_view part = msg.substr(from, esc == std::string_view::npos ? esc : esc - from);
    while (!part.empty() && (part[0] == ' ' || part[0] == '\t')) part.remove_prefix(1);
    if (HasPrefix(part, "NVRM: ")) HandleNvrmLine(part, t, line);
    if (esc == std::string_view::npos) break;
    from = esc + 4;
  }
}

bool KernelLogScanner::FinishMismatch(bool force) {
  MismatchParts p = ParseMismatchText(mismatch_text_);
  if (p.module.empty() && !force) return false;
  KernelEvent d;
  d.kind = KernelEventKind::kDriverMismatch;
  d.client_version = std::string(p.client);
  d.module_version = std::string(p.module);
  d.subject = "client " + (p.client.empty() ? std::string("?") : d.client_version) +
              ", kernel module " + (p.module.empty() ? std::string("?") : d.module_version);
  if (!p.name.empty()) {
    std::string label(p.name);
    if (!p.pid.empty()) label += "[" + std::string(p.pid) + "]";
    d.processes.push_back(std::move(label));
  }
  Observe(d, mismatch_time_, mismatch_sample_);
  mismatch_lines_ = 0;
  mismatch_text_.clear();
  mismatch_sample_.clear();
  return true;
}

void KernelLogScanner::FlushMismatch() {
  if (mismatch_lines_ > 0) FinishMismatch(true);
}

void KernelLogScanner::HandleNvrmLine(std::string_view msg, const LogTime& t,
                                      std::string_view line) {
  if (HasPrefix(msg, "NVRM: loading NVIDIA UNIX")) {
    FlushMismatch();
    OnDriverLoad(msg, t);
    return;
  }
  NvrmLine n = ParseNvrmLine(msg);
  if (mismatch_lines_ > 0) {
    // The report's continuation lines ("NVRM: this kernel module has the version ...") parse as
    // kOther; anything else, or too many lines, ends it with what it had.
    if (n.type == NvrmLineType::kOther && mismatch_lines_ < kMaxMismatchLines) {
      ++mismatch_lines_;
      mismatch_text_ += ' ';
      AppendMismatchText(mismatch_text_, msg.substr(6, 200));
      if (mismatch_sample_.size() < 400) {
        mismatch_sample_ += " / ";
        mismatch_sample_.append(msg.substr(0, 120));
      }
      FinishMismatch(mismatch_lines_ >= kMaxMismatchLines);
      return;
    }
    FinishMismatch(true);
  }
  int stage = lost_stage_;
  lost_stage_ = 0;
  switch (n.type) {
    case NvrmLineType::kNotNvrm:
    case NvrmLineType::kOther:
      return;
    case NvrmLineType::kGarbled:
      ++facts_.garbled_lines;
      return;
    case NvrmLineType::kXid:
      if (learn_xid_ && msg.data() + msg.size() == line.data() + line.size()) {
        repeats_.Learn(msg, n.xid);
      }
      aggregator_.ObserveXid(n.xid, t, line);
      return;
    case NvrmLineType::kGpuAt: {
      for (size_t k = 0; k < facts_.gpus.size(); ++k) {
        if (facts_.gpus[k].pci.SameDevice(*n.pci)) {
          facts_.gpus[k].uuid = std::string(n.uuid);
          last_gpu_at_ = k;
          return;
        }
      }
      if (facts_.gpus.size() >= kMaxGpus) return;
      facts_.gpus.push_back({*n.pci, std::string(n.uuid), ""});
      last_gpu_at_ = facts_.gpus.size() - 1;
      return;
    }
    case NvrmLineType::kBoardSerial:
      if (last_gpu_at_ && *last_gpu_at_ < facts_.gpus.size()) {
        // "0", all zeros, "N/A": no serial, so two such cards are never taken for one.
        facts_.gpus[*last_gpu_at_].serial = SerialOrEmpty(n.serial);
      }
      last_gpu_at_.reset();
      return;
    case NvrmLineType::kFallenOffBus: {
      KernelEvent d;
      d.kind = KernelEventKind::kGpuLost;
      d.pci = n.pci;
      d.subject = n.pci->ToString();
      Observe(d, t, line);
      return;
    }
    case NvrmLineType::kTheNvidiaGpu:
      lost_stage_ = 1;
      lost_pci_ = n.pci;
      lost_sample_ = std::string(line.substr(0, 200));
      return;
    case NvrmLineType::kInstalledHas:
      if (stage == 1) {
        lost_stage_ = 2;
        lost_sample_ += " / " + std::string(msg.substr(0, 120));
      }
      return;
    case NvrmLineType::kFallenOffTail:
      if (stage == 2 && lost_pci_) {
        KernelEvent d;
        d.kind = KernelEventKind::kGpuLost;
        d.pci = lost_pci_;
        d.subject = lost_pci_->ToString();
        std::string sample = lost_sample_ + " / " + std::string(msg.substr(0, 120));
        Observe(d, t, sample);
      }
      return;
    case NvrmLineType::kInitFailed: {
      KernelEvent d;
      d.kind = KernelEventKind::kDriverInitFailed;
      d.pci = n.pci;
      d.subject = n.pci ? n.pci->ToString() : std::string("unknown-gpu");
      d.error_code = std::string(n.code);
      Observe(d, t, line);
      return;
    }
    case NvrmLineType::kApiMismatch:
      mismatch_lines_ = 1;
      mismatch_time_ = t;
      mismatch_text_.clear();
      AppendMismatchText(mismatch_text_, n.subject.substr(0, 400));
      mismatch_sample_.assign(line.substr(0, 300));
      FinishMismatch(false);  // one-line forms (rsyslog parts are separate calls) finish later
      return;
    case NvrmLineType::kGspCrashCat:
      // Its reason line ("GSP task watchdog timeout @ pc:...") comes next, unprefixed.
      crashcat_pci_ = n.pci;
      crashcat_subject_ =
          n.pci ? n.pci->ToString()
                : (n.subject.empty() ? std::string("unknown-gpu") : std::string(n.subject));
      crashcat_time_ = t;
      return;
    case NvrmLineType::kStatusAssert:
      // GPU_IS_LOST: the GPU has fallen off the bus, named by the driver's instance ("GPU0") or
      // not at all; RESET_REQUIRED: it must be reset. No bus id in either line.
      Observe(GpuCodeEvent(n.code == "NV_ERR_GPU_IS_LOST" ? KernelEventKind::kGpuLost
                                                          : KernelEventKind::kResetRequired,
                           n),
              t, line);
      return;
    case NvrmLineType::kGspTimeout:
      Observe(GpuCodeEvent(KernelEventKind::kGspTimeout, n), t, line);
      return;
  }
}

bool KernelLogScanner::HandleSignals(std::string_view msg, const LogTime& t,
                                     std::string_view line) {
  if (options_.repeat_shortcut) {
    if (SignalMemo::Entry* m = signal_memo_.Find(msg)) {
      // What the kEvent case below does with the outcome parsing gave this message before.
      hung_subject_.clear();
      aggregator_.Observe(m->event, t, line, &m->hint);
      return true;
    }
  }
  // A stack frame of an NVIDIA module right after a hung-task or CPU-stall report marks it.
  // One pass finds which anchors the message holds; each keyword test below then costs a search
  // only when its anchor is present (a NIC link line skips the AER, OOM, MCE ... searches).
  const uint32_t present = Filter().PresentMask(msg.data(), msg.data() + msg.size());
  if (Contains(present, kNvidiaFrameAnchor, msg, "[nvidia") && Contains(msg, "+0x")) {
    if (!hung_subject_.empty() && CloseInTime(hung_time_, t)) {
      KernelEvent d;
      d.kind = hung_kind_;
      d.subject = hung_subject_;
      d.nvidia_related = true;
      aggregator_.Attach(d);
    }
    return true;
  }
  if (Contains(present, kGspWatchdogAnchor, msg, "GSP task watchdog timeout")) {
    // The GSP firmware's watchdog fired: the reason of the CrashCat report just before (whose
    // NVRM line names the GPU), printed by drivers that log no Xid 119/120 for it.
    KernelEvent d;
    d.kind = KernelEventKind::kGspTimeout;
    const bool reported = !crashcat_subject_.empty() && CloseInTime(crashcat_time_, t);
    d.pci = reported ? crashcat_pci_ : std::nullopt;
    d.subject = reported ? crashcat_subject_ : std::string("unknown-gpu");
    d.error_code = "GSP task watchdog timeout";
    crashcat_subject_.clear();
    Observe(d, t, line);
    return true;
  }
  if (Contains(present, kOomKillAnchor, msg, "oom-kill:constraint=")) {
    pending_memcg_ = Contains(msg, "CONSTRAINT_MEMCG");
    return true;
  }
  SignalResult r;
  if ((present & (Bit(kAerAnchor) | Bit(kPcieBusErrorAnchor))) || aer_detail_line_) {
    r = ParseAerLine(msg);
  }
  if (r.verdict == SignalVerdict::kNoMatch && (present & Bit(kBlockedAnchor))) {
    r = ParseHungTaskLine(msg);
  }
  if (r.verdict == SignalVerdict::kNoMatch &&
      (present & (Bit(kKilledProcessAnchor) | Bit(kOomKillAnchor)))) {
    r = ParseOomLine(msg, pending_memcg_);
    if (r.verdict == SignalVerdict::kEvent) pending_memcg_ = false;
  }
  if (r.verdict == SignalVerdict::kNoMatch &&
      (present & (Bit(kHardwareErrorAnchor) | Bit(kMachineCheckAnchor)))) {
    r = ParseMceLine(msg);
  }
  if (r.verdict == SignalVerdict::kNoMatch &&
      (present & (Bit(kNetdevWatchdogAnchor) | Bit(kLinkAnchor) | Bit(kLinkStatusAnchor)))) {
    r = ParseNetLinkLine(msg);
  }
  if (r.verdict == SignalVerdict::kNoMatch && (present & Bit(kTemperatureAnchor))) {
    r = ParseCpuThermalLine(msg);
  }
  if (r.verdict == SignalVerdict::kNoMatch &&
      (present & (Bit(kSoftLockupAnchor) | Bit(kHardLockupAnchor) | Bit(kRcuStallAnchor)))) {
    r = ParseCpuStallLine(msg);
  }
  if (r.verdict == SignalVerdict::kNoMatch && (present & Bit(kSxidAnchor))) {
    r = ParseSxidLine(msg);
    if (r.verdict != SignalVerdict::kNoMatch && r.verdict != SignalVerdict::kGarbled &&
        r.verdict != SignalVerdict::kRecognized) {
      // One error is a description line, then its "Severity N" line: the second is the same
      // error when the first came (lines of several switches interleave), else it is the error.
      std::string key = r.event.subject + '|' + std::to_string(r.event.xid);
      auto it = std::find(sxid_described_.begin(), sxid_described_.end(), key);
      if (r.verdict == SignalVerdict::kEvent) {
        if (sxid_described_.size() >= kMaxSxidDescribed)
          sxid_described_.erase(sxid_described_.begin());
        sxid_described_.push_back(std::move(key));
      } else if (it != sxid_described_.end()) {
        sxid_described_.erase(it);
        r.verdict = SignalVerdict::kRecognized;
      } else {
        r.verdict = SignalVerdict::kEvent;
      }
    }
  }
  switch (r.verdict) {
    case SignalVerdict::kNoMatch:
    case SignalVerdict::kRecognized:
      return r.verdict == SignalVerdict::kRecognized;
    case SignalVerdict::kGarbled:
      ++facts_.garbled_lines;
      return true;
    case SignalVerdict::kAttach:
      aggregator_.Attach(r.event);
      return true;
    case SignalVerdict::kEvent:
      if (r.event.kind == KernelEventKind::kHungTask ||
          r.event.kind == KernelEventKind::kCpuStall) {
        hung_kind_ = r.event.kind;
        hung_subject_ = r.event.subject;
        hung_time_ = t;
      } else {
        hung_subject_.clear();
      }
      // The outcome is the message's alone when no parser state took part (no NVIDIA frame or
      // OOM keyword; the hung-task detector's result is state for the next lines).
      if (options_.repeat_shortcut && r.event.kind == KernelEventKind::kNetLink &&
          (present & (Bit(kNvidiaFrameAnchor) | Bit(kOomKillAnchor) | Bit(kKilledProcessAnchor))) ==
              0) {
        signal_memo_.Learn(msg, r.event);
      }
      // "device [vvvv:dddd] error status/mask=" and one line per error bit follow.
      if (r.event.kind == KernelEventKind::kPcieAer) aer_details_left_ = kAerDetailLines;
      Observe(r.event, t, line);
      return true;
  }
  return false;
}

// "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.148.06  Mon May  5 ..." and the open
// module's "... Open Kernel Module for x86_64  570.158.01  Release Build ...": the version is the
// first word of digits and dots.
void KernelLogScanner::OnDriverLoad(std::string_view msg, const LogTime& t) {
  ++facts_.driver_loads;
  facts_.last_driver_load = t;
  facts_.last_driver_load_version.clear();
  for (size_t i = 0; i < msg.size();) {
    size_t end = msg.find(' ', i);
    std::string_view word = msg.substr(i, end == std::string_view::npos ? end : end - i);
    bool version = word.size() >= 3 && word.size() <= 20 && word.find('.') != word.npos &&
                   std::all_of(word.begin(), word.end(),
                               [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
    if (version) {
      facts_.last_driver_load_version = std::string(word);
      break;
    }
    if (end == std::string_view::npos) break;
    i = end + 1;
  }
}

void KernelLogScanner::OnBoot() {
  FlushMismatch();
  ++facts_.boots_seen;
  lost_stage_ = 0;
  pending_memcg_ = false;
  hung_subject_.clear();
  sxid_described_.clear();
  last_gpu_at_.reset();
  if (options_.current_boot_only) {
    aggregator_.Clear();
    facts_.gpus.clear();
    facts_.driver_loads = 0;
    facts_.last_driver_load = LogTime{};
    facts_.last_driver_load_version.clear();
  }
}

KernelLogFacts KernelLogScanner::Current() const {
  KernelLogFacts copy = facts_;
  copy.dropped_events = aggregator_.dropped();
  copy.events = aggregator_.events();
  return copy;
}

KernelLogFacts KernelLogScanner::Finish() {
  FlushMismatch();
  facts_.dropped_events = aggregator_.dropped();
  facts_.events = aggregator_.TakeEvents();
  return std::move(facts_);
}

namespace {

// Hands [from, to) (whole lines, to[-1] == '\n') to the scanner, less every line of kMaxKept
// bytes or more (without its '\n'), each counted as truncated: the rule a kMaxKept-byte read
// buffer applies, kept for a larger one. A line that long spans a whole kMaxKept / 2 window
// (counted from `from`) without a '\n', so one memchr a window rules them out; the walk line by
// line runs only when a window has none.
void ScanWholeLines(KernelLogScanner& scanner, const char* from, const char* to, size_t max_kept) {
  const size_t half = max_kept / 2;
  bool long_line = false;
  for (const char* w = from; w < to && !long_line; w += half) {
    long_line = std::memchr(w, '\n', std::min(half, static_cast<size_t>(to - w))) == nullptr;
  }
  if (!long_line) {
    scanner.ScanText(std::string_view(from, static_cast<size_t>(to - from)));
    return;
  }
  const char* kept = from;  // start of the lines not handed over yet
  for (const char* p = from; p < to;) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(to - p)));
    if (static_cast<size_t>(nl - p) >= max_kept) {
      if (p > kept) scanner.ScanText(std::string_view(kept, static_cast<size_t>(p - kept)));
      ++scanner.facts().truncated_lines;
      kept = nl + 1;
    }
    p = nl + 1;
  }
  if (to > kept) scanner.ScanText(std::string_view(kept, static_cast<size_t>(to - kept)));
}

}  // namespace

Status ScanLogFd(int fd, KernelLogScanner& scanner, TimePoint deadline) {
  // The longest line kept: one of kMaxKept bytes or more (without its '\n') is dropped and
  // counted as truncated, whatever the buffer. The buffer is as large for pipes and small
  // files (fits L2: read(2) copies into cache, the scan reads it there).
  constexpr size_t kMaxKept = KernelLogScanner::kReadBufferBytes;
  KernelLogFacts& facts = scanner.facts();
  struct stat st {};
  // Pipes, FIFOs and devices may stay silent or never end: wait for them with poll(2) under the
  // deadline. Regular files always answer; checking the clock every 2 MiB is enough for them.
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  // A large file: a larger buffer (fewer read(2) calls, ~1 µs each) in the scanner's huge
  // page (one page fault, not one per 4 KiB).
  size_t cap = kMaxKept;
  char* buf = nullptr;
  if (regular && static_cast<uint64_t>(st.st_size) >= kLargeInputBytes) {
    buf = scanner.LargeInputBuffer();
    if (buf != nullptr) cap = KernelLogScanner::kLargeReadBytes;
  }
  std::unique_ptr<char[]> own;
  if (buf == nullptr) {
    own.reset(new char[cap]);
    buf = own.get();
  }
  const size_t step = cap / kMaxKept;  // in kMaxKept units, for the clock check
  size_t have = 0;
  bool skipping = false;  // inside an over-long line: drop bytes until its '\n'
  size_t since_clock = 0;
  for (;;) {
    since_clock += step;
    if (!regular || since_clock >= 16) {
      since_clock = 0;
      if (SteadyClock::now() >= deadline) {
        facts.stopped_at_deadline = true;
        return Status::Ok();
      }
    }
    if (!regular) {
      int timeout_ms = -1;
      if (deadline != TimePoint::max()) {
        auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - SteadyClock::now());
        timeout_ms = static_cast<int>(std::clamp<int64_t>(left.count(), 0, 60000));
      }
      pollfd p{fd, POLLIN, 0};
      int r = ::poll(&p, 1, timeout_ms);
      if (r < 0 && errno != EINTR) return IoError(std::string("poll: ") + std::strerror(errno));
      if (r <= 0) continue;  // timeout or signal: the clock check above decides
    }
    ssize_t n = ::read(fd, buf + have, cap - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) continue;  // non-blocking FIFO between writes: poll again
      return IoError(std::string("read: ") + std::strerror(errno));
    }
    if (n == 0) {
      // (What is left is shorter than kMaxKept: a longer rest was dropped below.)
      if (have > 0 && !skipping) scanner.ScanText(std::string_view(buf, have));
      return Status::Ok();
    }
    facts.bytes_scanned += static_cast<uint64_t>(n);
    have += static_cast<size_t>(n);
    size_t start = 0;
    if (skipping) {
      const void* nl = std::memchr(buf, '\n', have);
      if (nl == nullptr) {
        have = 0;
        continue;
      }
      start = static_cast<size_t>(static_cast<const char*>(nl) - buf) + 1;
      skipping = false;
    }
    const void* last = memrchr(buf + start, '\n', have - start);
    size_t end = start;
    if (last != nullptr) {
      end = static_cast<size_t>(static_cast<const char*>(last) - buf) + 1;
      if (cap > kMaxKept) {
        ScanWholeLines(scanner, buf + start, buf + end, kMaxKept);
      } else {  // no whole line here can reach kMaxKept
        scanner.ScanText(std::string_view(buf + start, end - start));
      }
    }
    if (end > 0) std::memmove(buf, buf + end, have - end);
    have -= end;
    if (have >= kMaxKept) {  // the line begun at buf holds no '\n' in its first kMaxKept bytes
      ++facts.truncated_lines;
      skipping = true;
      have = 0;
    }
  }
}

Result<KernelLogFacts> ScanLogPath(const std::string& path, const KernelLogScanOptions& options,
                                   TimePoint deadline) {
  KernelLogScanner scanner(options);
  int fd = 0;
  bool close_fd = false;
  if (path == "-") {
    scanner.facts().source = "stdin";
  } else {
    // O_NONBLOCK: opening a FIFO must not wait for a writer (ScanLogFd polls it instead).
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      int err = errno;
      std::string m = path + ": " + std::strerror(err);
      if (err == ENOENT) return NotFound(m);
      if (err == EACCES || err == EPERM) return PermissionDenied(m);
      return IoError(m);
    }
    close_fd = true;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      ::close(fd);
      return InvalidArgument(path + ": is a directory");
    }
    scanner.facts().source = "file:" + path;
  }
  Status s = ScanLogFd(fd, scanner, deadline);
  if (close_fd) ::close(fd);
  if (!s.ok()) return Status(s.code(), path + ": " + s.message());
  return scanner.Finish();
}

}  // namespace gpudoctor
