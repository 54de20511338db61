// Probe targets: parsing and validation of "host" (ICMP echo), "host:port" (TCP connect) and
// "http://host[:port]/path" / "https://..." (HTTP GET series) strings from the
// config file ([network] targets/references) and flags (--target/--reference), and name
// resolution under a deadline.
//
// Accepted forms: "10.0.0.5", "storage.example", "10.0.0.5:2049", "storage:2049", "::1" (bare
// IPv6 means ICMP), "[fd00::5]:22", "http://api.example:8080/healthz?full=1",
// "https://[fd00::5]/". Host names follow RFC 1123 (letters, digits, '-', '_', dots; labels
// 1..63, total <= 253). Ports 1..65535 (URLs: 80 / 443 when absent). A URL's scheme is
// case-insensitive; its path and query are visible ASCII (no spaces, at most 2048 characters;
// "/" when absent); user:password@ and #fragment are refused (credentials do not belong in a
// config file, and a fragment is never sent).
//
// Policy: a syntactically invalid entry is a config error (ParseTarget fails naming the entry;
// the CLI exits 3). A well-formed name that does not resolve at check time is a finding (the
// target is reported unreachable with the resolver's reason), never a tool failure.
// Pure functions except ResolveTarget; all thread-safe.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace gpudoctor {

enum class ProbeMethod { kIcmp, kTcp, kHttp, kHttps };

struct Target {
  std::string spec;              // the entry as written
  std::string host;              // without brackets
  std::optional<uint16_t> port;  // always set for TCP and URLs
  ProbeMethod method = ProbeMethod::kIcmp;
  bool numeric = false;  // host is an IP literal
  std::string path;      // URLs: path and query, starting with '/'; empty otherwise

  bool IsUrl() const { return method == ProbeMethod::kHttp || method == ProbeMethod::kHttps; }
  // URLs: the normalised URL requested ("http://host:port/path", IPv6 hosts in brackets).
  std::string Url() const;
  // The entry as shown in reports, findings, /metrics labels and the history: `spec`, with
  // the values of secret-looking query parameters (token, key, secret, sig, pass, auth,
  // credential, session in the name) replaced by "<redacted>".
  std::string DisplayName() const;
};

// Errors: invalid_argument "target 'X': <why>".
Result<Target> ParseTarget(std::string_view spec);
// Parses every entry; the first bad one fails the whole list (naming it).
Result<std::vector<Target>> ParseTargets(const std::vector<std::string>& specs);

struct ResolvedAddress {
  sockaddr_storage addr{};
  socklen_t len = 0;
  int family() const { return addr.ss_family; }
};

// Numeric form "10.0.0.5" / "fd00::5" (without port).
std::string AddressToString(const ResolvedAddress& a);

// Resolves host (numeric hosts without any lookup). getaddrinfo may block on DNS, so it runs on
// a detached worker abandoned after `timeout`. Prefers IPv4. Errors: not_found (no such name),
// timeout, io_error (resolver failure) — each naming the host.
Result<ResolvedAddress> ResolveTarget(const Target& target, std::chrono::milliseconds timeout);

}  // namespace gpudoctor
