#include "net/process_signs.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/strings.h"
#include "facts/miner_signs.h"

namespace gpudoctor {

ProcessSignFacts CollectProcessSigns(const ProcessSignInputs& in) {
  ProcessSignFacts facts;
  if (in.after == nullptr) return facts;
  facts.scanned = static_cast<int>(in.after->processes.size());
  facts.skipped_dstate = in.after->skipped_dstate;
  facts.truncated = in.after->truncated || (in.before != nullptr && in.before->truncated);

  // CPU ticks by pid, with the task's start time: a pid reused by a new task within the window
  // (watch's window is the slow interval, minutes) is not the same process.
  std::unordered_map<int, std::pair<uint64_t, std::optional<uint64_t>>> ticks_before;
  if (in.before != nullptr) {
    for (const auto& p : in.before->processes) ticks_before[p.pid] = {p.cpu_ticks, p.start_ticks};
  }
  std::set<uint16_t> listening;
  std::unordered_set<uint64_t> established_before;
  if (in.sockets_before != nullptr) {
    for (const auto& s : *in.sockets_before) {
      if (s.state == kTcpEstablished) established_before.insert(s.inode);
    }
  }
  std::unordered_map<uint64_t, const TcpSocketInfo*> outbound;  // persistent outbound, by inode
  // Any outbound connection at the end of the window, persistent or not: its remote port is
  // judged (a pool port needs no CPU or persistence to be a sign).
  std::unordered_map<uint64_t, const TcpSocketInfo*> connected;
  std::unordered_map<uint64_t, uint16_t> listen_port;  // listening socket inode → local port
  if (in.sockets_after != nullptr) {
    for (const auto& s : *in.sockets_after) {
      if (s.state == 10) {  // TCP_LISTEN
        listening.insert(s.local_port);
        if (s.inode != 0) listen_port[s.inode] = s.local_port;
      }
    }
    for (const auto& s : *in.sockets_after) {
      if (s.state != kTcpEstablished || s.remote_loopback || s.inode == 0) continue;
      if (listening.count(s.local_port) != 0) continue;  // accepted by a local server
      connected[s.inode] = &s;
      if (in.sockets_before != nullptr && established_before.count(s.inode) == 0) continue;
      outbound[s.inode] = &s;
    }
  }

  std::vector<ProcessSigns> all;
  for (const auto& p : in.after->processes) {
    ProcessSigns s;
    s.pid = p.pid;
    s.comm = p.comm;
    s.uid = p.uid;
    if (p.uid && in.users != nullptr) {
      if (auto it = in.users->find(*p.uid); it != in.users->end()) s.user = it->second;
    }
    s.exe = p.exe;
    s.exe_deleted = EndsWith(p.exe, " (deleted)");
    s.gpu_device_open = p.gpu_device_open;
    if (auto it = ticks_before.find(p.pid); it != ticks_before.end() &&
                                            it->second.second == p.start_ticks && in.window_s > 0 &&
                                            in.ticks_per_s > 0 && p.cpu_ticks >= it->second.first) {
      s.cpu_pct = 100.0 * (p.cpu_ticks - it->second.first) / in.ticks_per_s / in.window_s;
    }
    for (uint64_t inode : p.socket_inodes) {
      if (auto l = listen_port.find(inode); l != listen_port.end()) {
        if (std::find(s.listen_ports.begin(), s.listen_ports.end(), l->second) ==
            s.listen_ports.end()) {
          s.listen_ports.push_back(l->second);
        }
      }
      auto c = connected.find(inode);
      if (c == connected.end()) continue;
      if (std::find(s.remote_ports.begin(), s.remote_ports.end(), c->second->remote_port) ==
          s.remote_ports.end()) {
        s.remote_ports.push_back(c->second->remote_port);
      }
      auto it = outbound.find(inode);
      if (it == outbound.end()) continue;
      if (s.outbound_peers.size() < 16) s.outbound_peers.push_back(it->second->remote);
    }
    all.push_back(std::move(s));
  }
  // The busiest by CPU are kept whatever their other signs.
  std::vector<size_t> order(all.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return all[a].cpu_pct.value_or(0) > all[b].cpu_pct.value_or(0);
  });
  std::vector<bool> keep(all.size(), false);
  for (size_t i = 0; i < order.size() && i < in.top_cpu; ++i) {
    if (all[order[i]].cpu_pct.value_or(0) > 0) keep[order[i]] = true;
  }
  for (size_t i = 0; i < all.size(); ++i) {
    const auto& s = all[i];
    // Static signs keep a process even when it is idle (a miner waiting for work).
    bool static_sign = MinerName(s.comm) || ExeInTempDir(s.exe) ||
                       std::any_of(s.remote_ports.begin(), s.remote_ports.end(), StratumPort) ||
                       std::any_of(s.listen_ports.begin(), s.listen_ports.end(), StratumPort);
    if (keep[i] || static_sign || s.exe_deleted || s.gpu_device_open || !s.outbound_peers.empty()) {
      facts.processes.push_back(all[i]);
    }
  }
  return facts;
}

}  // namespace gpudoctor
