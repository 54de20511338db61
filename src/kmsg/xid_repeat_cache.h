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
#include <memory>
#include <string>
#include <string_view>

#include "kmsg/event_aggregator.h"
#include "kmsg/xid_parser.h"

namespace gpudoctor {

class XidRepeatCache {
 public:
  static constexpr size_t kSlots = 256;

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

 private:
  // Heads and tails up to these lengths are compared in fixed blocks, without a loop whose
  // length depends on the line (a storm alternates between a few lines of different lengths,
  // and such a loop's exit is then mispredicted on most lines); longer ones byte run by byte run.
  static constexpr size_t kHeadBlock = 48;
  static constexpr size_t kTailBlock = 192;
  struct Entry {
    std::string text;            // the message
    size_t head = 0;             // text[0, head) ends with "pid="
    size_t tail = 0;             // text[tail, end): after the pid digits, starts with ','
    XidLine x;                   // ParseNvrmLine(text).xid, views into text
    mutable EventSlotHint hint;  // where the aggregator keeps x's entry (the scanner's to set)
    // text's head, and its tail followed by '\n', zero-padded; each with a mask of 0xff over
    // its bytes (0 past them): a line matches when (bytes ^ these) & mask is zero throughout.
    size_t tail_nl = 0;  // tail length with the '\n'
    alignas(16) unsigned char head_bytes[kHeadBlock] = {};
    alignas(16) unsigned char head_mask[kHeadBlock] = {};
    alignas(16) unsigned char tail_bytes[kTailBlock] = {};
    alignas(16) unsigned char tail_mask[kTailBlock] = {};
  };
  // kSlots entries, allocated on the first Learn (a scanner that never sees an Xid line pays
  // nothing); an entry with an empty text is free.
  std::unique_ptr<Entry[]> slots_;
  size_t learned_ = 0;
};

}  // namespace gpudoctor
