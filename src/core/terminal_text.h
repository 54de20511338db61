// Printing outside text (host names, serials, finding summaries, labels, paths from reports,
// servers and databases) on a terminal. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace gpudoctor {

// Outside text made safe to print on a terminal, visibly: control bytes become escapes ("\n",
// "\t", "\x1b", ...), as do C1 controls, bidirectional overrides and line separators (U+0085,
// U+202E, U+2028, ... as "\u{202e}") and bytes that are not valid UTF-8 ("\xff"). Printable
// ASCII and other valid UTF-8 pass unchanged. The result is cut at about max_len bytes and then
// ends in "...". So a host name, finding summary or label from a report or a server can neither
// move the cursor, recolour the screen, set the window title nor forge an extra line.
std::string TerminalSafe(std::string_view s, size_t max_len = 4096);

// Text for a terminal built line by line: every line goes through TerminalSafe, then gets its
// '\n'. Renderers of outside data write through this, so the only newlines in their output are
// the ones they meant.
class TerminalText {
 public:
  void Line(std::string_view line);
  void Blank() { text_ += '\n'; }
  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

}  // namespace gpudoctor
