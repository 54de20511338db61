#include "bundle/redact.h"

#include <cctype>

namespace gpudoctor {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool NameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

// scheme://user[:pass]@host -> scheme://<redacted>@host.
std::string RedactUserinfo(std::string s) {
  for (size_t pos = s.find("://"); pos != std::string::npos; pos = s.find("://", pos + 3)) {
    size_t start = pos + 3;
    size_t end = start;
    while (end < s.size() && s[end] != '/' && s[end] != '@' && s[end] != '"' && s[end] != '\'' &&
           s[end] != ' ' && s[end] != '?' && s[end] != '#') {
      ++end;
    }
    if (end < s.size() && s[end] == '@' && end > start) {
      s.replace(start, end - start, kRedacted);
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

// NAME=VALUE / NAME:VALUE inside values and query strings, with a secret-looking NAME.
std::string RedactAssignments(std::string s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '=' && s[i] != ':') continue;
    size_t name_end = i;
    size_t name_start = name_end;
    while (name_start > 0 && NameChar(s[name_start - 1])) --name_start;
    if (name_start == name_end || !SecretLookingName(s.substr(name_start, name_end - name_start)))
      continue;
    size_t start = i + 1;
    if (s[i] == ':') {
      if (start < s.size() && s[start] == '/') continue;  // a URL scheme, not NAME:VALUE
      while (start < s.size() && s[start] == ' ') ++start;
    }
    size_t end = start;
    while (end < s.size() && s[end] != '"' && s[end] != '\'' && s[end] != ' ' && s[end] != '&' &&
           s[end] != ',' && s[end] != '}' && s[end] != ']' && s[end] != '#') {
      ++end;
    }
    if (end == start || s.compare(start, end - start, kRedacted) == 0) continue;
    s.replace(start, end - start, kRedacted);
    i = start + kRedacted.size() - 1;
  }
  return s;
}

// key = value with a secret-looking key: the whole value goes.
std::string RedactTomlLine(const std::string& line) {
  size_t p = 0;
  while (p < line.size() && (line[p] == ' ' || line[p] == '\t')) ++p;
  if (p >= line.size() || line[p] == '#' || line[p] == '[') return line;
  size_t eq = line.find('=', p);
  if (eq == std::string::npos) return line;
  std::string key(line.substr(p, eq - p));
  while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
  if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'')) {
    key = key.substr(1, key.size() - 2);
  }
  size_t dot = key.rfind('.');
  std::string last = dot == std::string::npos ? key : key.substr(dot + 1);
  if (!SecretLookingName(last)) return line;
  return line.substr(0, eq + 1) + " \"" + std::string(kRedacted) + "\"";
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
  return false;
}

std::string RedactText(std::string_view text, const std::vector<std::string>& secrets, bool lines) {
  std::string out;
  out.reserve(text.size());
  size_t start = 0;
  if (!lines) out = std::string(text);
  while (lines && start <= text.size()) {
    size_t nl = text.find('\n', start);
    std::string line(
        text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
    line = RedactAssignments(RedactSchemes(RedactUserinfo(RedactTomlLine(line))));
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
