#include "core/toml_ascii_guard.h"

#include <cctype>

namespace gpudoctor {

std::optional<TomlTextPlace> FindNonAsciiOutsideStrings(std::string_view text) {
  size_t line = 1, line_start = 0;
  size_t i = 0;
  const size_t n = text.size();
  auto starts = [&](size_t at, std::string_view what) {
    return text.substr(at, what.size()) == what;
  };
  // A string may begin at a line's start, or after = [ , { . (spaces and tabs between).
  // Elsewhere a quote does not open a string for toml++ either (`a = 0"é"` is an error it reports
  // after testing the following characters for whitespace), so none is assumed. A flag of its
  // own, not a sentinel character: a NUL byte in the text is an ordinary character here.
  bool string_may_begin = true;
  char prev = '\0';  // the last character outside strings, spaces and comments
  while (i < n) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = ++i;
      prev = '\0';
      string_may_begin = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '#') {  // a comment runs to the end of the line
      while (i < n && text[i] != '\n') ++i;
      continue;
    }
    if ((c == '"' || c == '\'') && string_may_begin) {
      const bool basic = c == '"';
      const bool multi = starts(i, basic ? "\"\"\"" : "'''");
      i += multi ? 3 : 1;
      // Up to the closing delimiter; an unclosed string runs to the end (multi-line) or the end of
      // the line, where toml++ reports it.
      while (i < n) {
        char s = text[i];
        if (basic && s == '\\') {
          if (i + 1 < n && text[i + 1] == '\n') {  // a line-ending backslash (multi-line)
            ++line;
            line_start = i + 2;
          }
          i += 2;
          continue;
        }
        if (s == '\n') {
          if (!multi) break;
          ++line;
          line_start = i + 1;
        }
        if (s == c && (!multi || starts(i, basic ? "\"\"\"" : "'''"))) {
          i += multi ? 3 : 1;
          // A multi-line string may end with up to two more quotes of its kind ("""a"""" is a").
          while (multi && i < n && text[i] == c) ++i;
          break;
        }
        ++i;
      }
      prev = c;  // a string ends a key or a value
      string_may_begin = false;
      continue;
    }
    if (static_cast<unsigned char>(c) >= 0x80) {
      return TomlTextPlace{line, i - line_start + 1};
    }
    // After a dot only when it joins keys (a letter, _, - or a quote before it): `1."é"` is a
    // malformed number to toml++, which scans on; a key ending in a digit (`a1."é"`) is refused
    // too, the price of never passing such text on.
    const bool key_dot = c == '.' && (std::isalpha(static_cast<unsigned char>(prev)) ||
                                      prev == '_' || prev == '-' || prev == '"' || prev == '\'');
    string_may_begin = c == '=' || c == '[' || c == ',' || c == '{' || key_dot;
    prev = c;
    ++i;
  }
  return std::nullopt;
}

}  // namespace gpudoctor
