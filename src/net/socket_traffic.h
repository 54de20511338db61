// Who moves the bytes: per-socket counter growth between two sock_diag dumps (tcpi_bytes_acked
// for sent, tcpi_bytes_received for received), attributed to processes through the socket
// inodes their fds hold, summed per process and per peer. Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "facts/net_facts.h"
#include "net/proc_scan.h"
#include "net/sock_diag.h"

namespace gpudoctor {

struct TrafficLimits {
  size_t max_processes = 10;
  size_t max_peers = 5;
};

// What the window's start contributes: each socket's byte counters by inode (sorted by inode,
// inode 0 left out). `watch` keeps this between ticks instead of the whole socket table (a
// TcpSocketInfo is ~230 bytes with its strings; this is 40).
struct SocketBytes {
  uint64_t inode = 0;
  std::optional<uint64_t> acked, received;  // tcpi_bytes_acked / tcpi_bytes_received
};
std::vector<SocketBytes> SocketBytesOf(const std::vector<TcpSocketInfo>& sockets);

// A socket in `after` but not in `before` was opened during the window: all its bytes count.
// A counter that went backwards (inode reused) counts from zero. Processes sorted by bytes sent,
// then received; processes that moved nothing are left out. Sockets whose peer is loopback
// (remote_loopback) are not traffic of this host's network: their sent bytes only go into
// loopback_tx_bytes, never into a process or peer sum.
SocketTrafficFacts AggregateSocketTraffic(const std::vector<SocketBytes>& before,
                                          const std::vector<TcpSocketInfo>& after,
                                          const std::vector<ScannedProcess>& processes,
                                          double window_s, const TrafficLimits& limits = {});
// The same from the full table at the start.
inline SocketTrafficFacts AggregateSocketTraffic(const std::vector<TcpSocketInfo>& before,
                                                 const std::vector<TcpSocketInfo>& after,
                                                 const std::vector<ScannedProcess>& processes,
                                                 double window_s,
                                                 const TrafficLimits& limits = {}) {
  return AggregateSocketTraffic(SocketBytesOf(before), after, processes, window_s, limits);
}

}  // namespace gpudoctor
