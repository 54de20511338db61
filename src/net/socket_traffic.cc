#include "net/socket_traffic.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace gpudoctor {

std::vector<SocketBytes> SocketBytesOf(const std::vector<TcpSocketInfo>& sockets) {
  std::vector<SocketBytes> out;
  out.reserve(sockets.size());
  for (const auto& s : sockets) {
    if (s.inode != 0) out.push_back({s.inode, s.bytes_acked, s.bytes_received});
  }
  // By inode; of an inode dumped twice (both families), the last one, as a map filled in order.
  std::stable_sort(out.begin(), out.end(),
                   [](const SocketBytes& a, const SocketBytes& b) { return a.inode < b.inode; });
  auto last_of_each =
      std::unique(out.rbegin(), out.rend(),
                  [](const SocketBytes& a, const SocketBytes& b) { return a.inode == b.inode; });
  out.erase(out.begin(), last_of_each.base());
  return out;
}

SocketTrafficFacts AggregateSocketTraffic(const std::vector<SocketBytes>& before,
                                          const std::vector<TcpSocketInfo>& after,
                                          const std::vector<ScannedProcess>& processes,
                                          double window_s, const TrafficLimits& limits) {
  SocketTrafficFacts facts;
  facts.window_s = window_s;
  facts.sockets_seen = static_cast<int>(after.size());
  auto earlier = [&before](uint64_t inode) -> const SocketBytes* {
    auto it = std::lower_bound(before.begin(), before.end(), inode,
                               [](const SocketBytes& b, uint64_t i) { return b.inode < i; });
    return it != before.end() && it->inode == inode ? &*it : nullptr;
  };
  std::unordered_map<uint64_t, size_t> owner;  // inode → index into processes
  for (size_t i = 0; i < processes.size(); ++i) {
    for (uint64_t inode : processes[i].socket_inodes) owner.emplace(inode, i);
  }
  struct Acc {
    uint64_t tx = 0, rx = 0;
    std::map<std::string, PeerTraffic> peers;
  };
  std::map<size_t, Acc> per_process;
  auto grow = [](const std::optional<uint64_t>& now, const std::optional<uint64_t>& then) {
    if (!now) return uint64_t{0};
    if (!then || *then > *now) return *now;
    return *now - *then;
  };
  for (const auto& s : after) {
    if (s.inode == 0) continue;
    const SocketBytes* prev = earlier(s.inode);
    uint64_t tx = grow(s.bytes_acked, prev ? prev->acked : std::nullopt);
    uint64_t rx = grow(s.bytes_received, prev ? prev->received : std::nullopt);
    if (tx == 0 && rx == 0) continue;
    // A process talking to this host (127.0.0.0/8, ::1) moves no byte over a NIC: counting it
    // would name a local pipe "heavy outbound traffic".
    if (s.remote_loopback) {
      facts.loopback_tx_bytes += tx;
      continue;
    }
    auto it = owner.find(s.inode);
    if (it == owner.end()) {
      facts.unmapped_tx_bytes += tx;
      continue;
    }
    Acc& acc = per_process[it->second];
    acc.tx += tx;
    acc.rx += rx;
    PeerTraffic& peer = acc.peers[s.remote];
    peer.peer = s.remote;
    peer.tx_bytes += tx;
    peer.rx_bytes += rx;
  }
  for (auto& [index, acc] : per_process) {
    const ScannedProcess& p = processes[index];
    ProcessTraffic t;
    t.pid = p.pid;
    t.comm = p.comm;
    t.uid = p.uid;
    t.tx_bytes = acc.tx;
    t.rx_bytes = acc.rx;
    if (window_s > 0) {
      t.tx_bytes_per_s = acc.tx / window_s;
      t.rx_bytes_per_s = acc.rx / window_s;
    }
    for (auto& [name, peer] : acc.peers) t.peers.push_back(peer);
    std::sort(t.peers.begin(), t.peers.end(), [](const PeerTraffic& a, const PeerTraffic& b) {
      return a.tx_bytes + a.rx_bytes > b.tx_bytes + b.rx_bytes;
    });
    if (t.peers.size() > limits.max_peers) t.peers.resize(limits.max_peers);
    facts.processes.push_back(std::move(t));
  }
  std::sort(facts.processes.begin(), facts.processes.end(),
            [](const ProcessTraffic& a, const ProcessTraffic& b) {
              if (a.tx_bytes != b.tx_bytes) return a.tx_bytes > b.tx_bytes;
              if (a.rx_bytes != b.rx_bytes) return a.rx_bytes > b.rx_bytes;
              return a.pid < b.pid;
            });
  if (facts.processes.size() > limits.max_processes) facts.processes.resize(limits.max_processes);
  return facts;
}

}  // namespace gpudoctor
