// Who moves the bytes: per-socket counter growth between two sock_diag dumps (tcpi_bytes_acked
// for sent, tcpi_bytes_received for received), attributed to processes through the socket
// inodes their fds hold, summed per process and per peer. Pure function; thread-safe.
#pragma once

#include <vector>

#include "facts/net_facts.h"
#include "net/proc_scan.h"
#include "net/sock_diag.h"

namespace gpudoctor {

struct TrafficLimits {
  size_t max_processes = 10;
  size_t max_peers = 5;
};

// A socket in `after` but not in `before` was opened during the window: all its bytes count.
// A counter that went backwards (inode reused) counts from zero. Processes sorted by bytes sent,
// then received; processes that moved nothing are left out. Sockets whose peer is loopback
// (remote_loopback) are not traffic of this host's network: their sent bytes only go into
// loopback_tx_bytes, never into a process or peer sum.
SocketTrafficFacts AggregateSocketTraffic(const std::vector<TcpSocketInfo>& before,
                                          const std::vector<TcpSocketInfo>& after,
                                          const std::vector<ScannedProcess>& processes,
                                          double window_s, const TrafficLimits& limits = {});

}  // namespace gpudoctor
