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

// rtnl_link_stats64's first eight fields (rx_packets, tx_packets, rx_bytes, tx_bytes, rx_errors,
// tx_errors, rx_dropped, tx_dropped; newer kernels append more) in NetlinkLink::stats's order.
std::optional<std::array<uint64_t, 8>> Stats64(std::string_view payload) {
  if (payload.size() < 8 * sizeof(uint64_t)) return std::nullopt;
  uint64_t v[8];
  std::memcpy(v, payload.data(), sizeof v);
  return std::array<uint64_t, 8>{v[2], v[3], v[0], v[1], v[4], v[5], v[6], v[7]};
}

// Calls fn(type, payload) for each rtattr of a message body from `off` on (the type without its
// flag bits). Errors: parse_error for an attribute whose length runs past the body.
template <typename Fn>
Status WalkAttributes(std::string_view body, size_t off, Fn fn) {
  while (off + sizeof(rtattr) <= body.size()) {
    auto attr = Load<rtattr>(body.substr(off));
    if (attr.rta_len < sizeof(rtattr) || attr.rta_len > body.size() - off) {
      return ParseError("rtnetlink: attribute length past its message");
    }
    fn(static_cast<uint16_t>(attr.rta_type & NLA_TYPE_MASK),
       body.substr(off + RTA_LENGTH(0), attr.rta_len - RTA_LENGTH(0)));
    off += RTA_ALIGN(attr.rta_len);
  }
  return Status::Ok();
}

// One RTM_NEWLINK message body (ifinfomsg and its attributes).
Status ParseLink(std::string_view body, NetlinkLink& link) {
  if (body.size() < sizeof(ifinfomsg)) return ParseError("rtnetlink: short ifinfomsg");
  auto info = Load<ifinfomsg>(body);
  link.index = info.ifi_index;
  link.flags = info.ifi_flags;
  std::optional<uint8_t> operstate, carrier;
  Status walked = WalkAttributes(
      body, NLMSG_ALIGN(sizeof(ifinfomsg)), [&](uint16_t type, std::string_view payload) {
        switch (type) {
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
            if (auto v = Stats64(payload)) link.stats = *v;
            break;
          default:
            break;
        }
      });
  if (!walked.ok()) return walked;
  const bool up = (link.flags & IFF_UP) != 0;
  if (operstate) {
    link.operstate = std::string(OperstateName(up ? *operstate : uint8_t{IF_OPER_DOWN}));
  }
  if (carrier && up) link.carrier = *carrier != 0;
  return Status::Ok();
}

// One RTM_NEWSTATS message body (if_stats_msg and its attributes). False: no 64-bit counters.
Status ParseStats(std::string_view body, NetlinkLinkStats& link, bool* found) {
  *found = false;
  if (body.size() < sizeof(if_stats_msg)) return ParseError("rtnetlink: short if_stats_msg");
  link.index = static_cast<int>(Load<if_stats_msg>(body).ifindex);
  return WalkAttributes(body, NLMSG_ALIGN(sizeof(if_stats_msg)),
                        [&](uint16_t type, std::string_view payload) {
                          if (type != IFLA_STATS_LINK_64) return;
                          if (auto v = Stats64(payload)) {
                            link.stats = *v;
                            *found = true;
                          }
                        });
}

// Opens a NETLINK_ROUTE socket with a receive timeout of 1 s, subscribed to `groups`
// (0: none). -1 on failure.
int OpenRtnetlink(uint32_t groups, bool nonblocking) {
  int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0),
                    NETLINK_ROUTE);
  if (fd < 0) return -1;
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (groups != 0) {
    sockaddr_nl addr{};
    addr.nl_family = AF_NETLINK;
    addr.nl_groups = groups;
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd);
      return -1;
    }
  }
  return fd;
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

Status ParseLinkStatsReply(std::string_view buf, std::vector<NetlinkLinkStats>& out, bool* done) {
  NetlinkReplyWalker walk(buf, kRtnetlinkReply);
  NetlinkMessage msg;
  while (walk.Next(&msg)) {
    if (msg.type != RTM_NEWSTATS) continue;
    NetlinkLinkStats link;
    bool found = false;
    if (Status s = ParseStats(msg.body, link, &found); !s.ok()) return s;
    if (found) out.push_back(link);
  }
  if (walk.done()) *done = true;
  return walk.status();
}

LinkDumper::~LinkDumper() {
  if (fd_ >= 0) ::close(fd_);
  if (changes_fd_ >= 0) ::close(changes_fd_);
}

Status LinkDumper::Request(nlmsghdr* request, size_t len,
                           const std::function<Status(std::string_view, bool* done)>& parse) {
  if (fd_ < 0) {
    fd_ = OpenRtnetlink(0, false);
    if (fd_ < 0) return Unsupported(std::string("rtnetlink socket: ") + std::strerror(errno));
  }
  request->nlmsg_len = static_cast<uint32_t>(len);
  request->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request->nlmsg_seq = ++seq_;
  auto fail = [this](Status s) -> Status {
    // A socket left mid-dump would hand the rest of this reply to the next dump: start afresh.
    ::close(fd_);
    fd_ = -1;
    return s;
  };
  if (Status sent = SendNetlinkRequest(fd_, request, len, "rtnetlink"); !sent.ok()) {
    return fail(sent);
  }
  if (Status st = ReceiveNetlinkReply(fd_, buf_, kRtnetlinkReply, parse); !st.ok()) return fail(st);
  return Status::Ok();
}

Result<std::vector<NetlinkLink>> LinkDumper::Dump() {
  struct {
    nlmsghdr nlh;
    ifinfomsg ifi;
  } msg{};
  msg.nlh.nlmsg_type = RTM_GETLINK;
  msg.ifi.ifi_family = AF_UNSPEC;
  std::vector<NetlinkLink> out;
  Status st = Request(&msg.nlh, sizeof msg, [&](std::string_view part, bool* done) {
    return ParseLinkDumpReply(part, out, done);
  });
  if (!st.ok()) return st;
  return out;
}

Result<std::vector<NetlinkLinkStats>> LinkDumper::DumpStats() {
  struct {
    nlmsghdr nlh;
    if_stats_msg ifs;
  } msg{};
  msg.nlh.nlmsg_type = RTM_GETSTATS;
  msg.ifs.family = AF_UNSPEC;
  msg.ifs.filter_mask = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64);
  std::vector<NetlinkLinkStats> out;
  Status st = Request(&msg.nlh, sizeof msg, [&](std::string_view part, bool* done) {
    return ParseLinkStatsReply(part, out, done);
  });
  if (!st.ok()) return st;
  return out;
}

bool LinkDumper::LinksChanged() {
  if (changes_fd_ < 0) return true;
  bool changed = false;
  char buf[8192];
  // Bounded: a host whose links churn without pause (pods started by the hundred) must not keep
  // this loop reading; what is left is read on the next call, which dumps in full again.
  for (int reads = 0; reads < 256; ++reads) {
    ssize_t n = ::recv(changes_fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      changed = true;  // any RTM_NEWLINK / RTM_DELLINK: what it says is read by the full dump
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return changed;
    // ENOBUFS: announcements were dropped; anything else: the socket is unusable. Either way
    // nothing can be ruled out: a full dump now, and (unusable) a new socket next time.
    if (n < 0 && errno != ENOBUFS) {
      ::close(changes_fd_);
      changes_fd_ = -1;
    }
    return true;
  }
  return true;
}

Result<std::vector<NetlinkLink>> LinkDumper::Links(TimePoint now) {
  // Subscribed before the full dump: a change during or after it is announced, never missed.
  if (changes_fd_ < 0) changes_fd_ = OpenRtnetlink(RTMGRP_LINK, true);
  const bool changed = LinksChanged();
  if (!changed && !stats_refused_ && full_at_ && now - *full_at_ < kFullDumpEvery) {
    auto stats = DumpStats();
    // The kernel answered with an error (io_error: "kernel error: ..."): it does not know the
    // request; a timeout or a failed socket is not a refusal.
    if (!stats.ok() && stats.status().code() != StatusCode::kTimeout &&
        stats.status().message().find("kernel error") != std::string::npos) {
      stats_refused_ = true;
    }
    bool same_set = stats.ok() && stats->size() == links_.size();
    if (same_set) {
      // Both in the kernel's order (by ifindex within the namespace's list): match by index.
      for (size_t i = 0; i < links_.size() && same_set; ++i) {
        const NetlinkLinkStats* st = nullptr;
        if ((*stats)[i].index == links_[i].index) {
          st = &(*stats)[i];
        } else {
          for (const auto& cand : *stats) {
            if (cand.index == links_[i].index) st = &cand;
          }
        }
        if (st == nullptr || !links_[i].stats) {
          same_set = false;
        } else {
          links_[i].stats = st->stats;
        }
      }
    }
    if (same_set) {
      ++stats_dumps_;
      return links_;
    }
  }
  auto full = Dump();
  if (!full.ok()) {
    full_at_.reset();
    links_.clear();
    return full.status();
  }
  ++full_dumps_;
  links_ = *full;
  full_at_ = now;
  return full;
}

}  // namespace gpudoctor
