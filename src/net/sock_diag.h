// TCP sockets from the kernel through netlink sock_diag (NETLINK_SOCK_DIAG, inet_diag_req_v2
// with INET_DIAG_INFO → struct tcp_info): inode, owner uid, state, endpoints and the byte
// counters tcpi_bytes_acked (sent and acknowledged) and tcpi_bytes_received (Linux >= 4.1/4.2).
// UDP and raw sockets come from the same dump (udp_diag, raw_diag: Linux >= 4.14 for raw; an
// older kernel answers ENOENT, reported as unsupported): owner uid, endpoints and the queue sizes
// (idiag_rqueue / idiag_wqueue: bytes queued in the socket's receive and send buffers). The kernel
// keeps no byte counters for UDP or raw sockets, so those fields stay empty for them.
// Like `ss -ti`, but without parsing text. Reads are bounded by a receive timeout.
// Needs no privilege for sockets of all users (the kernel reports every socket in this network
// namespace). Thread-safe: each call owns its netlink socket.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace gpudoctor {

struct TcpSocketInfo {
  uint64_t inode = 0;
  uint32_t uid = 0;
  int state = 0;     // TCP_ESTABLISHED = 1, ... TCP_LISTEN = 10 (UDP: 1 connected, 7 unconnected)
  int protocol = 6;  // IPPROTO_TCP, IPPROTO_UDP (17) or IPPROTO_RAW (255)
  uint32_t rqueue = 0, wqueue = 0;  // bytes in the receive / send queue at the dump
  int family = 0;
  std::string local, remote;  // "10.0.0.5:22", "[fd00::1]:443"
  uint16_t local_port = 0, remote_port = 0;
  bool remote_loopback = false;                         // 127.0.0.0/8, ::1, ::ffff:127.x
  std::optional<uint64_t> bytes_acked, bytes_received;  // absent on kernels without them
  // tcp_info: smoothed RTT and its variance (µs), retransmitted and sent segments.
  std::optional<uint32_t> rtt_us, rttvar_us, total_retrans;
  std::optional<uint32_t> segs_out;
  // The kernel's struct inet_diag_sockid of the socket as dumped (ports, addresses, interface,
  // cookie): what LookupTcpSockets asks for.
  std::array<unsigned char, 48> diag_id{};
};

constexpr int kTcpEstablished = 1;

// Dumps IPv4 and IPv6 TCP sockets. Errors: unsupported (no sock_diag), io_error, timeout.
Result<std::vector<TcpSocketInfo>> DumpTcpSockets();

// Only the listening TCP sockets (IPv4 and IPv6), as DumpTcpSockets reports them. Much cheaper:
// the kernel walks its listening table only, not the established-connection hash (whose size,
// not the number of sockets, sets a full dump's cost). Errors as DumpTcpSockets.
Result<std::vector<TcpSocketInfo>> DumpTcpListeners();

// The TCP sockets of `known` (an earlier dump's, TcpSocketInfo::diag_id) as they are now, each
// looked up by its addresses, ports and cookie (the kernel's exact get: a hash lookup, no walk
// of the established table); sockets that have closed since are left out, and so is any socket
// not in `known` (a connection opened since: the caller must know there is none). Requests go
// in batches of 64. Errors: unsupported, io_error, timeout, parse_error as DumpTcpSockets.
Result<std::vector<TcpSocketInfo>> LookupTcpSockets(const std::vector<const TcpSocketInfo*>& known);

// Dumps IPv4 and IPv6 sockets of `protocol` (IPPROTO_TCP, IPPROTO_UDP, or IPPROTO_RAW for every
// raw socket, ICMP ones included). Errors: unsupported (no sock_diag, or no diag module for the
// protocol), io_error, timeout.
Result<std::vector<TcpSocketInfo>> DumpInetSockets(int protocol);

// Parses one buffer of a sock_diag dump reply (a sequence of netlink messages), appending
// sockets to `out` (marked with `protocol`). Sets *done on NLMSG_DONE. Errors: parse_error on
// malformed messages, io_error on NLMSG_ERROR. Pure; exposed for tests and fuzzing.
Status ParseSockDiagReply(std::string_view buf, std::vector<TcpSocketInfo>& out, bool* done,
                          int protocol = 6);

}  // namespace gpudoctor
