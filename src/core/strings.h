// Small string helpers for parsing outside input. All functions are pure and thread-safe.
// Number parsers reject empty input, trailing garbage and overflow instead of guessing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpudoctor {

std::string_view Trim(std::string_view s);
bool StartsWith(std::string_view s, std::string_view prefix);
bool EndsWith(std::string_view s, std::string_view suffix);
// Splits on any character of `delims`; empty fields are dropped when skip_empty.
std::vector<std::string_view> Split(std::string_view s, std::string_view delims,
                                    bool skip_empty = true);
std::vector<std::string_view> SplitLines(std::string_view s);

// Decimal integers (leading '+'/'-' allowed for signed), whole string after Trim must be a number.
std::optional<int64_t> ParseInt64(std::string_view s);
std::optional<uint64_t> ParseUint64(std::string_view s);
// Only ASCII digits, at most max_digits of them (no sign, no spaces): the cheap parser for
// numbers inside log lines, where absurd lengths mean garbage rather than big values.
std::optional<int64_t> ParseBoundedDecimal(std::string_view s, size_t max_digits = 12);
// Hex with optional 0x prefix.
std::optional<uint64_t> ParseHex(std::string_view s);
// Finite decimal floating point; NaN and infinities are rejected.
std::optional<double> ParseDouble(std::string_view s);

// Length of the well-formed UTF-8 sequence of two to four bytes starting at s[i] (RFC 3629:
// no overlong forms, no surrogates, nothing past U+10FFFF), and its code point in
// `*code_point` when given; 0 when there is none there, for ASCII and when i is past the end.
size_t Utf8SequenceLength(std::string_view s, size_t i, uint32_t* code_point = nullptr);

// Replaces bytes that are not printable ASCII or valid UTF-8 with '?', and caps the length, so
// outside text is safe to print and to embed in JSON.
std::string Sanitize(std::string_view s, size_t max_len = 512);

// "scheme://host[:port]" of a URL: userinfo (up to the last '@' of the authority), path, query
// and fragment dropped, so a URL that may carry credentials (webhook tokens, user:pass@, Slack
// /services/T/B/SECRET paths) can be logged or recorded. Without "://" only the authority part
// (before the first '/', '?' or '#', after the last '@') is kept.
std::string UrlOrigin(std::string_view url);

// "1.5 GiB", "512 B"; IEC units.
std::string FormatBytes(uint64_t bytes);
// Fixed decimals (0..20, clamped) without trailing zeros, always with a '.' whatever the locale:
// 97.25 -> "97.2" with decimals=1; -0.04 -> "0"; NaN and infinities -> "nan".
std::string FormatDouble(double v, int decimals = 1);

}  // namespace gpudoctor
