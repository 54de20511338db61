// One bounded HTTP GET (libcurl) for reading outside servers: a Prometheus API, a watch daemon's
// status. Everything the server controls is bounded: the whole exchange (connect, headers and
// body together) ends at `deadline`, so a server that trickles a byte at a time cannot hold the
// caller longer; the body is cut off at max_body_bytes (the transfer is aborted, the caller gets
// an error, never a truncated body); no redirects; http and https only. Errors name the URL (no
// userinfo, query or fragment) and the bound that was hit: timeout (the deadline), invalid_argument
// (the body cap), io_error (connect, TLS, protocol); an HTTP status other than 2xx is not an error
// here (the caller reads `status`). Thread-safe (one easy handle per call).
//
// Authentication and TLS (what Prometheus clients offer): https verifies the server against the
// system trust store, or against `ca_file` (PEM) alone when set; `bearer_token` is sent as
// `Authorization: Bearer`, `basic_user`/`basic_password` as HTTP basic auth (one or the other).
// Credentials never appear in errors: an error names the URL (no userinfo) and libcurl's reason
// (a TLS failure says "TLS: ..."), and a rejected credential is an HTTP status for the caller.
#pragma once

#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"

namespace gpudoctor {

struct HttpGetRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  TimePoint deadline;
  size_t max_body_bytes = 16u << 20;
  double connect_timeout_s = 2;  // also bounded by the deadline
  std::string ca_file;           // PEM bundle to verify https servers with; empty: system store
  std::string bearer_token;      // empty: none
  std::string basic_user, basic_password;  // basic auth when basic_user is not empty
  bool post_empty = false;  // a POST with an empty body (Content-Length: 0) instead of a GET
};

struct HttpGetAnswer {
  long status = 0;
  std::string body;
};

Result<HttpGetAnswer> HttpGet(const HttpGetRequest& request);

// Percent-encodes a query parameter value (RFC 3986 unreserved characters stay).
std::string UrlEncode(std::string_view s);

}  // namespace gpudoctor
