// Redaction of secrets in text that leaves the machine (`gpudoctor bundle`'s config.toml and
// every other member). Line-oriented and conservative: it may hide a harmless value, never show
// a secret it recognises. Recognised:
//   - TOML keys that look secret (token, secret, password, passwd, api_key, apikey, auth,
//     authorization, credential, private_key, cookie, *key, sig, *signature; not *_file / *_path,
//     which name files): the value becomes "<redacted>", on every line of a multi-line string or
//     array;
//   - `url` keys of [notify.*] tables: only scheme://host is kept ("https://host/<redacted>");
//   - array elements (argv) after a secret-looking flag (--token, --password, --api-key, -p, -u)
//     and elements of the form user:pass;
//   - userinfo in URLs (scheme://user:pass@host -> scheme://<redacted>@host; up to the last '@');
//   - "Bearer X" / "Basic X" credentials (Authorization headers in any value);
//   - NAME=VALUE and query parameters whose NAME looks secret (argv like --password=x, ?token=x,
//     ?access_key=x&sig=y);
//   - every occurrence of the explicit `secrets` (the bearer token read from token_file).
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpudoctor {

inline constexpr std::string_view kRedacted = "<redacted>";

// True when a key or parameter name looks like it holds a secret.
bool SecretLookingName(std::string_view name);

// lines = false (JSON and reports, whose structure must stay as rendered): only URL userinfo,
// NAME=VALUE with a secret-looking NAME (ending at quotes and backslashes, so JSON stays valid)
// and the explicit secrets are replaced; no TOML or NAME: VALUE rules.
std::string RedactText(std::string_view text, const std::vector<std::string>& secrets,
                       bool lines = true);

}  // namespace gpudoctor
