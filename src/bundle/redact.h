// Redaction of secrets in what leaves the machine (`gpudoctor bundle`'s members). It may hide a
// harmless value, never show a secret it recognises.
//
// The config (RedactConfigToml) is redacted from its parsed TOML document, never by matching its
// text, so quoting, dotted keys, inline tables, multi-line and line-continued strings, spaced or
// quoted table headers ([[ notify . webhook ]], [["notify".webhook]]) all reach the same rules:
//   - every value under a key that looks secret (token, secret, password, passwd, api_key, auth,
//     authorization, credential, private_key, cookie, *key, sig, *signature; not *_file / *_path,
//     which name files), at any depth and whatever its type (arrays and tables: every leaf);
//   - inside any notifier table (a key spelled like "notify", any case, and all below it): only
//     `min_severity`, `timeout_s`, the origin of `url` (scheme://host:port, "/<redacted>" for the
//     rest) and, of `argv`, the absolute program path, `--`, bare long options (--name) and
//     placeholders ({id}) are kept; every other value is "<redacted>";
//   - in every other string: URL userinfo, "Authorization: ..." and Bearer/Basic/Token
//     credentials, NAME=VALUE / "NAME": "VALUE" with a secret-looking NAME;
//   - every occurrence of the explicit `secrets` (the bearer token read from token_file).
// The result is re-serialised TOML (comments, which may quote old secrets, are dropped). A config
// that does not parse is replaced by a one-line note (line and column only, never its text).
//
// RedactText serves the other members (JSON, reports): URL userinfo, Authorization values,
// NAME=VALUE with a secret-looking NAME (ending at quotes and backslashes, so JSON stays valid)
// and the explicit secrets (those shorter than 4 characters only where they stand alone, not
// inside a longer word).
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpudoctor {

inline constexpr std::string_view kRedacted = "<redacted>";

// True when a key or parameter name looks like it holds a secret.
bool SecretLookingName(std::string_view name);

std::string RedactConfigToml(std::string_view text, const std::vector<std::string>& secrets);

std::string RedactText(std::string_view text, const std::vector<std::string>& secrets);

}  // namespace gpudoctor
