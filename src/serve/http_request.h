// The HTTP/1.x request head as the watch server accepts it from the network, before any
// authentication: a byte-at-a-time scanner that enforces the size limits while the head is still
// arriving (so an oversized or endless head is refused after at most kMaxHeadBytes, never
// buffered whole), a parser of the complete head, the query string and the Authorization header.
//
// Limits (the common ones of nginx / Go net/http order of magnitude): request line 8 KiB (414),
// one header line 8 KiB, 100 header lines, 32 KiB for the whole head (431). Only what the server
// needs is kept. Pure functions and plain data; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace gpudoctor {

constexpr size_t kMaxRequestLineBytes = 8 * 1024;
constexpr size_t kMaxHeaderLineBytes = 8 * 1024;
constexpr size_t kMaxHeadBytes = 32 * 1024;
constexpr int kMaxHeaderLines = 100;

// Feeds the bytes of a head as they arrive. Feed() returns how far it got; it never looks at a
// byte twice, so a client trickling one byte at a time costs O(1) per byte.
class HeadScanner {
 public:
  enum class State { kNeedMore, kComplete, kError };
  // Scans data[scanned()..]: stops at the end of the head (the empty line) or at the first
  // violated limit. `data` is the whole buffer received so far (the same prefix every call).
  State Feed(std::string_view data);
  size_t scanned() const { return scanned_; }
  size_t head_size() const { return head_size_; }     // with kComplete: bytes of the head
  int error_status() const { return error_status_; }  // with kError: 400, 414 or 431
  const char* error() const { return error_; }
  void Reset() { *this = HeadScanner(); }

 private:
  State Fail(int status, const char* why);
  size_t scanned_ = 0;
  size_t line_start_ = 0;
  int lines_ = 0;
  size_t head_size_ = 0;
  int error_status_ = 0;
  const char* error_ = "";
  State state_ = State::kNeedMore;
};

struct HttpRequest {
  std::string method;     // "GET", as sent (methods are case-sensitive)
  std::string target;     // "/api/v1/history?metric=x"
  std::string path;       // "/api/v1/history" (not decoded: our routes are plain ASCII)
  std::string query;      // "metric=x" (without '?')
  int version_minor = 1;  // HTTP/1.0 or HTTP/1.1
  // Header names lower-cased, values with surrounding blanks trimmed, in arrival order.
  std::vector<std::pair<std::string, std::string>> headers;
  // The first header of that (lower-case) name; nullopt when absent.
  std::optional<std::string_view> Header(std::string_view lower_name) const;
  // HTTP/1.1 without "Connection: close", or HTTP/1.0 with "Connection: keep-alive".
  bool keep_alive = true;
  // A body announced (Content-Length > 0 or any Transfer-Encoding): the server reads none.
  bool has_body = false;
};

struct HeadParseError {
  int status = 400;
  std::string message;
};

// Parses a complete head (request line, header lines, the empty line), as HeadScanner
// delimited it. Errors: 400 (malformed), 505 (not HTTP/1.0 or 1.1).
Result<HttpRequest> ParseRequestHead(std::string_view head, HeadParseError* error);

// "a=1&b=x%20y&c" -> {a:1, b:"x y", c:""}; '+' is a space. Invalid percent escapes, NUL bytes and
// more than 32 parameters are errors.
Result<std::multimap<std::string, std::string>> ParseQueryString(std::string_view query);

// The credentials of "Authorization: Bearer <token>": the scheme compared case-insensitively
// (RFC 7235 2.1), one or more spaces after it; nullopt for any other scheme or an empty token.
std::optional<std::string_view> BearerCredentials(std::string_view authorization);

}  // namespace gpudoctor
