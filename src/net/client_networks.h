// Groups the remote peers of established, non-loopback TCP connections by network (/24 for
// IPv4, /64 for IPv6; IPv4-mapped IPv6 counts as IPv4) with each group's median smoothed RTT
// and retransmission share, from one sock_diag dump. Pure; thread-safe.
#pragma once

#include <vector>

#include "facts/net_facts.h"
#include "net/sock_diag.h"

namespace gpudoctor {

// "203.0.113.7:443" → "203.0.113.0/24", "[2001:db8:1:2::5]:22" → "2001:db8:1:2::/64"; empty for
// anything else.
std::string ClientNetworkOf(const std::string& remote_endpoint);

// At most `max_groups` groups, most connections first.
std::vector<ClientNetworkFacts> GroupClientNetworks(const std::vector<TcpSocketInfo>& sockets,
                                                    size_t max_groups = 64);

}  // namespace gpudoctor
