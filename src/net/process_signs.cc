#include "net/process_signs.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/strings.h"
#include "facts/miner_signs.h"

namespace gpudoctor {

ProcessSignsBaseline MakeProcessSignsBaseline(const ProcessScan& scan,
                                              const std::vector<TcpSocketInfo>* sockets) {
  ProcessSignsBaseline b;
  b.truncated = scan.truncated;
  b.ticks.reserve(scan.processes.size());
  for (const auto& p : scan.processes) b.ticks.push_back({p.pid, p.cpu_ticks, p.start_ticks});
  if (sockets != nullptr) {
    std::vector<uint64_t> inodes;
    for (const auto& s : *sockets) {
      if (s.state == kTcpEstablished) inodes.push_back(s.inode);
    }
    std::sort(inodes.begin(), inodes.end());
    inodes.erase(std::unique(inodes.begin(), inodes.end()), inodes.end());
    b.established = std::move(inodes);
  }
  return b;
}

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
    ticks_before.reserve(in.before->ticks.size());
    for (const auto& t : in.before->ticks) ticks_before[t.pid] = {t.cpu_ticks, t.start_ticks};
  }
  const std::vector<uint64_t>* established_before =
      in.before != nullptr && in.before->established ? &*in.before->established : nullptr;
  auto was_established = [&](uint64_t inode) {
    return std::binary_search(established_before->begin(), established_before->end(), inode);
  };
  std::set<uint16_t> listening;
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
      if (established_before != nullptr && !was_established(s.inode)) continue;
      outbound[s.inode] = &s;
    }
  }

  // CPU share of every process first: the busiest (top_cpu) are kept whatever their other signs,
  // and only kept processes are built in full (a host with thousands of processes).
  const auto& procs = in.after->processes;
  std::vector<std::optional<double>> cpu(procs.size());
  for (size_t i = 0; i < procs.size(); ++i) {
    const ScannedProcess& p = procs[i];
    if (p.kernel_thread) continue;  // never a suspect (and `check`'s walk leaves them out)
    if (auto it = ticks_before.find(p.pid); it != ticks_before.end() &&
                                            it->second.second == p.start_ticks && in.window_s > 0 &&
                                            in.ticks_per_s > 0 && p.cpu_ticks >= it->second.first) {
      cpu[i] = 100.0 * (p.cpu_ticks - it->second.first) / in.ticks_per_s / in.window_s;
    }
  }
  std::vector<size_t> busy;
  for (size_t i = 0; i < procs.size(); ++i) {
    if (cpu[i].value_or(0) > 0) busy.push_back(i);
  }
  const size_t top = std::min(busy.size(), in.top_cpu);
  // Ties in process order, so the kept set does not depend on the sort.
  std::partial_sort(
      busy.begin(), busy.begin() + static_cast<std::ptrdiff_t>(top), busy.end(),
      [&](size_t a, size_t b) { return *cpu[a] > *cpu[b] || (*cpu[a] == *cpu[b] && a < b); });
  std::vector<bool> keep(procs.size(), false);
  for (size_t i = 0; i < top; ++i) keep[busy[i]] = true;

  for (size_t i = 0; i < procs.size(); ++i) {
    const ScannedProcess& p = procs[i];
    if (p.kernel_thread) continue;
    ProcessSigns s;
    s.pid = p.pid;
    s.cpu_pct = cpu[i];
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
    // Static signs keep a process even when it is idle (a miner waiting for work).
    bool static_sign = MinerName(p.comm) || ExeInTempDir(p.exe) ||
                       std::any_of(s.remote_ports.begin(), s.remote_ports.end(), StratumPort) ||
                       std::any_of(s.listen_ports.begin(), s.listen_ports.end(), StratumPort);
    const bool exe_deleted = EndsWith(p.exe, " (deleted)");
    if (!(keep[i] || static_sign || exe_deleted || p.gpu_device_open ||
          !s.outbound_peers.empty())) {
      continue;
    }
    s.comm = p.comm;
    s.uid = p.uid;
    if (p.uid && in.users != nullptr) {
      if (auto it = in.users->find(*p.uid); it != in.users->end()) s.user = it->second;
    }
    s.exe = p.exe;
    s.exe_deleted = exe_deleted;
    s.gpu_device_open = p.gpu_device_open;
    facts.processes.push_back(std::move(s));
  }
  return facts;
}

}  // namespace gpudoctor
