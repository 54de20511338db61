#include "net/link_netlink.h"

#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/strings.h"
#include "net/netlink_reply.h"

namespace gpudoctor {
namespace {

constexpr NetlinkReplyKind kRtnetlinkReply{"rtnetlink"};

constexpr std::string_view kOperstates[] = {"unknown", "notpresent", "down", "lowerlayerdown",
                                            "testing", "dormant",    "up"};

template <typename T>
T Load(std::string_view bytes) {
  T v{};
  std::memcpy(&v, bytes.data(), sizeof v);
  return v;
}

// One RTM_NEWLINK message body (ifinfomsg and its attributes).
Status ParseLink(std::string_view body, NetlinkLink& link) {
  if (body.size() < sizeof(ifinfomsg)) return ParseError("rtnetlink: short ifinfomsg");
  auto info = Load<ifinfomsg>(body);
  link.index = info.ifi_index;
  link.flags = info.ifi_flags;
  std::optional<uint8_t> operstate, carrier;
  size_t off = NLMSG_ALIGN(sizeof(ifinfomsg));
  while (off + sizeof(rtattr) <= body.size()) {
    auto attr = Load<rtattr>(body.substr(off));
    if (attr.rta_len < sizeof(rtattr) || attr.rta_len > body.size() - off) {
      return ParseError("rtnetlink: attribute length past its message");
    }
    std::string_view payload = body.substr(off + RTA_LENGTH(0), attr.rta_len - RTA_LENGTH(0));
    off += RTA_ALIGN(attr.rta_len);
    switch (attr.rta_type & NLA_TYPE_MASK) {
      case IFLA_IFNAME:
        link.name = Sanitize(payload.substr(0, payload.find('\0')), 64);
        break;
      case IFLA_OPERSTATE:
        if (!payload.empty()) operstate = static_cast<uint8_t>(payload[0]);
        break;
      case IFLA_CARRIER:
        if (!payload.empty()) carrier = static_cast<uint8_t>(payload[0]);
        break;
      case IFLA_CARRIER_CHANGES:
        if (payload.size() >= sizeof(uint32_t)) link.carrier_changes = Load<uint32_t>(payload);
        break;
      case IFLA_STATS64:
        // rx_packets, tx_packets, rx_bytes, tx_bytes, rx_errors, tx_errors, rx_dropped,
        // tx_dropped, ... (newer kernels append fields: only the first eight are read).
        if (payload.size() >= 8 * sizeof(uint64_t)) {
          uint64_t v[8];
          std::memcpy(v, payload.data(), sizeof v);
          link.stats = std::array<uint64_t, 8>{v[2], v[3], v[0], v[1], v[4], v[5], v[6], v[7]};
        }
        break;
      default:
        break;
    }
  }
  const bool up = (link.flags & IFF_UP) != 0;
  if (operstate) {
    link.operstate = std::string(OperstateName(up ? *operstate : uint8_t{IF_OPER_DOWN}));
  }
  if (carrier && up) link.carrier = *carrier != 0;
  return Status::Ok();
}

}  // namespace

std::string_view OperstateName(uint8_t operstate) {
  if (operstate >= std::size(kOperstates)) return kOperstates[0];
  return kOperstates[operstate];
}

Status ParseLinkDumpReply(std::string_view buf, std::vector<NetlinkLink>& out, bool* done) {
  NetlinkReplyWalker walk(buf, kRtnetlinkReply);
  NetlinkMessage msg;
  while (walk.Next(&msg)) {
    if (msg.type != RTM_NEWLINK) continue;
    NetlinkLink link;
    if (Status s = ParseLink(msg.body, link); !s.ok()) return s;
    if (!link.name.empty()) out.push_back(std::move(link));
  }
  if (walk.done()) *done = true;
  return walk.status();
}

LinkDumper::~LinkDumper() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::vector<NetlinkLink>> LinkDumper::Dump() {
  if (fd_ < 0) {
    fd_ = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd_ < 0) return Unsupported(std::string("rtnetlink socket: ") + std::strerror(errno));
    timeval tv{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  struct {
    nlmsghdr nlh;
    ifinfomsg ifi;
  } msg{};
  msg.nlh.nlmsg_len = sizeof msg;
  msg.nlh.nlmsg_type = RTM_GETLINK;
  msg.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  msg.nlh.nlmsg_seq = ++seq_;
  msg.ifi.ifi_family = AF_UNSPEC;
  auto fail = [this](Status s) -> Status {
    // A socket left mid-dump would hand the rest of this reply to the next dump: start afresh.
    ::close(fd_);
    fd_ = -1;
    return s;
  };
  if (Status sent = SendNetlinkRequest(fd_, &msg, sizeof msg, "rtnetlink"); !sent.ok()) {
    return fail(sent);
  }
  std::vector<NetlinkLink> out;
  Status st = ReceiveNetlinkReply(
      fd_, buf_, kRtnetlinkReply,
      [&](std::string_view part, bool* done) { return ParseLinkDumpReply(part, out, done); });
  if (!st.ok()) return fail(st);
  return out;
}

}  // namespace gpudoctor
