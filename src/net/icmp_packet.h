// ICMP / ICMPv6 echo packets: building requests and parsing replies (RFC 792, RFC 4443).
// The payload carries a 64-bit nonce so replies to other pingers are ignored. Used by the
// pinger and by the tests' TUN responder. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpudoctor {

struct EchoRequest {
  bool v6 = false;
  uint16_t ident = 0;
  uint16_t seq = 0;
  uint64_t nonce = 0;
};

// ICMP header + 16-byte payload (nonce, then 8 bytes of padding). The IPv4 checksum is filled
// in; for ICMPv6 it is left 0 (the kernel computes it, RFC 3542).
std::string BuildEchoRequest(const EchoRequest& req);

struct EchoReply {
  uint16_t ident = 0;
  uint16_t seq = 0;
  uint64_t nonce = 0;
};

// Parses an echo reply (type 0, or 129 for v6). has_ip_header: the buffer starts with an IPv4
// header (raw IPv4 sockets). nullopt for anything else or truncated input.
std::optional<EchoReply> ParseEchoReply(std::string_view packet, bool v6, bool has_ip_header);

// RFC 1071 Internet checksum of `data`.
uint16_t InternetChecksum(std::string_view data);

}  // namespace gpudoctor
