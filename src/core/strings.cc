#include "core/strings.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace gpudoctor {

std::string_view Trim(std::string_view s) {
  const char* ws = " \t\r\n\v\f";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool EndsWith(std::string_view s, std::string_view x) {
  return s.size() >= x.size() && s.substr(s.size() - x.size()) == x;
}

namespace {

// The first byte at or after `pos` that is one of `delims`, else npos. string_view's
// find_first_of calls memchr over the delimiters once per byte of `s`: with the parsers' 2-3
// delimiters a compare loop is several times cheaper (Split was ~5% of `watch`'s instructions).
size_t FindAnyOf(std::string_view s, std::string_view delims, size_t pos) {
  if (delims.size() == 1) return s.find(delims[0], pos);
  for (; pos < s.size(); ++pos) {
    for (char d : delims) {
      if (s[pos] == d) return pos;
    }
  }
  return std::string_view::npos;
}

}  // namespace

std::vector<std::string_view> Split(std::string_view s, std::string_view delims, bool skip_empty) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t pos = FindAnyOf(s, delims, start);
    if (pos == std::string_view::npos) pos = s.size();
    std::string_view field = s.substr(start, pos - start);
    if (!field.empty() || !skip_empty) out.push_back(field);
    start = pos + 1;
  }
  return out;
}

std::vector<std::string_view> SplitLines(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t pos = s.find('\n', start);
    if (pos == std::string_view::npos) pos = s.size();
    std::string_view line = s.substr(start, pos - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    start = pos + 1;
  }
  return out;
}

std::optional<int64_t> ParseInt64(std::string_view s) {
  s = Trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<uint64_t> ParseUint64(std::string_view s) {
  s = Trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty() || s.front() == '-') return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> ParseBoundedDecimal(std::string_view s, size_t max_digits) {
  if (s.empty() || s.size() > max_digits || max_digits > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::optional<uint64_t> ParseHex(std::string_view s) {
  s = Trim(s);
  if (StartsWith(s, "0x") || StartsWith(s, "0X")) s.remove_prefix(2);
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> ParseDouble(std::string_view s) {
  s = Trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

size_t Utf8SequenceLength(std::string_view s, size_t i, uint32_t* code_point) {
  if (i >= s.size()) return 0;
  const unsigned char c = static_cast<unsigned char>(s[i]);
  const size_t n = c >= 0xC2 && c <= 0xDF   ? 2
                   : c >= 0xE0 && c <= 0xEF ? 3
                   : c >= 0xF0 && c <= 0xF4 ? 4
                                            : 0;
  if (n == 0 || i + n > s.size()) return 0;
  uint32_t v = c & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
  for (size_t k = 1; k < n; ++k) {
    const unsigned char b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    v = (v << 6) | (b & 0x3F);
  }
  // Overlong forms (an ESC hidden in three bytes), surrogates and beyond U+10FFFF.
  if ((n == 3 && v < 0x800) || (n == 4 && v < 0x10000) || (v >= 0xD800 && v <= 0xDFFF) ||
      v > 0x10FFFF) {
    return 0;
  }
  if (code_point != nullptr) *code_point = v;
  return n;
}

std::string Sanitize(std::string_view s, size_t max_len) {
  std::string out;
  out.reserve(std::min(s.size(), max_len));
  for (size_t i = 0; i < s.size() && out.size() < max_len;) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F) {
      out.push_back(static_cast<char>(c));
      ++i;
    } else if (c == '\t') {
      out.push_back(' ');
      ++i;
    } else if (size_t n = c >= 0x80 ? Utf8SequenceLength(s, i) : 0; n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out.push_back('?');
      ++i;
    }
  }
  return out;
}

std::string FormatBytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  if (u == 0) return std::to_string(bytes) + " B";
  return FormatDouble(v, 1) + " " + units[u];
}

std::string FormatDouble(double v, int decimals) {
  if (!std::isfinite(v)) return "nan";
  // std::to_chars: what printf("%.*f") prints in the C locale, whatever the process's locale
  // (the TUI sets LC_ALL from the environment), without printf's parsing and locking (rules
  // format evidence every watch tick). The widest fixed double is 309 digits and a sign.
  decimals = std::clamp(decimals, 0, 20);
  char buf[352];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  if (ec != std::errc()) return "nan";  // cannot happen with this buffer
  if (decimals > 0) {
    while (end[-1] == '0') --end;
    if (end[-1] == '.') --end;
  }
  std::string s(buf, end);
  if (s == "-0") s = "0";
  return s;
}

std::string UrlOrigin(std::string_view url) {
  size_t sep = url.find("://");
  std::string_view scheme = sep == std::string_view::npos ? "" : url.substr(0, sep + 3);
  std::string_view rest = sep == std::string_view::npos ? url : url.substr(sep + 3);
  // An '@' anywhere before the query means userinfo whose password may itself hold '/' (curl
  // accepts https://user:pa/ss@host): the host starts after the last '@'.
  std::string_view before_query = rest.substr(0, rest.find_first_of("?#"));
  if (size_t at = before_query.rfind('@'); at != std::string_view::npos) {
    rest = rest.substr(at + 1);
  }
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  return std::string(scheme) + std::string(authority);
}

}  // namespace gpudoctor
