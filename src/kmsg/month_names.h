// Month names at the start of a kernel-log line's timestamp: English ("Mar", dmesg -T, syslog)
// and the abbreviations journalctl prints under other LC_TIME locales (glibc's abmon: "mars",
// "jan.", "мар", "3月", " 3월", ...). Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

namespace gpudoctor {

// 1-12 for "Jan".."Dec" exactly (case-sensitive), else 0.
int EnglishMonthFromName(std::string_view m);

// Month of the syslog/journal stamp at the start of `line` (English or another locale's name
// followed by a space) and, in `len`, the length of its token (the leading space of ja/ko
// included); 0 when the line does not start with a month name followed by a space.
int SyslogMonthAt(std::string_view line, size_t& len);

}  // namespace gpudoctor
