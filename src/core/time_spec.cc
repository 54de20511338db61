#include "core/time_spec.h"

#include <ctime>

#include "core/civil_time.h"

namespace gpudoctor {
namespace {

constexpr int64_t kMaxDurationS = 10LL * 366 * 86400;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

// Reads exactly `width` digits at `pos`.
bool Fixed(std::string_view s, size_t pos, size_t width, int& out) {
  if (pos + width > s.size()) return false;
  int v = 0;
  for (size_t i = 0; i < width; ++i) {
    if (!IsDigit(s[pos + i])) return false;
    v = v * 10 + (s[pos + i] - '0');
  }
  out = v;
  return true;
}

int DaysInMonth(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

int64_t UnitSeconds(char unit) {
  switch (unit) {
    case 'w':
      return 7 * 86400;
    case 'd':
      return 86400;
    case 'h':
      return 3600;
    case 'm':
      return 60;
    case 's':
      return 1;
    default:
      return 0;
  }
}

// The zone suffix at `pos`: "Z", "+HH:MM", "+HHMM" or "+HH" (or "-"). Sets the offset east of UTC
// in seconds and returns the position after it; npos when malformed.
size_t ReadZone(std::string_view s, size_t pos, int64_t& offset_s) {
  offset_s = 0;
  if (pos == s.size()) return pos;
  if (s[pos] == 'Z' || s[pos] == 'z') return pos + 1;
  if (s[pos] != '+' && s[pos] != '-') return std::string_view::npos;
  int sign = s[pos] == '-' ? -1 : 1;
  int hh = 0, mm = 0;
  if (!Fixed(s, pos + 1, 2, hh)) return std::string_view::npos;
  size_t end = pos + 3;
  if (end < s.size()) {
    if (s[end] == ':') ++end;
    if (!Fixed(s, end, 2, mm)) return std::string_view::npos;
    end += 2;
  }
  if (hh > 18 || mm > 59) return std::string_view::npos;
  offset_s = sign * (hh * 3600 + mm * 60);
  return end;
}

}  // namespace

std::optional<int64_t> ParseDurationS(std::string_view text) {
  if (text.empty() || text.size() > 24) return std::nullopt;
  int64_t total = 0;
  int64_t last_unit = 0;  // units must come largest first, each once
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    int64_t v = 0;
    while (i < text.size() && IsDigit(text[i])) {
      v = v * 10 + (text[i] - '0');
      if (v > kMaxDurationS) return std::nullopt;
      ++i;
    }
    if (i == start || i == text.size()) return std::nullopt;
    int64_t unit = UnitSeconds(text[i++]);
    if (unit == 0 || (last_unit != 0 && unit >= last_unit)) return std::nullopt;
    last_unit = unit;
    if (v > kMaxDurationS / unit) return std::nullopt;
    total += v * unit;
    if (total > kMaxDurationS) return std::nullopt;
  }
  if (total == 0) return std::nullopt;
  return total;
}

std::optional<int64_t> ParseTimeSpec(std::string_view text, int64_t now_unix_s) {
  if (text.empty() || text.size() > 40) return std::nullopt;
  if (text[0] == '@') {
    text.remove_prefix(1);
    if (!AllDigits(text)) return std::nullopt;
  }
  if (AllDigits(text)) {
    if (text.size() > 12) return std::nullopt;
    int64_t v = 0;
    for (char c : text) v = v * 10 + (c - '0');
    return v;
  }
  if (auto d = ParseDurationS(text)) return now_unix_s - *d;
  return ParseRfc3339(text);
}

std::optional<int64_t> ParseRfc3339(std::string_view text) {
  if (text.size() > 40) return std::nullopt;
  int y, mo, d, h = 0, mi = 0, s = 0;
  if (text.size() < 10 || !Fixed(text, 0, 4, y) || text[4] != '-' || !Fixed(text, 5, 2, mo) ||
      text[7] != '-' || !Fixed(text, 8, 2, d)) {
    return std::nullopt;
  }
  size_t pos = 10;
  if (pos < text.size() && (text[pos] == 'T' || text[pos] == 't' || text[pos] == ' ')) {
    if (!Fixed(text, pos + 1, 2, h) || pos + 3 >= text.size() || text[pos + 3] != ':' ||
        !Fixed(text, pos + 4, 2, mi)) {
      return std::nullopt;
    }
    pos += 6;
    if (pos < text.size() && text[pos] == ':') {
      if (!Fixed(text, pos + 1, 2, s)) return std::nullopt;
      pos += 3;
      if (pos < text.size() && (text[pos] == '.' || text[pos] == ',')) {
        size_t digits = 0;
        while (pos + 1 + digits < text.size() && IsDigit(text[pos + 1 + digits])) ++digits;
        if (digits == 0 || digits > 9) return std::nullopt;
        pos += 1 + digits;
      }
    }
  }
  int64_t offset_s = 0;
  pos = ReadZone(text, pos, offset_s);
  if (pos != text.size()) return std::nullopt;
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > DaysInMonth(y, mo) || h > 23 || mi > 59 ||
      s > 60) {
    return std::nullopt;
  }
  int64_t unix_s = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 +
                   h * 3600 + mi * 60 + s - offset_s;
  if (unix_s < 0) return std::nullopt;  // before 1970 once the offset is applied
  return unix_s;
}

std::string TimeSpecExpectation() {
  return "a time: a duration back from now (6h, 1h30m, 7d), unix seconds (1700000000 or "
         "@1700000000) or RFC 3339 (2024-03-04, 2024-03-04T12:00:00Z, 2024-03-04T14:00+02:00; "
         "UTC when no zone is given)";
}

std::string DurationExpectation() {
  return "a duration: a number and a unit s, m, h, d or w, parts largest first (90s, 15m, 2h, "
         "1h30m, 7d)";
}

std::string FormatUtc(int64_t unix_s) {
  std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return "invalid-time";
  char buf[48];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string FormatUtc(std::chrono::system_clock::time_point t) {
  return FormatUtc(static_cast<int64_t>(std::chrono::system_clock::to_time_t(t)));
}

}  // namespace gpudoctor
