// rtnetlink interface dumps (net/link_netlink.h): the parser on built replies (state words,
// carrier only when up, the counters in sysfs's order, malformed input refused), and the live
// dump of this host against its sysfs (the NIC reader's source on the running host).
#include "net/link_netlink.h"

#include <gtest/gtest.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "core/root_fs.h"
#include "core/strings.h"
#include "net/nic_sysfs.h"
#include "net_test_env.h"

namespace gpudoctor {
namespace {

// Builds netlink messages byte by byte.
class Reply {
 public:
  // Starts an RTM_NEWLINK message for interface `index` with ifi_flags `flags`.
  Reply& Link(int index, uint32_t flags) {
    Close();
    start_ = buf_.size();
    nlmsghdr h{};
    h.nlmsg_type = RTM_NEWLINK;
    Append(&h, sizeof h);
    ifinfomsg i{};
    i.ifi_index = index;
    i.ifi_flags = flags;
    Append(&i, sizeof i);
    return *this;
  }
  // Starts an RTM_NEWSTATS message (an RTM_GETSTATS dump's) for interface `index`.
  Reply& Stats(int index) {
    Close();
    start_ = buf_.size();
    nlmsghdr h{};
    h.nlmsg_type = RTM_NEWSTATS;
    Append(&h, sizeof h);
    if_stats_msg m{};
    m.ifindex = static_cast<uint32_t>(index);
    m.filter_mask = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64);
    Append(&m, sizeof m);
    return *this;
  }
  Reply& Attr(uint16_t type, const void* data, size_t len) {
    rtattr a{};
    a.rta_len = static_cast<uint16_t>(RTA_LENGTH(len));
    a.rta_type = type;
    Append(&a, sizeof a);
    Append(data, len);
    buf_.resize(start_ + NLMSG_ALIGN(buf_.size() - start_));
    return *this;
  }
  Reply& Name(const std::string& n) { return Attr(IFLA_IFNAME, n.c_str(), n.size() + 1); }
  Reply& U8(uint16_t type, uint8_t v) { return Attr(type, &v, 1); }
  Reply& U32(uint16_t type, uint32_t v) { return Attr(type, &v, 4); }
  Reply& Done() {
    Close();
    start_ = buf_.size();
    nlmsghdr h{};
    h.nlmsg_type = NLMSG_DONE;
    h.nlmsg_len = NLMSG_LENGTH(4);
    Append(&h, sizeof h);
    int zero = 0;
    Append(&zero, 4);
    start_ = std::string::npos;
    return *this;
  }
  std::string& bytes() {
    Close();
    return buf_;
  }

 private:
  void Append(const void* p, size_t n) { buf_.append(static_cast<const char*>(p), n); }
  void Close() {
    if (start_ == std::string::npos) return;
    uint32_t len = static_cast<uint32_t>(buf_.size() - start_);
    std::memcpy(&buf_[start_], &len, sizeof len);  // nlmsg_len is the header's first field
    start_ = std::string::npos;
  }
  std::string buf_;
  size_t start_ = std::string::npos;
};

// Counters whose order shows in the parsed array: rx_bytes 1000, tx_bytes 2000, rx_packets 10,
// tx_packets 20, rx_errors 1, tx_errors 2, rx_dropped 3, tx_dropped 4.
rtnl_link_stats64 SampleStats() {
  rtnl_link_stats64 st{};
  st.rx_packets = 10;
  st.tx_packets = 20;
  st.rx_bytes = 1000;
  st.tx_bytes = 2000;
  st.rx_errors = 1;
  st.tx_errors = 2;
  st.rx_dropped = 3;
  st.tx_dropped = 4;
  return st;
}

TEST(LinkNetlinkTest, ParsesStateCarrierAndCountersInSysfsTerms) {
  rtnl_link_stats64 st = SampleStats();
  st.rx_missed_errors = 99;  // /proc/net/dev adds it to drops; sysfs and we do not
  Reply r;
  r.Link(2, IFF_UP | IFF_RUNNING).Name("eth0").U8(IFLA_OPERSTATE, IF_OPER_UP).U8(IFLA_CARRIER, 1);
  r.U32(IFLA_CARRIER_CHANGES, 3).Attr(IFLA_STATS64, &st, sizeof st);
  // Not up: the kernel may still hold "up" and a carrier; sysfs says "down" and no carrier.
  r.Link(3, 0).Name("eth1").U8(IFLA_OPERSTATE, IF_OPER_UP).U8(IFLA_CARRIER, 1);
  r.Link(4, IFF_UP).Name("ib0").U8(IFLA_OPERSTATE, 200);  // unknown value
  r.Done();
  std::vector<NetlinkLink> links;
  bool done = false;
  Status s = ParseLinkDumpReply(r.bytes(), links, &done);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(done);
  ASSERT_EQ(links.size(), 3u);
  const NetlinkLink& eth0 = links[0];
  EXPECT_EQ(eth0.name, "eth0");
  EXPECT_EQ(eth0.index, 2);
  EXPECT_EQ(eth0.operstate, "up");
  EXPECT_EQ(eth0.carrier, true);
  EXPECT_EQ(eth0.carrier_changes, 3u);
  ASSERT_TRUE(eth0.stats.has_value());
  // rx_bytes, tx_bytes, rx_packets, tx_packets, rx_errors, tx_errors, rx_dropped, tx_dropped
  EXPECT_EQ(*eth0.stats, (std::array<uint64_t, 8>{1000, 2000, 10, 20, 1, 2, 3, 4}));
  EXPECT_EQ(links[1].operstate, "down");
  EXPECT_FALSE(links[1].carrier.has_value());
  EXPECT_FALSE(links[1].stats.has_value());
  EXPECT_EQ(links[2].operstate, "unknown");
}

TEST(LinkNetlinkTest, MalformedRepliesAreRefusedNotReadPastTheirEnd) {
  Reply r;
  r.Link(2, IFF_UP).Name("eth0");
  std::string good = r.bytes();
  std::vector<NetlinkLink> links;
  bool done = false;
  // A message longer than the buffer.
  std::string cut = good.substr(0, good.size() - 2);
  EXPECT_EQ(ParseLinkDumpReply(cut, links, &done).code(), StatusCode::kParseError);
  // An attribute longer than its message.
  std::string bad_attr = good;
  rtattr a;
  size_t attr_at = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg));
  std::memcpy(&a, &bad_attr[attr_at], sizeof a);
  a.rta_len = 200;
  std::memcpy(&bad_attr[attr_at], &a, sizeof a);
  links.clear();
  EXPECT_EQ(ParseLinkDumpReply(bad_attr, links, &done).code(), StatusCode::kParseError);
  EXPECT_TRUE(links.empty());
  // A short ifinfomsg.
  std::string short_body = good.substr(0, NLMSG_HDRLEN + 4);
  uint32_t len = static_cast<uint32_t>(short_body.size());
  std::memcpy(&short_body[0], &len, sizeof len);
  EXPECT_EQ(ParseLinkDumpReply(short_body, links, &done).code(), StatusCode::kParseError);
  EXPECT_FALSE(done);
}

TEST(LinkNetlinkTest, ParsesTheCountersDumpInTheLinkDumpsOrder) {
  rtnl_link_stats64 st = SampleStats();
  Reply r;
  r.Stats(2).Attr(IFLA_STATS_LINK_64, &st, sizeof st);
  r.Stats(3);  // no 64-bit counters: left out
  r.Stats(4).U32(IFLA_STATS_LINK_XSTATS, 7).Attr(IFLA_STATS_LINK_64, &st, 8 * sizeof(uint64_t));
  r.Done();
  std::vector<NetlinkLinkStats> stats;
  bool done = false;
  Status s = ParseLinkStatsReply(r.bytes(), stats, &done);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(done);
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].index, 2);
  // The same order as NetlinkLink::stats: rx_bytes, tx_bytes, rx_packets, tx_packets, ...
  EXPECT_EQ(stats[0].stats, (std::array<uint64_t, 8>{1000, 2000, 10, 20, 1, 2, 3, 4}));
  EXPECT_EQ(stats[1].index, 4);
  EXPECT_EQ(stats[1].stats, stats[0].stats);

  // Malformed: cut short, an attribute past its message, a short if_stats_msg.
  std::string good = r.bytes();
  stats.clear();
  EXPECT_EQ(ParseLinkStatsReply(good.substr(0, 30), stats, &done).code(), StatusCode::kParseError);
  std::string bad_attr = good;
  rtattr a;
  size_t attr_at = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(if_stats_msg));
  std::memcpy(&a, &bad_attr[attr_at], sizeof a);
  a.rta_len = 400;
  std::memcpy(&bad_attr[attr_at], &a, sizeof a);
  EXPECT_EQ(ParseLinkStatsReply(bad_attr, stats, &done).code(), StatusCode::kParseError);
  std::string short_body = good.substr(0, NLMSG_HDRLEN + 4);
  uint32_t len = static_cast<uint32_t>(short_body.size());
  std::memcpy(&short_body[0], &len, sizeof len);
  EXPECT_EQ(ParseLinkStatsReply(short_body, stats, &done).code(), StatusCode::kParseError);
}

bool SetLoopbackUp(bool up) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return false;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  bool ok = ioctl(s, SIOCGIFFLAGS, &ifr) == 0;
  if (ok) {
    ifr.ifr_flags = static_cast<short>(up ? (ifr.ifr_flags | IFF_UP) : (ifr.ifr_flags & ~IFF_UP));
    ok = ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
  }
  close(s);
  return ok;
}

// One datagram to 127.0.0.1 (lo counts it received and sent).
void SendOnLoopback() {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);  // discard: nobody listens, the packet still crosses lo
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  (void)sendto(s, "x", 1, 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
  close(s);
}

// Links() in a namespace of its own: the first call dumps everything, later ones the counters
// alone (which still move), a link change is announced and dumped in full at once, and a full
// dump comes again after kFullDumpEvery however quiet the links are.
TEST(LinkNetlinkTest, LinksDumpsOnlyTheCountersUntilALinkChanges) {
  std::string why;
  bool ran = testing::RunInFreshNetns(
      [] {
        LinkDumper d;
        const TimePoint t0 = SteadyClock::now();
        auto lo_of = [](const std::vector<NetlinkLink>& links) -> const NetlinkLink* {
          for (const auto& l : links) {
            if (l.name == "lo") return &l;
          }
          return nullptr;
        };
        // Calls until one dumps the counters alone (a link event the kernel defers, up to a
        // second, after lo came up may still be announced): the links are quiet from then on.
        auto settle = [&] {
          Result<std::vector<NetlinkLink>> got = d.Links(t0);
          const uint64_t stats_before = d.stats_dumps();
          for (int i = 0; i < 150 && d.stats_dumps() == stats_before; ++i) {
            usleep(20'000);
            got = d.Links(t0);
          }
          return got;
        };
        // linkwatch defers a link's state events up to a second: let lo's coming up (just before
        // this function) pass first.
        usleep(1'100'000);
        auto a = settle();
        ASSERT_TRUE(a.ok()) << a.status().ToString();
        ASSERT_NE(lo_of(*a), nullptr);
        EXPECT_EQ(lo_of(*a)->operstate, "unknown");  // lo is up (RunInFreshNetns)
        const uint64_t full = d.full_dumps(), stats = d.stats_dumps();
        EXPECT_GE(full, 1u);
        EXPECT_GE(stats, 1u);

        for (int i = 0; i < 3; ++i) SendOnLoopback();
        auto b = d.Links(t0 + std::chrono::seconds(1));
        ASSERT_TRUE(b.ok()) << b.status().ToString();
        EXPECT_EQ(d.full_dumps(), full) << "no link changed: the counters alone";
        EXPECT_EQ(d.stats_dumps(), stats + 1);
        ASSERT_NE(lo_of(*b), nullptr);
        ASSERT_TRUE(lo_of(*a)->stats && lo_of(*b)->stats);
        EXPECT_GE((*lo_of(*b)->stats)[2], (*lo_of(*a)->stats)[2] + 3) << "rx_packets";
        EXPECT_EQ(lo_of(*b)->operstate, "unknown");

        ASSERT_TRUE(SetLoopbackUp(false));
        auto c = d.Links(t0 + std::chrono::seconds(2));
        ASSERT_TRUE(c.ok()) << c.status().ToString();
        EXPECT_EQ(d.full_dumps(), full + 1) << "the change was announced: a full dump at once";
        ASSERT_NE(lo_of(*c), nullptr);
        EXPECT_EQ(lo_of(*c)->operstate, "down");
        EXPECT_EQ(lo_of(*c)->flags & IFF_UP, 0u);

        auto e = settle();
        ASSERT_TRUE(e.ok());
        EXPECT_EQ(lo_of(*e)->operstate, "down") << "the counters' dump keeps the state";

        const uint64_t before_quiet_period = d.full_dumps();
        auto f = d.Links(t0 + std::chrono::seconds(100));
        ASSERT_TRUE(f.ok());
        EXPECT_EQ(d.full_dumps(), before_quiet_period + 1) << "a full dump every kFullDumpEvery";
        SetLoopbackUp(true);
      },
      &why);
  if (!ran) GTEST_SKIP() << "no network namespace here: " << why;
}

// Thousands of announcements, more than the socket holds (ENOBUFS) and more than one call reads:
// Links() dumps in full, returns, and is back to the counters alone within a few calls.
TEST(LinkNetlinkTest, AFloodOfAnnouncementsIsAFullDumpNotALoop) {
  std::string why;
  bool ran = testing::RunInFreshNetns(
      [] {
        LinkDumper d;
        const TimePoint t0 = SteadyClock::now();
        ASSERT_TRUE(d.Links(t0).ok());
        const uint64_t full = d.full_dumps();
        for (int i = 0; i < 2000; ++i) {
          ASSERT_TRUE(SetLoopbackUp(false));
          ASSERT_TRUE(SetLoopbackUp(true));
        }
        auto flooded = d.Links(t0);
        ASSERT_TRUE(flooded.ok()) << flooded.status().ToString();
        EXPECT_GT(d.full_dumps(), full);
        const uint64_t stats = d.stats_dumps();
        for (int i = 0; i < 50 && d.stats_dumps() == stats; ++i) {
          usleep(30'000);
          ASSERT_TRUE(d.Links(t0).ok());
        }
        EXPECT_GT(d.stats_dumps(), stats) << "never quiet again after the flood";
      },
      &why);
  if (!ran) GTEST_SKIP() << "no network namespace here: " << why;
}

// A carrier that drops (the far end of a veth pair taken down: no flag of this end changes) and
// an interface that appears are announced too: the next Links() dumps in full and sees them.
TEST(LinkNetlinkTest, LinksSeesACarrierLossAndANewInterfaceAtOnce) {
  if (std::system("command -v ip >/dev/null 2>&1") != 0) GTEST_SKIP() << "no iproute2 ip";
  std::string why;
  bool ran = testing::RunInFreshNetns(
      [] {
        // Children forked from this thread are in its namespace.
        ASSERT_EQ(std::system("ip link add gdnear type veth peer name gdfar && ip link set gdnear "
                              "up && ip link set gdfar up"),
                  0);
        LinkDumper d;
        const TimePoint t0 = SteadyClock::now();
        auto find = [](const std::vector<NetlinkLink>& links,
                       const std::string& name) -> const NetlinkLink* {
          for (const auto& l : links) {
            if (l.name == name) return &l;
          }
          return nullptr;
        };
        // The pair's carrier comes up asynchronously (linkwatch): wait for it with full dumps.
        for (int i = 0; i < 100; ++i) {
          auto now = d.Dump();
          ASSERT_TRUE(now.ok());
          const NetlinkLink* near = find(*now, "gdnear");
          if (near && near->carrier == true) break;
          usleep(20'000);
        }
        auto a = d.Links(t0);
        ASSERT_TRUE(a.ok()) << a.status().ToString();
        ASSERT_NE(find(*a, "gdnear"), nullptr);
        EXPECT_EQ(find(*a, "gdnear")->carrier, true);
        auto quiet = d.Links(t0 + std::chrono::seconds(1));
        ASSERT_TRUE(quiet.ok());
        EXPECT_EQ(d.full_dumps(), 1u);

        ASSERT_EQ(std::system("ip link set gdfar down"), 0);
        // linkwatch delivers the carrier change within a second or so.
        const NetlinkLink* near = nullptr;
        std::vector<NetlinkLink> seen;
        for (int i = 0; i < 100; ++i) {
          auto b = d.Links(t0 + std::chrono::seconds(2));
          ASSERT_TRUE(b.ok());
          seen = *b;
          near = find(seen, "gdnear");
          if (near && near->carrier == false) break;
          usleep(20'000);
        }
        ASSERT_NE(near, nullptr);
        EXPECT_EQ(near->carrier, false) << "the carrier loss was never seen";
        EXPECT_NE(near->operstate, "up");
        EXPECT_GE(d.full_dumps(), 2u);

        ASSERT_EQ(std::system("ip link add gdnew type veth peer name gdnewpeer"), 0);
        auto c = d.Links(t0 + std::chrono::seconds(3));
        ASSERT_TRUE(c.ok());
        EXPECT_NE(find(*c, "gdnew"), nullptr) << "a new interface is seen on the next call";
      },
      &why);
  if (!ran) GTEST_SKIP() << "no network namespace here: " << why;
}

// The live dump names this host's interfaces as sysfs does, with lo's counters between two
// sysfs reads taken around it.
TEST(LinkNetlinkTest, LiveDumpMatchesSysfs) {
  RootFs fs;
  auto before = RootFs::ReadFile(fs.SysPath("class/net/lo/statistics/rx_bytes"));
  LinkDumper dumper;
  auto links = dumper.Dump();
  ASSERT_TRUE(links.ok()) << links.status().ToString();
  auto after = RootFs::ReadFile(fs.SysPath("class/net/lo/statistics/rx_bytes"));
  ASSERT_TRUE(before.ok() && after.ok());
  const NetlinkLink* lo = nullptr;
  for (const auto& l : *links) {
    if (l.name == "lo") lo = &l;
    EXPECT_TRUE(RootFs::Exists(fs.SysPath("class/net/" + l.name))) << l.name;
  }
  ASSERT_NE(lo, nullptr);
  ASSERT_TRUE(lo->stats.has_value());
  EXPECT_GE((*lo->stats)[0], *ParseUint64(Trim(*before)));
  EXPECT_LE((*lo->stats)[0], *ParseUint64(Trim(*after)));
  auto op = RootFs::ReadFile(fs.SysPath("class/net/lo/operstate"));
  ASSERT_TRUE(op.ok());
  EXPECT_EQ(lo->operstate, Trim(*op));
  // A second dump on the same socket works (the first was read to its end).
  auto again = dumper.Dump();
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->size(), links->size());

  // The NIC reader on the running host: the same interfaces and states as the sysfs files.
  NicReader reader;
  auto samples = reader.Read(fs, SteadyClock::now());
  ASSERT_TRUE(samples.ok());
  for (const NicSample& n : *samples) {
    auto state = RootFs::ReadFile(fs.SysPath("class/net/" + n.name + "/operstate"));
    ASSERT_TRUE(state.ok()) << n.name;
    EXPECT_EQ(n.operstate, Trim(*state)) << n.name;
    auto carrier = RootFs::ReadFile(fs.SysPath("class/net/" + n.name + "/carrier"));
    EXPECT_EQ(n.carrier.has_value(), carrier.ok()) << n.name;
    if (carrier.ok()) {
      EXPECT_EQ(*n.carrier, Trim(*carrier) == "1") << n.name;
    }
    EXPECT_EQ(n.physical, RootFs::Exists(fs.SysPath("class/net/" + n.name + "/device")));
    for (const auto& v : n.stats) EXPECT_TRUE(v.has_value()) << n.name;
  }
}

}  // namespace
}  // namespace gpudoctor
