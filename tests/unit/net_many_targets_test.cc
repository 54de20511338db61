// Issue 8 item 21: hundreds of ICMP targets must not produce false loss or misattributed replies.
// 200 loopback addresses (127.0.0.1-200 all answer on lo) probed together inside a fresh
// network namespace (so other tests' pings on the shared loopback cannot interfere), and hosts
// behind the TUN responder with different delays: each host's RTT must be its own.
// Skipped with a message where namespaces, TUN or ICMP sockets are not available.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "net/pinger.h"
#include "net/reachability.h"
#include "net_test_env.h"

namespace gpudoctor {
namespace {

using std::chrono::milliseconds;
using testing::HostBehaviour;
using testing::RunInFreshNetns;
using testing::TunResponder;

// Runs body in a fresh namespace; returns the reason it could not (empty when it ran).
std::string InNetns(const std::function<void()>& body) {
  std::string why;
  if (!RunInFreshNetns(body, &why)) return why.empty() ? "no network namespace" : why;
  return "";
}

bool HaveIcmp() {
  ResolvedAddress lo;
  auto* sin = reinterpret_cast<sockaddr_in*>(&lo.addr);
  sin->sin_family = AF_INET;
  sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  lo.len = sizeof(sockaddr_in);
  PingOptions one;
  one.count = 1;
  one.timeout = milliseconds(200);
  return IcmpPing(lo, one).ok();
}

// 200 targets x 40 probes at 25 ms: 8000 echo requests in about one second, one reply each.
// datagram: allow unprivileged ICMP sockets in the namespace first (net.ipv4.ping_group_range
// is per namespace), so the datagram path is tested even when we run as root.
void TwoHundredTargets(bool datagram) {
  std::string skipped;
  std::vector<TargetProbeFacts> out;
  double seconds = 0;
  std::string why = InNetns([&] {
    if (datagram) {
      FILE* f = std::fopen("/proc/sys/net/ipv4/ping_group_range", "w");
      if (f == nullptr || std::fputs("0 2147483647", f) < 0 || std::fclose(f) != 0) {
        skipped = "cannot allow ICMP datagram sockets in the namespace";
        return;
      }
    }
    if (!HaveIcmp()) {
      skipped = "no ICMP socket";
      return;
    }
    std::vector<HostToProbe> hosts;
    for (int i = 1; i <= 200; ++i) {
      hosts.push_back({*ParseTarget("127.0.0." + std::to_string(i)), TargetGroup::kTarget});
    }
    ReachabilityOptions opts;
    opts.ping.count = 40;
    opts.ping.interval = milliseconds(25);
    opts.ping.timeout = milliseconds(1000);
    auto start = SteadyClock::now();
    out = ProbeHosts(hosts, opts, start + std::chrono::seconds(8));
    seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  });
  if (!why.empty()) GTEST_SKIP() << "needs a network namespace: " << why;
  if (!skipped.empty()) GTEST_SKIP() << skipped;
  ASSERT_EQ(out.size(), 200u);
  int lossy = 0, sent = 0, received = 0;
  for (const auto& h : out) {
    sent += h.sent;
    received += h.received;
    EXPECT_FALSE(h.unfinished) << h.name;
    EXPECT_EQ(h.sent, 40) << h.name << " " << h.error;
    if (h.received != h.sent) {
      ++lossy;
      ADD_FAILURE() << h.name << ": " << h.received << "/" << h.sent << " replies";
    }
    EXPECT_EQ(h.address, h.name);
    if (datagram) {
      EXPECT_EQ(h.method, "icmp-dgram");
    }
  }
  EXPECT_EQ(lossy, 0);
  std::printf("200 targets x 40 probes (%s): %.2f s, %d/%d replies, %d hosts with loss\n",
              out[0].method.c_str(), seconds, received, sent, lossy);
  EXPECT_LT(seconds, 4.0);  // (40-1) x 25 ms + the last replies, not 200 series one by one
}

TEST(ManyTargetsTest, TwoHundredLoopbackTargetsHaveNoLoss) { TwoHundredTargets(false); }
TEST(ManyTargetsTest, TwoHundredTargetsOverDatagramSocketsHaveNoLoss) { TwoHundredTargets(true); }

// Different delays per host behind the TUN responder: a reply credited to the wrong series
// would give a host another host's RTT.
TEST(ManyTargetsTest, RepliesAreCreditedToTheirOwnHost) {
  std::string skipped;
  std::vector<TargetProbeFacts> out;
  std::string why = InNetns([&] {
    TunResponder tun;
    std::string tun_why;
    if (!tun.Start(&tun_why)) {
      skipped = tun_why;
      return;
    }
    if (!HaveIcmp()) {
      skipped = "no ICMP socket";
      return;
    }
    std::vector<HostToProbe> hosts;
    for (int i = 0; i < 40; ++i) {
      tun.SetHost(10 + i, HostBehaviour{milliseconds((i % 4) * 20), 0, false, {}});
      hosts.push_back({*ParseTarget("192.0.2." + std::to_string(10 + i)), TargetGroup::kTarget});
    }
    ReachabilityOptions opts;
    opts.ping.count = 10;
    opts.ping.interval = milliseconds(20);
    opts.ping.timeout = milliseconds(800);
    out = ProbeHosts(hosts, opts, SteadyClock::now() + std::chrono::seconds(5));
  });
  if (!why.empty()) GTEST_SKIP() << "needs a network namespace: " << why;
  if (!skipped.empty()) GTEST_SKIP() << skipped;
  ASSERT_EQ(out.size(), 40u);
  for (int i = 0; i < 40; ++i) {
    const auto& h = out[i];
    ASSERT_EQ(h.received, 10) << h.name << " " << h.error;
    double delay = (i % 4) * 20;
    EXPECT_GE(*h.rtt_min_ms, delay - 0.5) << h.name;
    EXPECT_LT(*h.rtt_median_ms, delay + 15) << h.name;
  }
}

}  // namespace
}  // namespace gpudoctor
