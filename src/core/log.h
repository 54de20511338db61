// One-line logs on stderr for daemons, journald-friendly: each line starts with the syslog
// priority in angle brackets ("<3>" error, "<4>" warning, "<6>" info), which
// journald turns into the entry's priority (SyslogLevelPrefix=yes, the default), followed by
// "gpudoctor[<component>]: " and the message. Newlines in messages are replaced so one event is
// one line. Thread-safe (one write(2) per line).
#pragma once

#include <string_view>

namespace gpudoctor {

enum class LogLevel { kError = 3, kWarn = 4, kInfo = 6 };

void Log(LogLevel level, std::string_view component, std::string_view message);
inline void LogError(std::string_view c, std::string_view m) { Log(LogLevel::kError, c, m); }
inline void LogWarn(std::string_view c, std::string_view m) { Log(LogLevel::kWarn, c, m); }
inline void LogInfo(std::string_view c, std::string_view m) { Log(LogLevel::kInfo, c, m); }

}  // namespace gpudoctor
