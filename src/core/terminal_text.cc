#include "core/terminal_text.h"

#include <cstdint>
#include <cstdio>

#include "core/strings.h"

namespace gpudoctor {
namespace {

// Code points a terminal acts on or that change how the rest of the line reads.
bool IsInvisibleControl(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x061C ||
         cp == 0x200E || cp == 0x200F || cp == 0xFEFF;
}

}  // namespace

std::string TerminalSafe(std::string_view s, size_t max_len) {
  std::string out;
  out.reserve(s.size() < max_len ? s.size() + 8 : max_len + 8);
  char buf[16];
  for (size_t i = 0; i < s.size();) {
    if (out.size() >= max_len) {
      out += "...";
      break;
    }
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    if (c == '\n' || c == '\r' || c == '\t') {
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t";
      ++i;
      continue;
    }
    uint32_t cp = 0;
    size_t n = c >= 0x80 ? Utf8SequenceLength(s, i, &cp) : 0;
    if (n == 0) {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      ++i;
      continue;
    }
    if (IsInvisibleControl(cp)) {
      std::snprintf(buf, sizeof buf, "\\u{%04x}", cp);
      out += buf;
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

void TerminalText::Line(std::string_view line) {
  text_ += TerminalSafe(line, std::string::npos);
  text_ += '\n';
}

}  // namespace gpudoctor
