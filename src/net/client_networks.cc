#include "net/client_networks.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>
#include <map>

namespace gpudoctor {

std::string ClientNetworkOf(const std::string& remote) {
  std::string host;
  if (!remote.empty() && remote[0] == '[') {
    size_t close = remote.find(']');
    if (close == std::string::npos) return "";
    host = remote.substr(1, close - 1);
  } else {
    size_t colon = remote.rfind(':');
    if (colon == std::string::npos) return "";
    host = remote.substr(0, colon);
  }
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    uint32_t a = ntohl(v4.s_addr);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%u.%u.%u.0/24", a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff);
    return buf;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) != 1) return "";
  static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::equal(kMapped, kMapped + 12, v6.s6_addr)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%u.%u.%u.0/24", v6.s6_addr[12], v6.s6_addr[13], v6.s6_addr[14]);
    return buf;
  }
  in6_addr net = v6;
  std::fill(net.s6_addr + 8, net.s6_addr + 16, 0);
  char buf[INET6_ADDRSTRLEN];
  if (inet_ntop(AF_INET6, &net, buf, sizeof buf) == nullptr) return "";
  return std::string(buf) + "/64";
}

std::vector<ClientNetworkFacts> GroupClientNetworks(const std::vector<TcpSocketInfo>& sockets,
                                                    size_t max_groups) {
  struct Acc {
    std::vector<double> rtt_ms;
    uint64_t retrans = 0, segs = 0;
    int connections = 0;
  };
  std::map<std::string, Acc> groups;
  for (const auto& s : sockets) {
    if (s.state != kTcpEstablished || s.remote_loopback) continue;
    std::string net = ClientNetworkOf(s.remote);
    if (net.empty()) continue;
    Acc& a = groups[net];
    ++a.connections;
    if (s.rtt_us && *s.rtt_us > 0) a.rtt_ms.push_back(*s.rtt_us / 1000.0);
    if (s.segs_out && s.total_retrans) {
      a.segs += *s.segs_out;
      a.retrans += *s.total_retrans;
    }
  }
  std::vector<ClientNetworkFacts> out;
  for (auto& [net, a] : groups) {
    ClientNetworkFacts g;
    g.network = net;
    g.connections = a.connections;
    if (!a.rtt_ms.empty()) {
      auto mid = a.rtt_ms.begin() + static_cast<long>(a.rtt_ms.size() / 2);
      std::nth_element(a.rtt_ms.begin(), mid, a.rtt_ms.end());
      g.rtt_median_ms = *mid;
    }
    if (a.segs > 0) g.retrans_pct = 100.0 * static_cast<double>(a.retrans) / a.segs;
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
    return x.connections != y.connections ? x.connections > y.connections : x.network < y.network;
  });
  if (out.size() > max_groups) out.resize(max_groups);
  return out;
}

}  // namespace gpudoctor
