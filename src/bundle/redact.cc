#include "bundle/redact.h"

#include <cctype>
#include <optional>

#include "core/strings.h"

namespace gpudoctor {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool NameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

// scheme://user[:pass]@host -> scheme://<redacted>@host. The userinfo ends at the LAST '@' of
// the authority (a password may contain '@': https://user:p@ss@host).
std::string RedactUserinfo(std::string s) {
  for (size_t pos = s.find("://"); pos != std::string::npos; pos = s.find("://", pos + 3)) {
    size_t start = pos + 3;
    size_t end = start;
    while (end < s.size() && s[end] != '/' && s[end] != '"' && s[end] != '\'' && s[end] != ' ' &&
           s[end] != '?' && s[end] != '#' && s[end] != '\\' && s[end] != '\n') {
      ++end;
    }
    size_t at = std::string_view(s).substr(start, end - start).rfind('@');
    if (at != std::string::npos && at > 0 && s.compare(start, at, kRedacted) != 0) {
      s.replace(start, at, kRedacted);
    }
  }
  return s;
}

// "Bearer X" / "Basic X" (any case) -> "Bearer <redacted>".
std::string RedactSchemes(std::string s) {
  std::string lower = Lower(s);
  for (std::string_view scheme : {"bearer ", "basic "}) {
    for (size_t pos = lower.find(scheme); pos != std::string::npos;
         pos = lower.find(scheme, pos + 1)) {
      size_t start = pos + scheme.size();
      while (start < s.size() && s[start] == ' ') ++start;
      size_t end = start;
      while (end < s.size() && s[end] != '"' && s[end] != '\'' && s[end] != ' ' && s[end] != ',' &&
             s[end] != '}' && s[end] != ']') {
        ++end;
      }
      if (end == start || s.compare(start, end - start, kRedacted) == 0) continue;
      s.replace(start, end - start, kRedacted);
      lower.replace(start, end - start, kRedacted);
    }
  }
  return s;
}

// NAME=VALUE / NAME:VALUE (colon only when `colon`) inside values and query strings, with a
// secret-looking NAME. A value ends at a quote or a backslash too, so JSON escapes stay intact.
std::string RedactAssignments(std::string s, bool colon = true) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '=' && (s[i] != ':' || !colon)) continue;
    size_t name_end = i;
    // In TOML lines (colon): inline tables too, { X-Api-Key = "v" }.
    while (colon && s[i] == '=' && name_end > 0 && s[name_end - 1] == ' ') --name_end;
    size_t name_start = name_end;
    while (name_start > 0 && NameChar(s[name_start - 1])) --name_start;
    if (name_start == name_end || !SecretLookingName(s.substr(name_start, name_end - name_start)))
      continue;
    size_t start = i + 1;
    if (s[i] == ':') {
      if (start < s.size() && s[start] == '/') continue;  // a URL scheme, not NAME:VALUE
      while (start < s.size() && s[start] == ' ') ++start;
    }
    if (colon && s[i] == '=') {  // NAME = "value": the whole quoted value
      while (start < s.size() && s[start] == ' ') ++start;
      if (start < s.size() && (s[start] == '"' || s[start] == '\'')) {
        size_t close = s.find(s[start], start + 1);
        if (close == std::string::npos) close = s.size();
        ++start;
        if (close == start || s.compare(start, close - start, kRedacted) == 0) continue;
        s.replace(start, close - start, kRedacted);
        i = start + kRedacted.size();
        continue;
      }
    }
    size_t end = start;
    while (end < s.size() && s[end] != '"' && s[end] != '\'' && s[end] != ' ' && s[end] != '&' &&
           s[end] != ',' && s[end] != '}' && s[end] != ']' && s[end] != '#' && s[end] != '\\' &&
           s[end] != '\n') {
      ++end;
    }
    if (end == start || s.compare(start, end - start, kRedacted) == 0) continue;
    s.replace(start, end - start, kRedacted);
    i = start + kRedacted.size() - 1;
  }
  return s;
}

// State carried from line to line of a TOML file.
struct TomlState {
  std::string table;               // the last [table] / [[array.of.tables]] header, no brackets
  std::string ml_delim;            // inside a multi-line string: its closing delimiter
  bool ml_secret = false;          // ... the value of a secret-looking key
  bool in_array = false;           // inside an array continued on the next lines
  bool array_secret = false;       // ... the value of a secret-looking key
  bool after_secret_flag = false;  // the previous array element was --token, -p, ...
};

// An argv element naming a secret that follows it: --token, --password, --api-key, -p, -u.
bool SecretFlag(std::string_view e) {
  if (e.size() < 2 || e[0] != '-' || e.find('=') != std::string_view::npos) return false;
  for (std::string_view f : {"-p", "-u", "-U", "--user", "--key", "--sig", "--signature"}) {
    if (e == f) return true;
  }
  return SecretLookingName(e);
}

// user:pass as one argv element (curl -u bob:hunter2); host:port (digits after ':') is not.
bool UserPassElement(std::string_view e) {
  size_t colon = e.find(':');
  if (colon == 0 || colon == std::string_view::npos || colon + 1 >= e.size()) return false;
  if (e[0] == '-' || e.find(':', colon + 1) != std::string_view::npos) return false;
  for (size_t i = 0; i < colon; ++i) {
    if (!NameChar(e[i])) return false;
  }
  bool digits = true;
  for (size_t i = colon + 1; i < e.size(); ++i) {
    char c = e[i];
    if (c == ' ' || c == '\t' || c == '/') return false;
    digits &= std::isdigit(static_cast<unsigned char>(c)) != 0;
  }
  return !digits;
}

// The quoted elements of (part of) an array from `from` on: the element after a secret flag, a
// user:pass element. Ends the array state at a ']' outside quotes.
std::string RedactArrayElements(std::string line, size_t from, TomlState& st) {
  for (size_t i = from; i < line.size(); ++i) {
    char q = line[i];
    if (q == '#') break;  // a comment
    if (q == ']') {
      st.in_array = false;
      st.after_secret_flag = false;
      break;
    }
    if (q != '"' && q != '\'') continue;
    size_t start = i + 1;
    size_t end = start;
    while (end < line.size() && line[end] != q) end += (q == '"' && line[end] == '\\') ? 2 : 1;
    if (end > line.size()) end = line.size();
    std::string_view e(line.data() + start, end - start);
    bool redact = st.after_secret_flag || UserPassElement(e);
    st.after_secret_flag = !redact && SecretFlag(e);
    if (redact && e != kRedacted) {
      line.replace(start, end - start, kRedacted);
      end = start + kRedacted.size();
    }
    i = end;
  }
  return line;
}

// The text of a one-line TOML string value, without its quotes.
std::optional<std::string> QuotedValue(std::string_view v) {
  if (v.size() < 2 || (v[0] != '"' && v[0] != '\'')) return std::nullopt;
  size_t end = v.find(v[0], 1);
  if (end == std::string_view::npos) return std::nullopt;
  return std::string(v.substr(1, end - 1));
}

// key = value: a secret-looking key loses its whole value (on every line it spans); a `url` of
// a [[notify.*]] table keeps only scheme://host; arrays lose their secret elements.
std::string RedactTomlLine(const std::string& line, TomlState& st) {
  if (!st.ml_delim.empty()) {  // inside a multi-line string
    size_t close = line.find(st.ml_delim);
    bool secret = st.ml_secret;
    if (close != std::string::npos) st.ml_delim.clear();
    if (!secret) return line;
    return close == std::string::npos ? std::string(kRedacted)
                                      : std::string(kRedacted) + line.substr(close);
  }
  if (st.in_array) {
    if (st.array_secret) {
      size_t close = line.find(']');
      if (close == std::string::npos) return "";
      st.in_array = st.array_secret = st.after_secret_flag = false;
      return line.substr(close);
    }
    return RedactArrayElements(line, 0, st);
  }
  size_t p = 0;
  while (p < line.size() && (line[p] == ' ' || line[p] == '\t')) ++p;
  if (p >= line.size() || line[p] == '#') return line;
  if (line[p] == '[') {
    size_t b = line.find_first_not_of('[', p);
    size_t e = line.find(']', p);
    st.table = b == std::string::npos || e == std::string::npos || e < b
                   ? std::string()
                   : std::string(Trim(std::string_view(line).substr(b, e - b)));
    return line;
  }
  size_t eq = line.find('=', p);
  if (eq == std::string::npos) return line;
  std::string key(line.substr(p, eq - p));
  while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
  if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'')) {
    key = key.substr(1, key.size() - 2);
  }
  size_t dot = key.rfind('.');
  std::string last = dot == std::string::npos ? key : key.substr(dot + 1);
  std::string_view value = Trim(std::string_view(line).substr(eq + 1));
  std::string ml;  // the delimiter of a multi-line string opened and not closed on this line
  if (StartsWith(value, "\"\"\"") || StartsWith(value, "'''")) {
    ml = std::string(value.substr(0, 3));
    if (value.substr(3).find(ml) != std::string_view::npos) ml.clear();
  }
  if (SecretLookingName(last)) {
    if (!ml.empty()) {
      st.ml_delim = ml;
      st.ml_secret = true;
      return line.substr(0, eq + 1) + " " + ml + std::string(kRedacted);
    }
    if (StartsWith(value, "[") && value.find(']') == std::string_view::npos) {
      st.in_array = st.array_secret = true;
      return line.substr(0, eq + 1) + " [\"" + std::string(kRedacted) + "\",";
    }
    return line.substr(0, eq + 1) + " \"" + std::string(kRedacted) + "\"";
  }
  if (!ml.empty()) {
    st.ml_delim = ml;
    st.ml_secret = false;
    return line;
  }
  if (last == "url" && (st.table == "notify" || StartsWith(st.table, "notify."))) {
    if (auto url = QuotedValue(value)) {
      std::string origin = UrlOrigin(*url);
      if (origin != *url) {
        return line.substr(0, eq + 1) + " \"" + origin + "/" + std::string(kRedacted) + "\"";
      }
    }
    return line;
  }
  if (StartsWith(value, "[")) {
    st.in_array = true;
    st.array_secret = st.after_secret_flag = false;
    return RedactArrayElements(line, line.find('[', eq) + 1, st);
  }
  return line;
}

}  // namespace

bool SecretLookingName(std::string_view name) {
  std::string n = Lower(name);
  while (!n.empty() && (n.front() == '-' || n.front() == '"')) n.erase(0, 1);
  if (EndsWith(n, "_file") || EndsWith(n, "_path") || EndsWith(n, "-file") ||
      EndsWith(n, "-path") || EndsWith(n, "_url") || n == "author") {
    return false;
  }
  for (std::string_view w : {"token", "secret", "password", "passwd", "api_key", "apikey",
                             "api-key", "auth", "credential", "private_key", "cookie", "pass"}) {
    if (n.find(w) != std::string::npos) return true;
  }
  // Query parameters and keys: access_key, key, x-api-key, sig, signature, x-amz-signature.
  return n == "key" || EndsWith(n, "_key") || EndsWith(n, "-key") || EndsWith(n, "apikey") ||
         n == "sig" || EndsWith(n, "_sig") || EndsWith(n, "-sig") || EndsWith(n, "signature");
}

std::string RedactText(std::string_view text, const std::vector<std::string>& secrets, bool lines) {
  std::string out;
  out.reserve(text.size());
  size_t start = 0;
  if (!lines) out = RedactAssignments(RedactUserinfo(std::string(text)), /*colon=*/false);
  TomlState st;
  while (lines && start <= text.size()) {
    size_t nl = text.find('\n', start);
    std::string line(
        text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
    line = RedactAssignments(RedactSchemes(RedactUserinfo(RedactTomlLine(line, st))));
    out += line;
    if (nl == std::string_view::npos) break;
    out += '\n';
    start = nl + 1;
  }
  for (const std::string& secret : secrets) {
    if (secret.size() < 4) continue;  // too short to tell from ordinary text
    for (size_t pos = out.find(secret); pos != std::string::npos;
         pos = out.find(secret, pos + kRedacted.size())) {
      out.replace(pos, secret.size(), kRedacted);
    }
  }
  return out;
}

}  // namespace gpudoctor
