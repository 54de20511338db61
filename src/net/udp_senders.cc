#include "net/udp_senders.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "core/strings.h"

namespace gpudoctor {

namespace {

// `only` empty, or one of its names is "<group>.<name>".
bool Wanted(std::span<const std::string_view> only, std::string_view group, std::string_view name) {
  if (only.empty()) return true;
  for (std::string_view w : only) {
    if (w.size() == group.size() + 1 + name.size() && w.starts_with(group) &&
        w[group.size()] == '.' && w.ends_with(name)) {
      return true;
    }
  }
  return false;
}

}  // namespace

Status ParseSnmpCounters(std::string_view snmp, std::map<std::string, uint64_t>& out,
                         std::span<const std::string_view> only) {
  std::string_view header_prefix;
  std::vector<std::string_view> names;
  int line_no = 0;
  for (std::string_view line : SplitLines(snmp)) {
    ++line_no;
    line = Trim(line);
    if (line.empty()) continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return ParseError("snmp line " + std::to_string(line_no) + ": no 'Group:' prefix");
    }
    std::string_view prefix = line.substr(0, colon);
    auto fields = Split(line.substr(colon + 1), " ", /*skip_empty=*/true);
    if (names.empty() || prefix != header_prefix) {
      header_prefix = prefix;
      names = std::move(fields);
      continue;
    }
    if (fields.size() != names.size()) {
      return ParseError("snmp line " + std::to_string(line_no) + ": " +
                        std::to_string(fields.size()) + " values for " +
                        std::to_string(names.size()) + " names");
    }
    for (size_t i = 0; i < names.size(); ++i) {
      // Some counters (Tcp MaxConn) are signed: -1 means "dynamic". Negative values are skipped.
      if (StartsWith(fields[i], "-")) continue;
      auto v = ParseUint64(fields[i]);
      if (!v) {
        return ParseError("snmp line " + std::to_string(line_no) + ": '" + Sanitize(fields[i], 32) +
                          "' is not a number");
      }
      if (Wanted(only, prefix, names[i])) {
        out[std::string(prefix) + "." + std::string(names[i])] = *v;
      }
    }
    names.clear();
  }
  return Status::Ok();
}

Status ParseSnmp6Counters(std::string_view snmp6, std::map<std::string, uint64_t>& out,
                          std::span<const std::string_view> only) {
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  int line_no = 0;
  for (std::string_view line : SplitLines(snmp6)) {
    ++line_no;
    // "Name value": two words separated by blanks, split without allocating.
    size_t b = 0;
    while (b < line.size() && blank(line[b])) ++b;
    if (b == line.size()) continue;
    size_t e = b;
    while (e < line.size() && !blank(line[e])) ++e;
    std::string_view name = line.substr(b, e - b);
    size_t vb = e;
    while (vb < line.size() && blank(line[vb])) ++vb;
    size_t ve = vb;
    while (ve < line.size() && !blank(line[ve])) ++ve;
    size_t rest = ve;
    while (rest < line.size() && blank(line[rest])) ++rest;
    if (vb == line.size() || rest != line.size()) {
      return ParseError("snmp6 line " + std::to_string(line_no) + ": expected 'Name value'");
    }
    std::string_view value = line.substr(vb, ve - vb);
    auto v = ParseUint64(value);
    if (!v) {
      return ParseError("snmp6 line " + std::to_string(line_no) + ": '" + Sanitize(value, 32) +
                        "' is not a number");
    }
    // "Udp6OutDatagrams" → "Udp6.OutDatagrams", like the snmp groups.
    std::string_view group, rest_name = name;
    for (std::string_view g : {"Udp6", "UdpLite6", "Ip6", "Icmp6"}) {
      if (name.starts_with(g) && name.size() > g.size()) {
        group = g;
        rest_name = name.substr(g.size());
        break;
      }
    }
    if (group.empty()) {
      if (only.empty()) out[std::string(name)] = *v;
      continue;
    }
    if (Wanted(only, group, rest_name)) {
      out[std::string(group) + "." + std::string(rest_name)] = *v;
    }
  }
  return Status::Ok();
}

namespace {

std::optional<double> Rate(const UdpSenderInputs& in, std::initializer_list<const char*> plus,
                           std::initializer_list<const char*> minus) {
  if (in.counters_before == nullptr || in.counters_after == nullptr || in.window_s <= 0) {
    return std::nullopt;
  }
  auto delta = [&](const char* name) -> std::optional<int64_t> {
    auto a = in.counters_before->find(name);
    auto b = in.counters_after->find(name);
    if (a == in.counters_before->end() || b == in.counters_after->end()) return std::nullopt;
    if (b->second < a->second) return 0;  // counter reset (namespace recreated)
    return static_cast<int64_t>(b->second - a->second);
  };
  int64_t sum = 0;
  bool any = false;
  for (const char* name : plus) {
    if (auto d = delta(name)) {
      sum += *d;
      any = true;
    }
  }
  if (!any) return std::nullopt;
  for (const char* name : minus) sum -= delta(name).value_or(0);
  return std::max<int64_t>(sum, 0) / in.window_s;
}

}  // namespace

UdpTrafficFacts CollectUdpSenders(const UdpSenderInputs& in) {
  UdpTrafficFacts facts;
  facts.window_s = in.window_s;
  facts.method = std::string(kUdpBytesMethod);
  facts.raw_supported = in.raw_supported;
  facts.udp_out_datagrams_per_s = Rate(in, {"Udp.OutDatagrams", "Udp6.OutDatagrams"}, {});
  facts.other_out_packets_per_s =
      Rate(in, {"Ip.OutRequests"}, {"Tcp.OutSegs", "Udp.OutDatagrams", "UdpLite.OutDatagrams"});
  if (in.processes == nullptr) return facts;
  std::unordered_map<uint64_t, size_t> owner;  // inode → index into processes
  for (size_t i = 0; i < in.processes->size(); ++i) {
    for (uint64_t inode : (*in.processes)[i].socket_inodes) owner.emplace(inode, i);
  }
  struct Acc {
    std::set<uint64_t> udp, raw;
    std::set<std::string> peers;
    uint64_t max_wqueue = 0, max_rqueue = 0;
  };
  std::map<size_t, Acc> per_process;
  std::set<uint64_t> seen;
  for (const auto* sample : in.samples) {
    if (sample == nullptr) continue;
    std::map<size_t, std::pair<uint64_t, uint64_t>> queues;  // this sample's sums
    for (const auto& s : *sample) {
      if (s.inode == 0 || s.protocol == 6) continue;
      // Unconnected sockets (sendto anywhere) have the any-address as their peer.
      bool connected = s.remote != "0.0.0.0:0" && s.remote != "[::]:0";
      if (connected && s.remote_loopback) continue;  // talks to this host only
      seen.insert(s.inode);
      auto it = owner.find(s.inode);
      if (it == owner.end()) continue;
      Acc& acc = per_process[it->second];
      (s.protocol == 17 ? acc.udp : acc.raw).insert(s.inode);
      if (connected) acc.peers.insert(s.remote);
      queues[it->second].first += s.wqueue;
      queues[it->second].second += s.rqueue;
    }
    for (const auto& [index, q] : queues) {
      Acc& acc = per_process[index];
      acc.max_wqueue = std::max(acc.max_wqueue, q.first);
      acc.max_rqueue = std::max(acc.max_rqueue, q.second);
    }
  }
  facts.sockets_seen = static_cast<int>(seen.size());
  std::unordered_map<int, std::pair<uint64_t, std::optional<uint64_t>>> ticks_before;
  if (in.processes_before != nullptr) {
    for (const auto& p : *in.processes_before) ticks_before[p.pid] = {p.cpu_ticks, p.start_ticks};
  }
  std::unordered_map<int, uint64_t> busy;  // pid → ticks used in the window
  for (const auto& [index, acc] : per_process) {
    const ScannedProcess& p = (*in.processes)[index];
    UdpSender s;
    s.pid = p.pid;
    s.comm = p.comm;
    s.uid = p.uid;
    s.udp_sockets = static_cast<int>(acc.udp.size());
    s.raw_sockets = static_cast<int>(acc.raw.size());
    s.peer_count = static_cast<int>(acc.peers.size());
    for (const auto& peer : acc.peers) {
      if (s.peers.size() >= in.max_peers) break;
      s.peers.push_back(peer);
    }
    s.send_queue_bytes = acc.max_wqueue;
    s.recv_queue_bytes = acc.max_rqueue;
    if (auto it = ticks_before.find(p.pid); it != ticks_before.end() &&
                                            it->second.second == p.start_ticks &&
                                            p.cpu_ticks >= it->second.first) {
      busy[p.pid] = p.cpu_ticks - it->second.first;
    }
    facts.senders.push_back(std::move(s));
  }
  auto ticks = [&busy](int pid) {
    auto it = busy.find(pid);
    return it == busy.end() ? uint64_t{0} : it->second;
  };
  std::sort(facts.senders.begin(), facts.senders.end(),
            [&](const UdpSender& a, const UdpSender& b) {
              if (a.send_queue_bytes != b.send_queue_bytes)
                return a.send_queue_bytes > b.send_queue_bytes;
              if (ticks(a.pid) != ticks(b.pid)) return ticks(a.pid) > ticks(b.pid);
              if (a.peer_count != b.peer_count) return a.peer_count > b.peer_count;
              int sa = a.udp_sockets + a.raw_sockets, sb = b.udp_sockets + b.raw_sockets;
              if (sa != sb) return sa > sb;
              return a.pid < b.pid;
            });
  if (facts.senders.size() > in.max_senders) facts.senders.resize(in.max_senders);
  return facts;
}

}  // namespace gpudoctor
