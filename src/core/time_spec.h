// Durations and points in time as operators type them: the one time grammar of gpudoctor for
// CLI flags (`--since`, `--until`, `--for`), the HTTP API (`since=`/`until=`) and the config, so
// every place accepts the same text with the same error. And the one UTC formatter for output.
// Pure functions; thread-safe (no locale, no TZ lookup).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpudoctor {

// A positive duration in seconds, at most 10 years: one or more number+unit parts, units s, m,
// h, d, w, largest first and each at most once ("90s", "15m", "6h", "7d", "2w", "1h30m",
// "1d12h"). Nullopt for anything else ("0s", "2h30", "30m1h", "1.5h").
std::optional<int64_t> ParseDurationS(std::string_view text);

// A point in time in unix seconds:
//   - a duration back from `now_unix_s` ("6h" = now - 6 h, "1h30m");
//   - unix seconds, bare or after "@" ("1700000000", "@1700000000");
//   - RFC 3339 / ISO 8601: "2024-03-04", "2024-03-04T12:00", "2024-03-04T12:00:00" (a space may
//     replace the "T"), optional fraction (".250", dropped: whole seconds), optional zone "Z",
//     "+02:00", "+0200" or "-05". A time without a zone is UTC, like every time gpudoctor prints.
// Nullopt when the text is none of these or names an impossible date.
std::optional<int64_t> ParseTimeSpec(std::string_view text, int64_t now_unix_s);

// The absolute forms alone (RFC 3339 / ISO 8601 as above), for timestamps written by machines:
// report "time" fields, API documents. Nullopt for durations and unix seconds.
std::optional<int64_t> ParseRfc3339(std::string_view text);

// The error text for a value ParseTimeSpec refused, naming what was expected (one wording for
// every flag, key and API parameter that takes a time).
std::string TimeSpecExpectation();
// Same for ParseDurationS.
std::string DurationExpectation();

// "2024-03-04T12:00:00Z": the one UTC formatter.
std::string FormatUtc(int64_t unix_s);
std::string FormatUtc(std::chrono::system_clock::time_point t);

}  // namespace gpudoctor
