// A check of TOML text run before toml++ parses it: TOML 1.0 allows characters outside ASCII only
// inside strings and comments (bare keys are A-Za-z0-9_-). toml++ 3.0 (Debian 12) reaches
// __builtin_unreachable() (undefined behaviour) when it tests such a character outside a string
// for whitespace (is_non_ascii_horizontal_whitespace, e.g. U+00E9 or U+3041 in a bare key), so
// the config loader and the bundle's redaction reject that text here, with the place, and never
// hand it to toml++. Valid TOML always passes: the scanner follows the four string forms (basic
// with escapes, literal, and their multi-line forms) and comments.
// Thread-safe (pure).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace gpudoctor {

struct TomlTextPlace {
  size_t line = 0;    // from 1
  size_t column = 0;  // from 1, in bytes
};

// What the callers say about the place found.
inline constexpr const char* kTomlNonAsciiOutsideStrings =
    "a character outside ASCII outside a string or comment (TOML allows it only in quoted strings "
    "and comments)";

// The first byte >= 0x80 outside strings and comments, or nullopt when there is none.
std::optional<TomlTextPlace> FindNonAsciiOutsideStrings(std::string_view text);

}  // namespace gpudoctor
