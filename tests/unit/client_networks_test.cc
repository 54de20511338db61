// Issue 8 item 8: "is it everyone, or only some users?" from the server's TCP connections.
#include "net/client_networks.h"

#include <gtest/gtest.h>

#include "rules/engine.h"

namespace gpudoctor {
namespace {

TcpSocketInfo Conn(std::string remote, uint32_t rtt_ms, uint32_t retrans = 0,
                   uint32_t segs = 1000) {
  TcpSocketInfo s;
  s.state = kTcpEstablished;
  s.remote = std::move(remote);
  s.rtt_us = rtt_ms * 1000;
  s.total_retrans = retrans;
  s.segs_out = segs;
  return s;
}

TEST(ClientNetworksTest, NetworksOfV4V6AndMappedAddresses) {
  EXPECT_EQ(ClientNetworkOf("203.0.113.7:443"), "203.0.113.0/24");
  EXPECT_EQ(ClientNetworkOf("[2001:db8:1:2:aa::5]:22"), "2001:db8:1:2::/64");
  EXPECT_EQ(ClientNetworkOf("[::ffff:198.51.100.9]:80"), "198.51.100.0/24");
  EXPECT_EQ(ClientNetworkOf("garbage"), "");
  EXPECT_EQ(ClientNetworkOf("[::1"), "");
}

TEST(ClientNetworksTest, GroupsCarryMedianRttAndRetransShare) {
  auto g = GroupClientNetworks({Conn("203.0.113.7:443", 10), Conn("203.0.113.9:443", 30),
                                Conn("203.0.113.8:443", 20, 50), Conn("198.51.100.1:443", 5)});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].network, "203.0.113.0/24");
  EXPECT_EQ(g[0].connections, 3);
  EXPECT_DOUBLE_EQ(*g[0].rtt_median_ms, 20);
  EXPECT_NEAR(*g[0].retrans_pct, 100.0 * 50 / 3000, 1e-9);
}

std::vector<Finding> Judge(const std::vector<TcpSocketInfo>& conns) {
  Snapshot s;
  SocketTrafficFacts f;
  f.client_networks = GroupClientNetworks(conns);
  s.network.sockets = f;
  std::vector<Finding> out;
  NetRules(s, Thresholds(), out);
  std::erase_if(out, [](const Finding& x) { return x.id != "net.clients.degraded"; });
  return out;
}

TEST(ClientNetworksTest, SomeNetworksSlowIsTheirPath) {
  auto fs = Judge({Conn("203.0.113.7:443", 400), Conn("198.51.100.1:443", 12),
                   Conn("192.0.2.10:443", 15), Conn("100.64.1.1:443", 9)});
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].summary.find("1 of 4"), std::string::npos) << fs[0].summary;
  EXPECT_NE(fs[0].summary.find("their path"), std::string::npos) << fs[0].summary;
  ASSERT_EQ(fs[0].next_steps.size(), 2u);
  EXPECT_NE(fs[0].next_steps[0].find("mtr"), std::string::npos);
}

TEST(ClientNetworksTest, EveryoneSlowPointsAtTheServer) {
  auto fs = Judge({Conn("203.0.113.7:443", 400), Conn("198.51.100.1:443", 300),
                   Conn("192.0.2.10:443", 10, 200), Conn("100.64.1.1:443", 500)});
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].summary.find("this server or its uplink"), std::string::npos) << fs[0].summary;
  EXPECT_NE(fs[0].next_steps[0].find("NIC"), std::string::npos);
}

TEST(ClientNetworksTest, TooFewNetworksToCompareSayNothing) {
  EXPECT_TRUE(Judge({Conn("203.0.113.7:443", 400), Conn("198.51.100.1:443", 12)}).empty());
}

}  // namespace
}  // namespace gpudoctor
