#include "core/terminal_text.h"

#include <cstdint>
#include <cstdio>

namespace gpudoctor {
namespace {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no
// surrogates, at most U+10FFFF) and its code point; 0 when the bytes are not UTF-8.
size_t Utf8Length(std::string_view s, size_t i, uint32_t* cp) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c >= 0xC2 && c <= 0xDF   ? 2
             : c >= 0xE0 && c <= 0xEF ? 3
             : c >= 0xF0 && c <= 0xF4 ? 4
                                      : 0;
  if (n == 0 || i + n > s.size()) return 0;
  uint32_t v = c & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
  for (size_t k = 1; k < n; ++k) {
    unsigned char b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    v = (v << 6) | (b & 0x3F);
  }
  // Overlong forms (an ESC hidden in three bytes), surrogates and beyond U+10FFFF.
  if ((n == 3 && v < 0x800) || (n == 4 && v < 0x10000) || (v >= 0xD800 && v <= 0xDFFF) ||
      v > 0x10FFFF) {
    return 0;
  }
  *cp = v;
  return n;
}

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
    size_t n = c >= 0x80 ? Utf8Length(s, i, &cp) : 0;
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
