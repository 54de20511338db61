// Durations and points in time as operators type them (`gpudoctor history --since 6h`,
// `gpudoctor silence --for 2h`, the HTTP API's `since=`/`until=`): the one time grammar of
// gpudoctor, so the CLI and the API accept the same text. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpudoctor {

// "90s", "15m", "6h", "7d", "2w" (a positive integer and one unit) in seconds, at most 10 years.
std::optional<int64_t> ParseDurationS(std::string_view text);

// A point in time in unix seconds: a duration back from now ("6h" = now - 6 h), unix seconds
// ("1700000000" or "@1700000000"), or ISO 8601 in UTC: "2024-03-04", "2024-03-04T12:00",
// "2024-03-04T12:00:00", optionally with a trailing "Z" (a space may replace the "T").
std::optional<int64_t> ParseTimeSpec(std::string_view text, int64_t now_unix_s);

// "2024-03-04T12:00:00Z"
std::string FormatUtc(int64_t unix_s);

}  // namespace gpudoctor
