#include "net/sock_diag.h"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <tuple>

#include "net/netlink_reply.h"

namespace gpudoctor {
namespace {

constexpr NetlinkReplyKind kSockDiagReply{"sock_diag", ENOENT, "no diag module for this protocol"};
// Lookups of single sockets: ENOENT answers one whose socket has closed since.
constexpr NetlinkReplyKind kSockDiagLookup{"sock_diag", 0, "", ENOENT};

std::string Endpoint(int family, const uint32_t* addr, uint16_t port_be, bool* loopback) {
  char buf[INET6_ADDRSTRLEN] = {};
  uint16_t port = ntohs(port_be);
  if (family == AF_INET) {
    inet_ntop(AF_INET, addr, buf, sizeof buf);
    if (loopback) *loopback = (ntohl(addr[0]) >> 24) == 127;
    return std::string(buf) + ":" + std::to_string(port);
  }
  inet_ntop(AF_INET6, addr, buf, sizeof buf);
  if (loopback) {
    in6_addr a;
    std::memcpy(&a, addr, sizeof a);
    *loopback = IN6_IS_ADDR_LOOPBACK(&a) || (IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127);
  }
  std::string out = "[";
  out += buf;
  out += "]:";
  out += std::to_string(port);
  return out;
}

Status ReadDumpReply(int fd, int protocol, std::vector<TcpSocketInfo>& out);
// ParseSockDiagReply with the errors of `kind`; adds the skipped kernel errors to *skipped.
Status ParseReplyAs(std::string_view buf, std::vector<TcpSocketInfo>& out, bool* done, int protocol,
                    const NetlinkReplyKind& kind, size_t* skipped);

// One TCP dump of both address families: the legacy TCPDIAG_GETSOCK request (struct
// inet_diag_req), which the kernel serves with family AF_UNSPEC, so its established-connection
// hash is walked once instead of once per family. Replies carry TCPDIAG_GETSOCK as their type.
Status DumpTcpBothFamilies(int fd, uint32_t states, uint32_t seq, std::vector<TcpSocketInfo>& out) {
  struct {
    nlmsghdr nlh;
    inet_diag_req req;
  } msg{};
  msg.nlh.nlmsg_len = sizeof msg;
  msg.nlh.nlmsg_type = TCPDIAG_GETSOCK;
  msg.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  msg.nlh.nlmsg_seq = seq;
  msg.req.idiag_family = AF_INET;  // the kernel's legacy dump ignores it (dumps every family)
  msg.req.idiag_ext = 1u << (INET_DIAG_INFO - 1);
  msg.req.idiag_states = states;
  if (Status sent = SendNetlinkRequest(fd, &msg, sizeof msg, "sock_diag"); !sent.ok()) return sent;
  return ReadDumpReply(fd, IPPROTO_TCP, out);
}

Status DumpFamily(int fd, int family, int protocol, uint32_t states, uint32_t seq,
                  std::vector<TcpSocketInfo>& out) {
  struct {
    nlmsghdr nlh;
    inet_diag_req_v2 req;
  } msg{};
  msg.nlh.nlmsg_len = sizeof msg;
  msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  msg.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  msg.nlh.nlmsg_seq = seq;
  msg.req.sdiag_family = static_cast<uint8_t>(family);
  msg.req.sdiag_protocol = static_cast<uint8_t>(protocol);
  // raw_diag reads the wanted raw protocol from the pad byte; IPPROTO_RAW there means all.
  if (protocol == IPPROTO_RAW) msg.req.pad = IPPROTO_RAW;
  if (protocol == IPPROTO_TCP) msg.req.idiag_ext = 1u << (INET_DIAG_INFO - 1);
  msg.req.idiag_states = states;
  if (Status sent = SendNetlinkRequest(fd, &msg, sizeof msg, "sock_diag"); !sent.ok()) return sent;
  return ReadDumpReply(fd, protocol, out);
}

Status ReadDumpReply(int fd, int protocol, std::vector<TcpSocketInfo>& out) {
  NetlinkBuffer buf;
  return ReceiveNetlinkReply(fd, buf, kSockDiagReply, [&](std::string_view part, bool* done) {
    return ParseSockDiagReply(part, out, done, protocol);
  });
}

}  // namespace

Status ParseSockDiagReply(std::string_view buf, std::vector<TcpSocketInfo>& out, bool* done,
                          int protocol) {
  return ParseReplyAs(buf, out, done, protocol, kSockDiagReply, nullptr);
}

namespace {

Status ParseReplyAs(std::string_view buf, std::vector<TcpSocketInfo>& out, bool* done, int protocol,
                    const NetlinkReplyKind& kind, size_t* skipped) {
  NetlinkReplyWalker walk(buf, kind);
  NetlinkMessage msg;
  while (walk.Next(&msg)) {
    if (msg.type != SOCK_DIAG_BY_FAMILY && msg.type != TCPDIAG_GETSOCK) continue;
    std::string_view body = msg.body;
    if (body.size() < sizeof(inet_diag_msg)) return ParseError("sock_diag: short inet_diag_msg");
    inet_diag_msg m;
    std::memcpy(&m, body.data(), sizeof m);
    if (m.idiag_family != AF_INET && m.idiag_family != AF_INET6) continue;
    TcpSocketInfo s;
    s.inode = m.idiag_inode;
    s.uid = m.idiag_uid;
    s.state = m.idiag_state;
    s.protocol = protocol;
    s.rqueue = m.idiag_rqueue;
    s.wqueue = m.idiag_wqueue;
    s.family = m.idiag_family;
    s.local_port = ntohs(m.id.idiag_sport);
    s.remote_port = ntohs(m.id.idiag_dport);
    s.local = Endpoint(m.idiag_family, m.id.idiag_src, m.id.idiag_sport, nullptr);
    s.remote = Endpoint(m.idiag_family, m.id.idiag_dst, m.id.idiag_dport, &s.remote_loopback);
    static_assert(sizeof m.id == std::tuple_size_v<decltype(s.diag_id)>);
    std::memcpy(s.diag_id.data(), &m.id, sizeof m.id);
    size_t aoff = NLMSG_ALIGN(sizeof(inet_diag_msg));
    while (aoff + sizeof(rtattr) <= body.size()) {
      rtattr a;
      std::memcpy(&a, body.data() + aoff, sizeof a);
      if (a.rta_len < sizeof(rtattr) || a.rta_len > body.size() - aoff) break;
      if (a.rta_type == INET_DIAG_INFO && protocol == IPPROTO_TCP) {
        std::string_view info = body.substr(aoff + RTA_LENGTH(0), a.rta_len - RTA_LENGTH(0));
        constexpr size_t kAckedOff = offsetof(tcp_info, tcpi_bytes_acked);
        constexpr size_t kRecvOff = offsetof(tcp_info, tcpi_bytes_received);
        uint64_t v = 0;
        if (info.size() >= kAckedOff + sizeof v) {
          std::memcpy(&v, info.data() + kAckedOff, sizeof v);
          s.bytes_acked = v;
        }
        if (info.size() >= kRecvOff + sizeof v) {
          std::memcpy(&v, info.data() + kRecvOff, sizeof v);
          s.bytes_received = v;
        }
        auto u32 = [&](size_t off) -> std::optional<uint32_t> {
          uint32_t x = 0;
          if (info.size() < off + sizeof x) return std::nullopt;
          std::memcpy(&x, info.data() + off, sizeof x);
          return x;
        };
        s.rtt_us = u32(offsetof(tcp_info, tcpi_rtt));
        s.rttvar_us = u32(offsetof(tcp_info, tcpi_rttvar));
        s.total_retrans = u32(offsetof(tcp_info, tcpi_total_retrans));
        s.segs_out = u32(offsetof(tcp_info, tcpi_segs_out));
      }
      aoff += RTA_ALIGN(a.rta_len);
    }
    out.push_back(std::move(s));
  }
  if (walk.done()) *done = true;
  if (skipped != nullptr) *skipped += static_cast<size_t>(walk.skipped_errors());
  return walk.status();
}

// The size of the last full dump per protocol (TCP, UDP, raw): the next one is sized from it, so
// the table is not grown by doubling (the old and the new array alive at once: on a host with
// thousands of connections a transient of twice the table). A hint only; any thread.
std::atomic<size_t>& LastDumpSize(int protocol) {
  static std::atomic<size_t> sizes[3];
  return sizes[protocol == IPPROTO_TCP ? 0 : protocol == IPPROTO_UDP ? 1 : 2];
}

Result<std::vector<TcpSocketInfo>> Dump(int protocol, uint32_t states) {
  int fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return Unsupported(std::string("no sock_diag netlink: ") + std::strerror(errno));
  timeval tv{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::vector<TcpSocketInfo> out;
  const bool full = states == 0xffffffffu;
  if (full) {
    size_t last = LastDumpSize(protocol).load(std::memory_order_relaxed);
    if (last > 0) out.reserve(last + last / 8 + 16);
  }
  auto done = [&] {
    if (full) LastDumpSize(protocol).store(out.size(), std::memory_order_relaxed);
  };
  uint32_t seq = 1;
  if (protocol == IPPROTO_TCP) {
    // One walk for both families; a kernel that refuses the legacy request gets one per family.
    if (DumpTcpBothFamilies(fd, states, seq++, out).ok()) {
      ::close(fd);
      done();
      return out;
    }
    out.clear();
  }
  for (int family : {AF_INET, AF_INET6}) {
    Status st = DumpFamily(fd, family, protocol, states, seq++, out);
    if (!st.ok()) {
      ::close(fd);
      return st;
    }
  }
  ::close(fd);
  done();
  return out;
}

}  // namespace

Result<std::vector<TcpSocketInfo>> LookupTcpSockets(
    const std::vector<const TcpSocketInfo*>& known) {
  constexpr size_t kBatch = 64;  // 64 replies with tcp_info: ~20 KiB, well inside the rcvbuf
  int fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return Unsupported(std::string("no sock_diag netlink: ") + std::strerror(errno));
  timeval tv{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  struct Request {
    nlmsghdr nlh;
    inet_diag_req_v2 req;
  };
  std::vector<Request> batch;
  std::vector<TcpSocketInfo> out;
  NetlinkBuffer buf;
  uint32_t seq = 0;
  Status st = Status::Ok();
  for (size_t first = 0; first < known.size() && st.ok(); first += kBatch) {
    const size_t n = std::min(kBatch, known.size() - first);
    batch.assign(n, Request{});
    for (size_t i = 0; i < n; ++i) {
      const TcpSocketInfo& k = *known[first + i];
      Request& r = batch[i];
      r.nlh.nlmsg_len = sizeof r;
      r.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
      r.nlh.nlmsg_flags = NLM_F_REQUEST;  // not a dump: the kernel's exact get
      r.nlh.nlmsg_seq = ++seq;
      r.req.sdiag_family = static_cast<uint8_t>(k.family);
      r.req.sdiag_protocol = IPPROTO_TCP;
      r.req.idiag_ext = 1u << (INET_DIAG_INFO - 1);
      r.req.idiag_states = 0xffffffffu;
      std::memcpy(&r.req.id, k.diag_id.data(), sizeof r.req.id);
    }
    st = SendNetlinkRequest(fd, batch.data(), n * sizeof(Request), "sock_diag");
    if (!st.ok()) break;
    // One answer per request: the socket, or ENOENT (closed since).
    size_t answered = 0;
    st = ReceiveNetlinkReply(fd, buf, kSockDiagLookup, [&](std::string_view part, bool* done) {
      size_t before = out.size();
      bool unused = false;
      Status parsed = ParseReplyAs(part, out, &unused, IPPROTO_TCP, kSockDiagLookup, &answered);
      answered += out.size() - before;
      *done = answered >= n;
      return parsed;
    });
  }
  ::close(fd);
  if (!st.ok()) return st;
  return out;
}

Result<std::vector<TcpSocketInfo>> DumpTcpSockets() { return DumpInetSockets(IPPROTO_TCP); }

Result<std::vector<TcpSocketInfo>> DumpTcpListeners() {
  // Only TCP_LISTEN (10): the kernel walks its listening table and skips the established one.
  return Dump(IPPROTO_TCP, 1u << 10);
}

Result<std::vector<TcpSocketInfo>> DumpInetSockets(int protocol) {
  return Dump(protocol, 0xffffffffu);
}

}  // namespace gpudoctor
