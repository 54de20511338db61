// Redaction of secrets in text that leaves the machine (`gpudoctor bundle`'s config.toml and
// every other member). Line-oriented and conservative: it may hide a harmless value, never show
// a secret it recognises. Recognised:
//   - TOML keys that look secret (token, secret, password, passwd, api_key, apikey, auth,
//     authorization, credential, private_key, cookie; not *_file / *_path, which name files):
//     the value becomes "<redacted>";
//   - userinfo in URLs (scheme://user:pass@host -> scheme://<redacted>@host);
//   - "Bearer X" / "Basic X" credentials (Authorization headers in any value);
//   - NAME=VALUE and query parameters whose NAME looks secret (argv like --password=x, ?token=x);
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

// lines = false: only the explicit secrets are replaced (for JSON and reports, whose text
// must stay as rendered).
std::string RedactText(std::string_view text, const std::vector<std::string>& secrets,
                       bool lines = true);

}  // namespace gpudoctor
