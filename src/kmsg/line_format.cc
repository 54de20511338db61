#include "kmsg/line_format.h"

#include <algorithm>
#include <ctime>

#include "core/civil_time.h"
#include "kmsg/month_names.h"

namespace gpudoctor {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A tiny cursor over the line; every Read* returns false and leaves the cursor unusable on a
// mismatch (callers then fall back to another shape).
struct Cursor {
  std::string_view s;
  size_t i = 0;
  bool AtEnd() const { return i >= s.size(); }
  char Peek() const { return i < s.size() ? s[i] : '\0'; }
  bool Eat(char c) {
    if (Peek() != c) return false;
    ++i;
    return true;
  }
  void SkipSpaces() {
    while (Peek() == ' ') ++i;
  }
  // Reads 1..max_digits decimal digits.
  bool ReadUint(uint64_t& v, size_t max_digits, size_t min_digits = 1) {
    size_t start = i;
    v = 0;
    while (IsDigit(Peek()) && i - start < max_digits) v = v * 10 + (s[i++] - '0');
    if (i - start < min_digits) return false;
    return !IsDigit(Peek());
  }
  // Fraction digits after '.' or ',' → microseconds (extra digits dropped).
  bool ReadFractionUs(int64_t& us) {
    size_t start = i;
    int64_t v = 0;
    int n = 0;
    while (IsDigit(Peek())) {
      if (n < 6) {
        v = v * 10 + (s[i] - '0');
        ++n;
      }
      ++i;
      if (i - start > 12) return false;
    }
    if (i == start) return false;
    while (n < 6) {
      v *= 10;
      ++n;
    }
    us = v;
    return true;
  }
};

// "hh:mm:ss" with optional ".ffffff".
bool ReadClock(Cursor& c, int& h, int& mi, int& se, int64_t& frac_us) {
  uint64_t a, b, d;
  if (!c.ReadUint(a, 2, 2) || !c.Eat(':') || !c.ReadUint(b, 2, 2) || !c.Eat(':') ||
      !c.ReadUint(d, 2, 2)) {
    return false;
  }
  if (a > 23 || b > 59 || d > 60) return false;
  h = static_cast<int>(a);
  mi = static_cast<int>(b);
  se = static_cast<int>(d);
  frac_us = 0;
  if (c.Peek() == '.' || c.Peek() == ',') {
    ++c.i;
    if (!c.ReadFractionUs(frac_us)) return false;
  }
  return true;
}

// "[   12.345678]" → boot microseconds. Cursor at '['.
bool ReadBootStamp(Cursor& c, int64_t& boot_us) {
  if (!c.Eat('[')) return false;
  c.SkipSpaces();
  uint64_t secs;
  if (!c.ReadUint(secs, 10)) return false;
  int64_t frac = 0;
  if (c.Eat('.')) {
    if (!c.ReadFractionUs(frac)) return false;
  }
  if (!c.Eat(']')) return false;
  boot_us = static_cast<int64_t>(secs) * 1000000 + frac;
  return true;
}

// `dmesg -H` / `--reltime` stamps, which carry no time of their own that can be placed: the
// delta since the previous line ("[  +0.000844]", "[+0.000001]") or the minute of the first line
// of a group without a year ("[Jan21 10:32]", "[Jan 21 10:32]"). Cursor at '['; true when one
// was read.
bool ReadUntimedStamp(Cursor& c) {
  if (!c.Eat('[')) return false;
  c.SkipSpaces();
  if (c.Eat('+')) {
    uint64_t secs;
    int64_t frac = 0;
    return c.ReadUint(secs, 10) && c.Eat('.') && c.ReadFractionUs(frac) && c.Eat(']');
  }
  if (EnglishMonthFromName(c.s.substr(c.i, 3)) == 0) return false;
  c.i += 3;
  c.Eat(' ');
  uint64_t day, hour, minute;
  return c.ReadUint(day, 2) && day >= 1 && day <= 31 && c.Eat(' ') && c.ReadUint(hour, 2, 2) &&
         hour <= 23 && c.Eat(':') && c.ReadUint(minute, 2, 2) && minute <= 59 && c.Eat(']');
}

// The caller id CONFIG_PRINTK_CALLER puts after the stamp: "[    T123]" (a task) or "[    C3]" (a
// CPU), right after it as the kernel writes it ("[    7.634517][    T1] text", syslog(2) and
// consoles) or after a space as util-linux dmesg >= 2.40 prints it ("[    1.791786] [    T1]
// text"). Skipped, with the space before it; otherwise the cursor stays where it was.
void SkipCallerId(Cursor& c) {
  Cursor t = c;
  t.Eat(' ');
  if (!t.Eat('[')) return;
  t.SkipSpaces();
  if (!t.Eat('T') && !t.Eat('C')) return;
  uint64_t id;
  if (!t.ReadUint(id, 10) || !t.Eat(']')) return;
  c = t;
}

// "Mon Mar  4 12:34:56 2024]" (dmesg -T; cursor after '[').
bool ReadCtimeStamp(Cursor& c, int64_t& wall_us) {
  if (c.s.size() < c.i + 24) return false;
  c.i += 3;  // weekday name
  if (!c.Eat(' ')) return false;
  int mon = EnglishMonthFromName(c.s.substr(c.i, 3));
  if (mon == 0) return false;
  c.i += 3;
  c.SkipSpaces();
  uint64_t day, year;
  if (!c.ReadUint(day, 2) || !c.Eat(' ')) return false;
  int h, mi, se;
  int64_t frac;
  if (!ReadClock(c, h, mi, se, frac) || !c.Eat(' ') || !c.ReadUint(year, 4, 4) || !c.Eat(']')) {
    return false;
  }
  auto us = LocalTimeToUnixUs(static_cast<int>(year), mon, static_cast<int>(day), h, mi, se, frac);
  if (!us) return false;
  wall_us = *us;
  return true;
}

// RFC 3339 / ISO 8601 stamp at the cursor: 2024-03-04T12:34:56[.ffffff|,ffffff][Z|±hh[:]mm].
bool ReadIsoStamp(Cursor& c, int64_t& wall_us) {
  uint64_t y, mo, d;
  if (!c.ReadUint(y, 4, 4) || !c.Eat('-') || !c.ReadUint(mo, 2, 2) || !c.Eat('-') ||
      !c.ReadUint(d, 2, 2)) {
    return false;
  }
  if (!c.Eat('T') && !c.Eat(' ')) return false;
  int h, mi, se;
  int64_t frac;
  if (!ReadClock(c, h, mi, se, frac)) return false;
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return false;
  char sign = c.Peek();
  if (sign == 'Z') {
    ++c.i;
    wall_us = (DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se) * 1000000 + frac;
    return true;
  }
  if (sign == '+' || sign == '-') {
    ++c.i;
    // "+hh:mm" or "+hhmm": exactly two digits each.
    auto two = [&](uint64_t& v) {
      if (c.i + 2 > c.s.size() || !IsDigit(c.s[c.i]) || !IsDigit(c.s[c.i + 1])) return false;
      v = static_cast<uint64_t>((c.s[c.i] - '0') * 10 + (c.s[c.i + 1] - '0'));
      c.i += 2;
      return true;
    };
    uint64_t oh, om;
    if (!two(oh)) return false;
    c.Eat(':');
    if (!two(om) || IsDigit(c.Peek()) || oh > 23 || om > 59) return false;
    int64_t offset_s = static_cast<int64_t>(oh * 3600 + om * 60) * (sign == '-' ? -1 : 1);
    wall_us =
        (DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - offset_s) * 1000000 + frac;
    return true;
  }
  auto us = LocalTimeToUnixUs(static_cast<int>(y), static_cast<int>(mo), static_cast<int>(d), h, mi,
                              se, frac);
  if (!us) return false;
  wall_us = *us;
  return true;
}

bool IsTagChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '_' || c == '-' ||
         c == '.' || c == '@' || c == '/' || c == '(' || c == ')';
}

// A syslog tag: "name:" or "name[123]:" (no ':' inside, at least one letter).
bool LooksLikeTag(std::string_view t) {
  if (t.size() < 2 || t.back() != ':') return false;
  t.remove_suffix(1);
  if (t.back() == ']') {
    size_t open = t.rfind('[');
    if (open == std::string_view::npos || open == 0) return false;
    for (char c : t.substr(open + 1, t.size() - open - 2)) {
      if (!IsDigit(c)) return false;
    }
    t = t.substr(0, open);
  }
  bool letter = false;
  for (char c : t) {
    if (!IsTagChar(c)) return false;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) letter = true;
  }
  return letter;
}

std::string_view NextToken(std::string_view s) {
  size_t sp = s.find(' ');
  return sp == std::string_view::npos ? s : s.substr(0, sp);
}

// After a syslog/journal time stamp: "[host ]tag: message". Fills message and kernel.
void SplitSyslogRest(std::string_view rest, bool iso, ParsedLine& out) {
  static constexpr std::string_view kKernel = "kernel: ";
  if (rest.substr(0, kKernel.size()) == kKernel) {  // journalctl --no-hostname
    out.message = rest.substr(kKernel.size());
    return;
  }
  if (iso && !rest.empty() && rest[0] == '[') {  // dmesg --time-format=iso, a caller id first
    Cursor c{rest};
    SkipCallerId(c);
    if (c.i > 0) {
      c.Eat(' ');
      out.shape = LineShape::kDmesgIso;
      out.message = rest.substr(c.i);
      return;
    }
  }
  std::string_view t1 = NextToken(rest);
  if (iso && !t1.empty() && t1.back() == ':') {  // dmesg --time-format=iso: message follows
    out.shape = LineShape::kDmesgIso;
    out.message = rest;
    return;
  }
  std::string_view rest2 = t1.size() < rest.size() ? rest.substr(t1.size() + 1) : "";
  if (rest2.substr(0, kKernel.size()) == kKernel) {
    out.message = rest2.substr(kKernel.size());
    return;
  }
  std::string_view t2 = NextToken(rest2);
  if (LooksLikeTag(t2) && !t1.empty() && t1.back() != ':') {
    out.kernel = false;
    out.message = t2.size() < rest2.size() ? rest2.substr(t2.size() + 1) : "";
    return;
  }
  if (iso) out.shape = LineShape::kDmesgIso;
  out.message = rest;  // unknown sub-shape: keep the text
}

// Strips an inner "[ 12.345678] " kernel stamp (syslog files of older rsyslog setups).
void StripInnerBootStamp(ParsedLine& out) {
  if (out.message.empty() || out.message[0] != '[') return;
  Cursor c{out.message};
  int64_t boot_us;
  if (!ReadBootStamp(c, boot_us)) return;
  out.time.boot_us = boot_us;
  SkipCallerId(c);
  c.Eat(' ');
  out.message = out.message.substr(c.i);
}

bool ParseRawKmsg(std::string_view line, ParsedLine& out) {
  Cursor c{line};
  uint64_t prio, seq, usec;
  if (!c.ReadUint(prio, 4) || !c.Eat(',') || !c.ReadUint(seq, 20) || !c.Eat(',') ||
      !c.ReadUint(usec, 20) || !c.Eat(',')) {
    return false;
  }
  size_t semi = line.find(';', c.i);
  if (semi == std::string_view::npos || semi - c.i > 64) return false;
  if (usec > (uint64_t{1} << 62)) return false;
  out.shape = LineShape::kRawKmsg;
  out.kernel = (prio >> 3) == 0;
  out.time.boot_us = static_cast<int64_t>(usec);
  out.message = line.substr(semi + 1);
  return true;
}

bool ParseSyslogMonth(std::string_view line, LineFormatState& state, ParsedLine& out) {
  if (line.size() < 16) return false;
  size_t month_len = 0;
  int mon = SyslogMonthAt(line, month_len);
  if (mon == 0) return false;
  Cursor c{line, month_len};
  c.SkipSpaces();
  uint64_t day;
  if (!c.ReadUint(day, 2) || !c.Eat(' ')) return false;
  int h, mi, se;
  int64_t frac;
  if (!ReadClock(c, h, mi, se, frac) || !c.Eat(' ')) return false;
  if (state.now_unix_s == 0) state.now_unix_s = static_cast<int64_t>(std::time(nullptr));
  std::time_t now = static_cast<std::time_t>(state.now_unix_s);
  std::tm now_tm{};
  localtime_r(&now, &now_tm);
  int year = now_tm.tm_year + 1900;
  auto us = LocalTimeToUnixUs(year, mon, static_cast<int>(day), h, mi, se, frac);
  if (us && *us / 1000000 > state.now_unix_s + 2 * 86400) {
    us = LocalTimeToUnixUs(year - 1, mon, static_cast<int>(day), h, mi, se, frac);
  }
  out.shape = LineShape::kSyslog;
  out.time.wall_us = us;
  SplitSyslogRest(line.substr(c.i), false, out);
  if (out.kernel) StripInnerBootStamp(out);
  return true;
}

bool ParseIsoLine(std::string_view line, ParsedLine& out) {
  Cursor c{line};
  int64_t wall;
  if (!ReadIsoStamp(c, wall) || !c.Eat(' ')) return false;
  out.shape = LineShape::kSyslogIso;
  out.time.wall_us = wall;
  SplitSyslogRest(line.substr(c.i), true, out);
  if (out.kernel) StripInnerBootStamp(out);
  return true;
}

// talosctl dmesg (Talos Linux, a Kubernetes OS without a shell or journal): "NODE: FACILITY:
// LEVEL: [RFC 3339 stamp]: message", the level right-aligned in 7 columns ("kern:    info:",
// "kern:     err:"); NODE (the address or name talosctl was given) may be absent.
bool ParseTalos(std::string_view line, ParsedLine& out) {
  constexpr size_t kMaxNode = 253;  // a DNS name's length
  size_t colon = line.find(": ");
  if (colon == std::string_view::npos || colon > kMaxNode) return false;
  auto is_word = [](std::string_view w) {
    return !w.empty() &&
           std::all_of(w.begin(), w.end(), [](char ch) { return ch >= 'a' && ch <= 'z'; });
  };
  std::string_view facility = line.substr(0, colon);
  if (!is_word(facility)) {  // NODE first
    if (facility.find(' ') != std::string_view::npos) return false;
    size_t next = line.find(": ", colon + 2);
    if (next == std::string_view::npos) return false;
    facility = line.substr(colon + 2, next - colon - 2);
    colon = next;
  }
  if (!is_word(facility) || facility.size() > 8) return false;
  Cursor c{line, colon + 1};
  c.SkipSpaces();
  size_t level_start = c.i;
  while (c.i < line.size() && line[c.i] >= 'a' && line[c.i] <= 'z') ++c.i;
  if (c.i == level_start || c.i - level_start > 7 || !c.Eat(':') || !c.Eat(' ') || !c.Eat('[')) {
    return false;
  }
  int64_t wall;
  if (!ReadIsoStamp(c, wall) || !c.Eat(']') || !c.Eat(':')) return false;
  c.Eat(' ');
  out.shape = LineShape::kTalos;
  out.time.wall_us = wall;
  out.kernel = facility == "kern";
  out.message = line.substr(c.i);
  return true;
}

// dmesg family: optional "<N>" or "kern  :warn  : " then "[stamp] ".
bool ParseDmesg(std::string_view line, ParsedLine& out) {
  Cursor c{line};
  if (c.Peek() == '<') {  // dmesg -r: "<6>[ ...]"
    ++c.i;
    uint64_t prio;
    if (!c.ReadUint(prio, 4) || !c.Eat('>')) return false;
    out.kernel = (prio >> 3) == 0;
  } else if (line.substr(0, 4) == "kern" || line.substr(0, 4) == "user" ||
             line.substr(0, 6) == "daemon") {  // dmesg -x: "kern  :warn  : [...]"
    size_t colon1 = line.find(':');
    if (colon1 == std::string_view::npos || colon1 > 10) return false;
    size_t colon2 = line.find(':', colon1 + 1);
    if (colon2 == std::string_view::npos || colon2 > colon1 + 10) return false;
    out.kernel = line.substr(0, 4) == "kern";
    c.i = colon2 + 1;
    c.SkipSpaces();
  }
  if (c.Peek() != '[') return false;
  size_t open = c.i;
  int64_t boot_us;
  if (ReadBootStamp(c, boot_us)) {
    out.shape = LineShape::kDmesg;
    out.time.boot_us = boot_us;
  } else {
    c.i = open + 1;
    int64_t wall;
    if (ReadCtimeStamp(c, wall)) {
      out.shape = LineShape::kDmesgCtime;
      out.time.wall_us = wall;
    } else {
      c.i = open;
      if (!ReadUntimedStamp(c)) return false;
      out.shape = LineShape::kUntimed;
    }
  }
  SkipCallerId(c);
  c.Eat(' ');
  out.message = line.substr(c.i);
  return true;
}

}  // namespace

std::optional<int64_t> LocalTimeToUnixUs(int y, int mon, int day, int h, int min, int s,
                                         int64_t frac_us) {
  if (y < 1970 || y > 9999 || mon < 1 || mon > 12 || day < 1 || day > 31) return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = h;
  tm.tm_min = min;
  tm.tm_sec = s;
  tm.tm_isdst = -1;
  std::time_t t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<int64_t>(t) * 1000000 + frac_us;
}

ParsedLine ParseLinePrefix(std::string_view line, LineFormatState& state) {
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  ParsedLine out;
  if (line.empty()) return out;
  char c0 = line[0];
  if (c0 == ' ') {
    // kmsg dictionary line: " KEY=value"
    size_t eq = line.find('=');
    if (eq != std::string_view::npos && eq > 1) {
      bool key = true;
      for (char c : line.substr(1, eq - 1)) {
        if (!((c >= 'A' && c <= 'Z') || c == '_' || IsDigit(c))) key = false;
      }
      if (key) {
        out.shape = LineShape::kKmsgContinuation;
        out.message = line;
        return out;
      }
    }
  }
  if (c0 == '-' && line.substr(0, 3) == "-- ") {
    out.shape = (line.substr(0, 8) == "-- Boot " || line.substr(0, 12) == "-- Reboot --")
                    ? LineShape::kJournalBoot
                    : LineShape::kJournalNote;
    out.message = line;
    return out;
  }
  if (IsDigit(c0)) {
    ParsedLine p;
    if (ParseRawKmsg(line, p)) return p;
    p = ParsedLine{};
    if (ParseIsoLine(line, p)) return p;
  } else if (c0 == '[' || c0 == '<' || c0 == 'k' || c0 == 'u' || c0 == 'd') {
    ParsedLine p;
    if (ParseDmesg(line, p)) return p;
  }
  if (IsDigit(c0) || (c0 >= 'a' && c0 <= 'z') || (c0 >= 'A' && c0 <= 'Z')) {
    ParsedLine p;
    if (ParseTalos(line, p)) return p;
  }
  // A bare "kernel: " prefix (journal and syslog excerpts with the stamp and host cut off).
  if (c0 == 'k' && line.substr(0, 8) == "kernel: ") {
    out.shape = LineShape::kUntimed;
    out.message = line.substr(8);
    return out;
  }
  // Month names: English or another locale's (journalctl follows LC_TIME), "N月" in CJK locales.
  if ((c0 >= 'A' && c0 <= 'Z') || (c0 >= 'a' && c0 <= 'z') || IsDigit(c0) || c0 == ' ' ||
      static_cast<unsigned char>(c0) >= 0x80) {
    ParsedLine p;
    if (ParseSyslogMonth(line, state, p)) return p;
  }
  out.message = line;
  return out;
}

}  // namespace gpudoctor
