#include "serve/http_request.h"

#include <charconv>

namespace gpudoctor {
namespace {

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

// RFC 9110 token characters (method, header names).
bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = Lower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

Result<std::string> PercentDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '+') {
      out.push_back(' ');
    } else if (c == '%') {
      int hi = i + 1 < s.size() ? HexValue(s[i + 1]) : -1;
      int lo = i + 2 < s.size() ? HexValue(s[i + 2]) : -1;
      if (hi < 0 || lo < 0) return InvalidArgument("bad percent escape in the query");
      char d = static_cast<char>(hi * 16 + lo);
      if (d == '\0') return InvalidArgument("NUL byte in the query");
      out.push_back(d);
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

HeadScanner::State HeadScanner::Fail(int status, const char* why) {
  error_status_ = status;
  error_ = why;
  state_ = State::kError;
  return state_;
}

HeadScanner::State HeadScanner::Feed(std::string_view data) {
  if (state_ != State::kNeedMore) return state_;
  // Every decision is taken at one byte, so the outcome does not depend on how the data was
  // split into reads.
  for (; scanned_ < data.size(); ++scanned_) {
    if (scanned_ >= kMaxHeadBytes) return Fail(431, "request head over 32 KiB");
    size_t limit = lines_ == 0 ? kMaxRequestLineBytes : kMaxHeaderLineBytes;
    if (data[scanned_] != '\n') {
      // One more byte than the limit may be the '\r' before the '\n'.
      if (scanned_ - line_start_ + 1 > limit + 1) {
        return lines_ == 0 ? Fail(414, "request line over 8 KiB")
                           : Fail(431, "header line over 8 KiB");
      }
      continue;
    }
    size_t len = scanned_ - line_start_;
    if (len > 0 && data[scanned_ - 1] == '\r') --len;
    if (len == 0) {
      if (lines_ == 0) return Fail(400, "empty request line");
      head_size_ = scanned_ + 1;
      ++scanned_;
      state_ = State::kComplete;
      return state_;
    }
    if (len > limit) {
      return lines_ == 0 ? Fail(414, "request line over 8 KiB")
                         : Fail(431, "header line over 8 KiB");
    }
    if (++lines_ > kMaxHeaderLines + 1) return Fail(431, "more than 100 header lines");
    line_start_ = scanned_ + 1;
  }
  return state_;
}

std::optional<std::string_view> HttpRequest::Header(std::string_view lower_name) const {
  for (const auto& [k, v] : headers) {
    if (k == lower_name) return std::string_view(v);
  }
  return std::nullopt;
}

Result<HttpRequest> ParseRequestHead(std::string_view head, HeadParseError* error) {
  auto fail = [&](int status, std::string message) -> Result<HttpRequest> {
    if (error) *error = {status, message};
    return InvalidArgument(message);
  };
  HttpRequest req;
  size_t eol = head.find('\n');
  if (eol == std::string_view::npos) return fail(400, "malformed request line");
  std::string_view line = head.substr(0, eol);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  // METHOD SP TARGET SP HTTP/1.x
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == 0 || sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != line.npos) {
    return fail(400, "malformed request line");
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  for (char c : method) {
    if (!IsTokenChar(c)) return fail(400, "malformed method");
  }
  if (method.size() > 32) return fail(400, "method too long");
  if (target.empty() || target[0] != '/') return fail(400, "the target must be a path");
  for (char c : target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return fail(400, "bad byte in target");
  }
  if (version == "HTTP/1.1") {
    req.version_minor = 1;
  } else if (version == "HTTP/1.0") {
    req.version_minor = 0;
  } else if (version.rfind("HTTP/", 0) == 0) {
    return fail(505, "only HTTP/1.0 and HTTP/1.1");
  } else {
    return fail(400, "malformed request line");
  }
  req.method = std::string(method);
  req.target = std::string(target);
  size_t q = target.find('?');
  req.path = std::string(target.substr(0, q));
  if (q != std::string_view::npos) req.query = std::string(target.substr(q + 1));
  size_t fragment = req.query.find('#');
  if (fragment != std::string::npos) req.query.resize(fragment);

  bool close = false, keep_alive_token = false;
  size_t pos = eol + 1;
  while (pos < head.size()) {
    size_t end = head.find('\n', pos);
    if (end == std::string_view::npos) return fail(400, "unterminated header line");
    std::string_view h = head.substr(pos, end - pos);
    pos = end + 1;
    if (!h.empty() && h.back() == '\r') h.remove_suffix(1);
    if (h.empty()) break;  // the end of the head
    if (h[0] == ' ' || h[0] == '\t') return fail(400, "obsolete header folding");
    size_t colon = h.find(':');
    if (colon == 0 || colon == std::string_view::npos) return fail(400, "malformed header line");
    std::string name;
    for (char c : h.substr(0, colon)) {
      if (!IsTokenChar(c)) return fail(400, "malformed header name");
      name.push_back(Lower(c));
    }
    std::string_view value = TrimBlanks(h.substr(colon + 1));
    for (char c : value) {
      if (c == '\0' || c == '\r' || c == '\n') return fail(400, "bad byte in a header value");
    }
    if (name == "connection") {
      // A list of tokens: "keep-alive, Upgrade".
      size_t p = 0;
      while (p <= value.size()) {
        size_t comma = value.find(',', p);
        std::string_view tok = TrimBlanks(value.substr(p, comma == value.npos ? comma : comma - p));
        if (EqualsIgnoreCase(tok, "close")) close = true;
        if (EqualsIgnoreCase(tok, "keep-alive")) keep_alive_token = true;
        if (comma == value.npos) break;
        p = comma + 1;
      }
    } else if (name == "content-length") {
      uint64_t n = 0;
      auto r = std::from_chars(value.data(), value.data() + value.size(), n);
      if (value.empty() || r.ec != std::errc() || r.ptr != value.data() + value.size()) {
        return fail(400, "bad Content-Length");
      }
      if (n > 0) req.has_body = true;
    } else if (name == "transfer-encoding") {
      req.has_body = true;
    }
    req.headers.emplace_back(std::move(name), std::string(value));
  }
  req.keep_alive = req.version_minor == 1 ? !close : keep_alive_token && !close;
  return req;
}

Result<std::multimap<std::string, std::string>> ParseQueryString(std::string_view query) {
  std::multimap<std::string, std::string> out;
  if (query.empty()) return out;
  size_t pos = 0;
  int count = 0;
  while (pos <= query.size()) {
    size_t amp = query.find('&', pos);
    std::string_view kv = query.substr(pos, amp == std::string_view::npos ? amp : amp - pos);
    pos = amp == std::string_view::npos ? query.size() + 1 : amp + 1;
    if (kv.empty()) continue;
    if (++count > 32) return InvalidArgument("more than 32 query parameters");
    size_t eq = kv.find('=');
    Result<std::string> k = PercentDecode(kv.substr(0, eq));
    if (!k.ok()) return k.status();
    Result<std::string> v =
        PercentDecode(eq == std::string_view::npos ? std::string_view() : kv.substr(eq + 1));
    if (!v.ok()) return v.status();
    out.emplace(std::move(*k), std::move(*v));
  }
  return out;
}

std::optional<std::string_view> BearerCredentials(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size() ||
      !EqualsIgnoreCase(authorization.substr(0, kScheme.size()), kScheme) ||
      authorization[kScheme.size()] != ' ') {
    return std::nullopt;
  }
  std::string_view rest = authorization.substr(kScheme.size());
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
  if (rest.empty()) return std::nullopt;
  return rest;
}

}  // namespace gpudoctor
