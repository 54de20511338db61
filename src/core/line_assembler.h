// Splits a byte stream that arrives in pieces cut anywhere into lines, for the streaming line
// readers (root_fs_lines.h: plain files; root_fs_compressed.h: decompressed ones).
// Lines: split at '\n', one trailing '\r' removed, a last line without '\n' included (Finish).
// A line that spans pieces is assembled in a side string (as long as the line). At most
// max_bytes of input are looked at; what lies beyond is dropped.
// Thread-safety: one object per stream; not shared.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace gpudoctor {

class LineAssembler {
 public:
  // fn(line) for every line; false stops. A line passed to fn is valid only during that call.
  // fn must outlive this object.
  LineAssembler(size_t max_bytes, const std::function<bool(std::string_view)>& fn)
      : left_(max_bytes), fn_(fn) {}

  // The next piece of the stream. False: stop (fn said so, or max_bytes were looked at).
  bool Piece(std::string_view chunk) {
    if (chunk.size() > left_) chunk = chunk.substr(0, left_);
    left_ -= chunk.size();
    while (go_on_) {
      size_t nl = chunk.find('\n');
      if (nl == std::string_view::npos) {
        carry_.append(chunk);
        break;
      }
      if (carry_.empty()) {
        Emit(chunk.substr(0, nl));
      } else {
        carry_.append(chunk.substr(0, nl));
        Emit(carry_);
        carry_.clear();
      }
      chunk.remove_prefix(nl + 1);
    }
    return go_on_ && left_ > 0;
  }

  // The end of the stream: a last line without '\n' goes to fn (unless fn stopped earlier).
  void Finish() {
    if (go_on_ && !carry_.empty()) Emit(carry_);
    carry_.clear();
  }

  bool stopped() const { return !go_on_ || left_ == 0; }
  // Bytes that may still be looked at (max_bytes minus the pieces so far).
  size_t left() const { return left_; }

 private:
  void Emit(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    go_on_ = fn_(line);
  }

  size_t left_;
  const std::function<bool(std::string_view)>& fn_;
  std::string carry_;
  bool go_on_ = true;
};

}  // namespace gpudoctor
