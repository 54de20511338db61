// Kernel log line shapes: detects and strips the prefix of one line and returns its timestamp and
// the kernel message text. Shapes: raw /dev/kmsg records ("6,1234,5678901,-;text"), dmesg
// ("[ 1234.567890] text", "<4>[ ...]", "kern  :warn  : [...]"), dmesg -T ("[Mon Mar  4 12:34:56
// 2024] text"), dmesg --time-format=iso, journalctl -k short / short-precise / short-iso and
// syslog files ("Mar  4 12:34:56 host kernel: [ 12.3] text", RFC 3339 stamps; the month also in
// the fr/de/es/ru/zh/ja spellings journalctl prints under those LC_TIME locales). Lines from user
// space (syslog tags other than "kernel", kmsg records with facility > 0) are marked non-kernel.
// A PRINTK_CALLER id after a dmesg stamp ("[ 1.0][  T1] ", "[ 1.0] [  T1] ") is skipped.
// Local times (syslog, dmesg -T) are converted with the process's time zone (TZ).
// Pure functions of the line and a small per-stream state; not thread-safe per state object.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "facts/kernel_facts.h"

namespace gpudoctor {

enum class LineShape {
  kUnknown,           // no recognised prefix: the whole line is the message
  kRawKmsg,           // /dev/kmsg record
  kKmsgContinuation,  // " SUBSYSTEM=pci" dictionary line of a kmsg record
  kDmesg,             // [secs.usecs]
  kDmesgCtime,        // dmesg -T
  kDmesgIso,          // dmesg --time-format=iso
  kSyslog,            // "Mmm dd hh:mm:ss host tag: ..." (journalctl short, syslog)
  kSyslogIso,         // "yyyy-mm-ddThh:mm:ss... host tag: ..." (short-iso, rsyslog RFC 3339)
  kTalos,             // talosctl dmesg: "NODE: kern: warning: [2026-04-22T21:26:20.5Z]: ..."
  kJournalBoot,       // journalctl "-- Boot <id> --" / "-- Reboot --"
  kJournalNote,       // other journalctl "-- ... --" lines
  kUntimed,           // a kernel line whose prefix carries no usable time: `dmesg -H`/`--reltime`
                      // ("[  +0.000844] ", "[Jan21 10:32] "), a bare "kernel: " prefix
};

struct LineFormatState {
  // For syslog dates without a year: the current time (Unix seconds). A date that would lie more
  // than two days in the future belongs to the previous year.
  int64_t now_unix_s = 0;  // 0 = take the clock once on first use
};

struct ParsedLine {
  LineShape shape = LineShape::kUnknown;
  LogTime time;
  std::string_view message;  // kernel message text, prefix stripped, no trailing '\r'
  bool kernel = true;        // false: the line came from user space
};

ParsedLine ParseLinePrefix(std::string_view line, LineFormatState& state);

// Helpers exposed for tests and the journal reader.
// Days since 1970-01-01 for a proleptic Gregorian date.
// Local (TZ) wall time to Unix microseconds; nullopt for an invalid date.
std::optional<int64_t> LocalTimeToUnixUs(int y, int mon, int day, int h, int min, int s,
                                         int64_t frac_us);

}  // namespace gpudoctor
