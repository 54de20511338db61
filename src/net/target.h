// Probe targets: parsing and validation of "host" (ICMP echo) and "host:port" (TCP connect)
// strings from the config file ([network] targets/references) and flags (--target/--reference),
// and name resolution under a deadline.
//
// Accepted forms: "10.0.0.5", "storage.example", "10.0.0.5:2049", "storage:2049", "::1" (bare
// IPv6 means ICMP), "[fd00::5]:22". Host names follow RFC 1123 (letters, digits, '-', '_', dots;
// labels 1..63, total <= 253). Ports 1..65535.
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

enum class ProbeMethod { kIcmp, kTcp };

struct Target {
  std::string spec;  // the entry as written
  std::string host;  // without brackets
  std::optional<uint16_t> port;
  ProbeMethod method = ProbeMethod::kIcmp;
  bool numeric = false;  // host is an IP literal
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
