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

#include "kmsg/xid_parser.h"

namespace gpudoctor {

class XidRepeatCache {
 public:
  static constexpr size_t kSlots = 256;

  // `msg` starts at "NVRM: Xid (" and runs to the end of the buffer (not only of its line).
  // When its line repeats a cached one except for the pid, returns the cached parse (valid until
  // the next Learn; its pid is the cached line's), sets *pid to this line's pid and *end to the
  // end of the message: the '\n' that ends it, or msg.data() + msg.size() when the buffer ends
  // there. Returns nullptr otherwise (*pid, *end unspecified).
  const XidLine* Match(std::string_view msg, int64_t* pid, const char** end) const;

  // Remembers a message that ParseNvrmLine parsed as an Xid with `parsed.pid` read from plain
  // digits. `msg` is exactly one clean line's message (no '\n', no '\r'). Messages of another
  // shape are ignored.
  void Learn(std::string_view msg, const XidLine& parsed);

  bool empty() const { return learned_ == 0; }

 private:
  struct Entry {
    std::string text;  // the message
    size_t head = 0;   // text[0, head) ends with "pid="
    size_t tail = 0;   // text[tail, end): after the pid digits, starts with ','
    XidLine x;         // ParseNvrmLine(text).xid, views into text
  };
  std::array<std::unique_ptr<Entry>, kSlots> slots_;
  size_t learned_ = 0;
};

}  // namespace gpudoctor
