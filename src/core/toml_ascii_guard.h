// A check of TOML text run before toml++ parses it: TOML 1.0 allows characters outside ASCII only
// inside strings and comments (bare keys are A-Za-z0-9_-). The config loader and the bundle's
// redaction refuse text with such a character elsewhere here, naming its line and column, before
// toml++ sees it. (toml++ 3.3's own whitespace test had undefined behaviour on such characters;
// core/toml.h replaces it, so this guard is now the clear error, no longer the only defence.)
// Valid TOML always passes: the scanner follows the four string forms (basic with escapes,
// literal, and their multi-line forms) and comments; a quote opens a string only where one may
// begin (line start, after = [ , { or a key's dot). Invalid text may still hide one from it
// (`a = 0[[ """ é`): toml++ then reports the error itself, now without undefined behaviour.
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
