// Pingers: N probes to one address, spaced, each bounded by a timeout. Both return within
// about count * interval + timeout (never longer), so a caller can budget the whole series.
//
// ICMP (IcmpPing): an unprivileged ICMP datagram socket (SOCK_DGRAM, IPPROTO_ICMP) where
// net.ipv4.ping_group_range admits our gid, else a raw socket (needs CAP_NET_RAW). Replies are
// matched by identifier (raw), sequence number and a per-series nonce in the payload.
// Errors: unsupported when neither socket can be opened (the caller falls back to TCP).
//
// TCP (TcpPing): a non-blocking connect() per probe; the RTT is the time to the SYN-ACK, or to
// the RST: a refused connection means the host answered, so it counts as a reply with
// port_closed set (a firewall that drops gives a timeout = loss). Connections are closed with
// SO_LINGER 0 (RST), leaving no TIME_WAIT behind. Thread-safe; each call owns its sockets.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/status.h"
#include "net/target.h"

namespace gpudoctor {

struct PingOptions {
  int count = 5;
  std::chrono::milliseconds interval{200};  // between probe starts
  std::chrono::milliseconds timeout{1000};  // per probe
};

struct PingResult {
  std::string method;  // "icmp-dgram", "icmp-raw", "tcp"
  int sent = 0;
  std::vector<double> rtts_ms;  // replies in send order
  bool port_closed = false;     // TCP: at least one RST
  std::string last_error;       // e.g. "network unreachable" when sends failed
};

Result<PingResult> IcmpPing(const ResolvedAddress& addr, const PingOptions& opts);
// addr's port is ignored; `port` is used.
PingResult TcpPing(const ResolvedAddress& addr, uint16_t port, const PingOptions& opts);

}  // namespace gpudoctor
