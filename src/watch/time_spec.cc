#include "watch/time_spec.h"

#include <cstdio>
#include <ctime>

#include "core/civil_time.h"

namespace gpudoctor {
namespace {

constexpr int64_t kMaxDurationS = 10LL * 366 * 86400;

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Reads exactly `width` digits.
bool Fixed(std::string_view s, size_t pos, size_t width, int& out) {
  if (pos + width > s.size()) return false;
  int v = 0;
  for (size_t i = 0; i < width; ++i) {
    char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

int DaysInMonth(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

}  // namespace

std::optional<int64_t> ParseDurationS(std::string_view text) {
  if (text.size() < 2 || text.size() > 12) return std::nullopt;
  std::string_view digits = text.substr(0, text.size() - 1);
  if (!AllDigits(digits)) return std::nullopt;
  int64_t mult;
  switch (text.back()) {
    case 's':
      mult = 1;
      break;
    case 'm':
      mult = 60;
      break;
    case 'h':
      mult = 3600;
      break;
    case 'd':
      mult = 86400;
      break;
    case 'w':
      mult = 7 * 86400;
      break;
    default:
      return std::nullopt;
  }
  int64_t v = 0;
  for (char c : digits) {
    v = v * 10 + (c - '0');
    if (v > kMaxDurationS) return std::nullopt;
  }
  if (v == 0 || v * mult > kMaxDurationS) return std::nullopt;
  return v * mult;
}

std::optional<int64_t> ParseTimeSpec(std::string_view text, int64_t now_unix_s) {
  if (text.empty() || text.size() > 40) return std::nullopt;
  if (text[0] == '@') text.remove_prefix(1);
  if (AllDigits(text)) {
    if (text.size() > 12) return std::nullopt;
    int64_t v = 0;
    for (char c : text) v = v * 10 + (c - '0');
    return v;
  }
  if (auto d = ParseDurationS(text)) return now_unix_s - *d;
  int y, mo, d, h = 0, mi = 0, s = 0;
  if (!Fixed(text, 0, 4, y) || text.size() < 10 || text[4] != '-' || !Fixed(text, 5, 2, mo) ||
      text[7] != '-' || !Fixed(text, 8, 2, d)) {
    return std::nullopt;
  }
  size_t pos = 10;
  if (pos < text.size() && (text[pos] == 'T' || text[pos] == ' ')) {
    if (!Fixed(text, pos + 1, 2, h) || pos + 3 >= text.size() || text[pos + 3] != ':' ||
        !Fixed(text, pos + 4, 2, mi)) {
      return std::nullopt;
    }
    pos += 6;
    if (pos < text.size() && text[pos] == ':') {
      if (!Fixed(text, pos + 1, 2, s)) return std::nullopt;
      pos += 3;
    }
  }
  if (pos < text.size() && text[pos] == 'Z') ++pos;
  if (pos != text.size()) return std::nullopt;
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > DaysInMonth(y, mo) || h > 23 || mi > 59 ||
      s > 60) {
    return std::nullopt;
  }
  return DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 + h * 3600 +
         mi * 60 + s;
}

std::string FormatUtc(int64_t unix_s) {
  std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace gpudoctor
