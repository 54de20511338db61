#include "bundle/redact.h"

#include <cctype>
#include <sstream>

#include "core/strings.h"
#include "core/toml.h"
#include "core/toml_ascii_guard.h"

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

bool ValueEnd(char c) {
  return c == '"' || c == '\'' || c == ' ' || c == '&' || c == ',' || c == '}' || c == ']' ||
         c == '#' || c == '\\' || c == '\n' || c == '\r' || c == '\t';
}

// scheme://user[:pass]@host -> scheme://<redacted>@host. The userinfo ends at the LAST '@'
// before the path's end markers that cannot be in a password ('?', '#', quotes, blanks): a
// password may hold '@' and '/' (https://user:p@/ss@host).
std::string RedactUserinfo(std::string s) {
  for (size_t pos = s.find("://"); pos != std::string::npos; pos = s.find("://", pos + 3)) {
    size_t start = pos + 3;
    size_t end = start;
    while (end < s.size() && s[end] != '"' && s[end] != '\'' && s[end] != ' ' && s[end] != '?' &&
           s[end] != '#' && s[end] != '\\' && s[end] != '\n' && s[end] != '\t') {
      ++end;
    }
    size_t at = std::string_view(s).substr(start, end - start).rfind('@');
    if (at != std::string::npos && at > 0 && s.compare(start, at, kRedacted) != 0) {
      s.replace(start, at, kRedacted);
    }
  }
  return s;
}

// "Authorization: X" / "Authorization = X" (any case, any scheme: Bearer, Basic, token, none):
// everything up to the end of the value.
std::string RedactAuthorization(std::string s) {
  std::string lower = Lower(s);
  constexpr std::string_view kName = "authorization";
  for (size_t pos = lower.find(kName); pos != std::string::npos; pos = lower.find(kName, pos + 1)) {
    size_t i = pos + kName.size();
    while (i < s.size() && (s[i] == '"' || s[i] == '\\' || s[i] == ' ')) ++i;
    if (i >= s.size() || (s[i] != ':' && s[i] != '=')) continue;
    ++i;
    while (i < s.size() && (s[i] == ' ' || s[i] == '"' || s[i] == '\\')) ++i;
    size_t end = i;
    while (end < s.size() && s[end] != '"' && s[end] != '\'' && s[end] != '\\' && s[end] != '\n' &&
           s[end] != '\r') {
      ++end;
    }
    if (end == i || s.compare(i, end - i, kRedacted) == 0) continue;
    s.replace(i, end - i, kRedacted);
    lower.replace(i, end - i, kRedacted);
  }
  return s;
}

// "Bearer X" / "Basic X" / "token X" (any case) -> "Bearer <redacted>".
std::string RedactSchemes(std::string s) {
  std::string lower = Lower(s);
  for (std::string_view scheme : {"bearer ", "basic ", "token "}) {
    for (size_t pos = lower.find(scheme); pos != std::string::npos;
         pos = lower.find(scheme, pos + 1)) {
      size_t start = pos + scheme.size();
      while (start < s.size() && s[start] == ' ') ++start;
      size_t end = start;
      while (end < s.size() && !ValueEnd(s[end])) ++end;
      if (end == start || s.compare(start, end - start, kRedacted) == 0) continue;
      s.replace(start, end - start, kRedacted);
      lower.replace(start, end - start, kRedacted);
    }
  }
  return s;
}

// NAME=VALUE (and, with `colon`, NAME: VALUE and "NAME": "VALUE") with a secret-looking NAME. A
// value ends at a quote or a backslash too, so JSON escapes stay intact.
std::string RedactAssignments(std::string s, bool colon) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '=' && (s[i] != ':' || !colon)) continue;
    size_t name_end = i;
    if (colon) {
      while (name_end > 0 && s[name_end - 1] == ' ') --name_end;
      if (name_end > 0 && s[name_end - 1] == '"') --name_end;
      if (name_end > 0 && s[name_end - 1] == '\\') --name_end;
    }
    size_t name_start = name_end;
    while (name_start > 0 && NameChar(s[name_start - 1])) --name_start;
    if (name_start == name_end || !SecretLookingName(s.substr(name_start, name_end - name_start)))
      continue;
    size_t start = i + 1;
    if (s[i] == ':' && start < s.size() && s[start] == '/') continue;  // a URL scheme
    if (colon) {
      while (start < s.size() && s[start] == ' ') ++start;
      if (start < s.size() && s[start] == '\\') ++start;
      if (start < s.size() && (s[start] == '"' || s[start] == '\'')) ++start;
    }
    size_t end = start;
    while (end < s.size() && !ValueEnd(s[end])) ++end;
    if (end == start || s.compare(start, end - start, kRedacted) == 0) continue;
    s.replace(start, end - start, kRedacted);
    i = start + kRedacted.size() - 1;
  }
  return s;
}

bool WordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Every occurrence of each explicit secret; a short one (< 4 characters) only where it stands
// alone, so a 2-character token does not shred every word holding its letters.
std::string RedactExplicit(std::string out, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    bool whole_word = secret.size() < 4;
    for (size_t pos = out.find(secret); pos != std::string::npos;) {
      size_t end = pos + secret.size();
      if (whole_word &&
          ((pos > 0 && WordChar(out[pos - 1])) || (end < out.size() && WordChar(out[end])))) {
        pos = out.find(secret, pos + 1);
        continue;
      }
      out.replace(pos, secret.size(), kRedacted);
      pos = out.find(secret, pos + kRedacted.size());
    }
  }
  return out;
}

// The rules for one string value of the config outside secret keys and notifier tables.
std::string RedactConfigString(const std::string& s) {
  return RedactAssignments(RedactSchemes(RedactAuthorization(RedactUserinfo(s))), /*colon=*/true);
}

bool KnownPlaceholder(std::string_view e) {
  for (std::string_view p :
       {"{id}", "{key}", "{status}", "{transition}", "{severity}", "{layer}", "{gpu}", "{uuid}",
        "{pci_bus_id}", "{serial}", "{summary}", "{hostname}"}) {
    if (e == p) return true;
  }
  return false;
}

// An exec argv element that is kept: the program (an absolute path of plain characters), "--",
// a bare long option and a lone placeholder. Anything else may be or hold a credential.
bool KeptArgvElement(std::string_view e, bool program) {
  if (program) {
    if (e.empty() || e[0] != '/') return false;
    for (char c : e) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-' ||
            c == '.'))
        return false;
    }
    return true;
  }
  if (e == "--" || KnownPlaceholder(e)) return true;
  if (e.size() < 3 || e.size() > 40 || e[0] != '-' || e[1] != '-') return false;
  for (char c : e.substr(2)) {
    if (!(std::islower(static_cast<unsigned char>(c)) || c == '-')) return false;
  }
  return !SecretLookingName(e);
}

// toml++ cannot change a node's type in place: leaves are replaced through their parent.
void RedactLeavesOf(toml::table& t);
void RedactLeavesOf(toml::array& a);

// v, the value of key k in `parent`: every leaf of a table or array, or v itself, redacted.
void RedactLeavesOf(toml::table& parent, const toml::key& k, toml::node& v) {
  if (toml::table* sub = v.as_table()) {
    RedactLeavesOf(*sub);
  } else if (toml::array* arr = v.as_array()) {
    RedactLeavesOf(*arr);
  } else {
    parent.insert_or_assign(k, std::string(kRedacted));
  }
}

void RedactLeavesOf(toml::table& t) {
  for (auto&& [k, v] : t) RedactLeavesOf(t, k, v);
}

void RedactLeavesOf(toml::array& a) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (toml::table* sub = a[i].as_table()) {
      RedactLeavesOf(*sub);
    } else if (toml::array* arr = a[i].as_array()) {
      RedactLeavesOf(*arr);
    } else {
      a.replace(a.cbegin() + static_cast<std::ptrdiff_t>(i), std::string(kRedacted));
    }
  }
}

std::string RedactedUrl(const std::string& url) {
  std::string origin = UrlOrigin(url);
  bool plain = !origin.empty();
  for (char c : origin) {
    plain &= std::isalnum(static_cast<unsigned char>(c)) || c == ':' || c == '/' || c == '.' ||
             c == '-' || c == '_' || c == '[' || c == ']';
  }
  if (!plain || origin.find("://") == std::string::npos) return std::string(kRedacted);
  return origin == url ? origin : origin + "/" + std::string(kRedacted);
}

void RedactNotifierTable(toml::table& t);

// A notifier section (or a nested value of one that is not a known field): a table field by
// field, an array's tables likewise and its other elements redacted, anything else redacted.
void RedactNotifierSection(toml::table& parent, const toml::key& k, toml::node& v) {
  if (toml::table* sub = v.as_table()) {
    RedactNotifierTable(*sub);
  } else if (toml::array* arr = v.as_array()) {
    for (size_t i = 0; i < arr->size(); ++i) {
      if (toml::table* e = (*arr)[i].as_table()) {
        RedactNotifierTable(*e);
      } else if (toml::array* ea = (*arr)[i].as_array()) {
        RedactLeavesOf(*ea);
      } else {
        arr->replace(arr->cbegin() + static_cast<std::ptrdiff_t>(i), std::string(kRedacted));
      }
    }
  } else {
    parent.insert_or_assign(k, std::string(kRedacted));
  }
}

// Inside a notifier table: the whitelist above, everything else redacted.
void RedactNotifierValue(toml::table& parent, const toml::key& k, toml::node& v) {
  std::string key(k.str());
  if (key == "min_severity") {
    auto s = v.value<std::string>();
    if (s && (*s == "info" || *s == "warn" || *s == "crit")) return;
  } else if (key == "timeout_s" && (v.is_integer() || v.is_floating_point())) {
    return;
  } else if (key == "url" && v.is_string()) {
    parent.insert_or_assign(k, RedactedUrl(*v.value<std::string>()));
    return;
  } else if (key == "argv" && v.is_array()) {
    toml::array& a = *v.as_array();
    for (size_t i = 0; i < a.size(); ++i) {
      auto s = a[i].value<std::string>();
      if (a[i].is_string() && s && KeptArgvElement(*s, i == 0)) continue;
      a.replace(a.cbegin() + static_cast<std::ptrdiff_t>(i), std::string(kRedacted));
    }
    return;
  }
  RedactNotifierSection(parent, k, v);
}

void RedactNotifierTable(toml::table& t) {
  for (auto&& [k, v] : t) RedactNotifierValue(t, k, v);
}

bool NotifierKey(std::string_view key) { return Lower(key).find("notif") != std::string::npos; }

void RedactTable(toml::table& t);

void RedactArray(toml::array& a) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (toml::table* sub = a[i].as_table()) {
      RedactTable(*sub);
    } else if (toml::array* arr = a[i].as_array()) {
      RedactArray(*arr);
    } else if (auto s = a[i].value<std::string>(); a[i].is_string() && s) {
      a.replace(a.cbegin() + static_cast<std::ptrdiff_t>(i), RedactConfigString(*s));
    }
  }
}

void RedactTable(toml::table& t) {
  for (auto&& [k, v] : t) {
    if (SecretLookingName(k.str())) {
      RedactLeavesOf(t, k, v);
    } else if (NotifierKey(k.str())) {
      RedactNotifierSection(t, k, v);
    } else if (toml::table* sub = v.as_table()) {
      RedactTable(*sub);
    } else if (toml::array* arr = v.as_array()) {
      RedactArray(*arr);
    } else if (auto s = v.value<std::string>(); v.is_string() && s) {
      t.insert_or_assign(k, RedactConfigString(*s));
    }
  }
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

std::string RedactConfigToml(std::string_view text, const std::vector<std::string>& secrets) {
  // Text toml++ 3.0 must not be given (core/toml_ascii_guard.h); only the place is shown.
  if (auto place = FindNonAsciiOutsideStrings(text)) {
    return "# the config does not parse as TOML (line " + std::to_string(place->line) +
           ", column " + std::to_string(place->column) + "); not included\n";
  }
  toml::table doc;
  try {
    doc = toml::parse(text);
  } catch (const toml::parse_error& e) {
    // Neither the text nor toml++'s description (which may quote it) is shown.
    return "# the config does not parse as TOML (line " + std::to_string(e.source().begin.line) +
           ", column " + std::to_string(e.source().begin.column) + "); not included\n";
  } catch (const std::exception&) {
    return "# the config could not be read as TOML; not included\n";
  }
  RedactTable(doc);
  std::ostringstream out;
  out << toml::toml_formatter{doc} << "\n";
  return RedactExplicit(out.str(), secrets);
}

std::string RedactText(std::string_view text, const std::vector<std::string>& secrets) {
  std::string out = RedactAssignments(RedactAuthorization(RedactUserinfo(std::string(text))),
                                      /*colon=*/false);
  return RedactExplicit(std::move(out), secrets);
}

}  // namespace gpudoctor
