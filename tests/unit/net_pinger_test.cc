// Pingers and the reachability layer against real sockets: TCP listeners on 127.0.0.1, and
// hosts in 192.0.2.0/24 answered by a TUN responder inside a network namespace the test creates
// (skipped with a message where the machine does not allow namespaces, TUN or raw sockets).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "net/icmp_packet.h"
#include "net/neighbor_table.h"
#include "net/pinger.h"
#include "net/reachability.h"
#include "net_test_env.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"
#include "rules/engine.h"
#include "test_util.h"

namespace gpudoctor {

namespace {

using std::chrono::milliseconds;
using testing::HostBehaviour;
using testing::TunResponder;
using testing::WithTun;

// A listening socket on 127.0.0.1 with a kernel-chosen port.
struct Listener {
  int fd = -1;
  uint16_t port = 0;
  Listener() { fd = testing::BindLoopback(64, &port); }
  ~Listener() { close(fd); }
};

// A port on 127.0.0.1 that nothing listens on (bound, then closed).
uint16_t ClosedPort() {
  Listener l;
  return l.port;
}

ResolvedAddress Addr(const char* host) {
  auto a = ResolveTarget(*ParseTarget(host), milliseconds(500));
  EXPECT_TRUE(a.ok());
  return *a;
}

PingOptions Fast(int count = 5) {
  PingOptions o;
  o.count = count;
  o.interval = milliseconds(10);
  o.timeout = milliseconds(400);
  return o;
}

TEST(IcmpPacketTest, RoundTripAndChecksum) {
  std::string req = BuildEchoRequest({false, 0x1234, 7, 0x0102030405060708ull});
  ASSERT_EQ(req.size(), 24u);
  EXPECT_EQ(static_cast<unsigned char>(req[0]), 8);
  EXPECT_EQ(InternetChecksum(req), 0);  // a correct checksum sums to zero
  std::string reply = req;
  reply[0] = 0;
  auto r = ParseEchoReply(reply, false, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->ident, 0x1234);
  EXPECT_EQ(r->seq, 7);
  EXPECT_EQ(r->nonce, 0x0102030405060708ull);
  EXPECT_FALSE(ParseEchoReply(req, false, false));  // a request is not a reply
  EXPECT_FALSE(ParseEchoReply(reply.substr(0, 10), false, false));
  std::string with_ip(20, '\0');
  with_ip[0] = 0x45;
  EXPECT_TRUE(ParseEchoReply(with_ip + reply, false, true));
  with_ip[0] = 0x4f;  // IHL 60 bytes: longer than the packet
  EXPECT_FALSE(ParseEchoReply(with_ip + reply, false, true));
  std::string v6 = BuildEchoRequest({true, 1, 2, 3});
  v6[0] = static_cast<char>(129);
  EXPECT_TRUE(ParseEchoReply(v6, true, false));
}

TEST(TcpPingTest, MeasuresConnectRttToLoopbackListener) {
  Listener l;
  PingResult r = TcpPing(Addr("127.0.0.1"), l.port, Fast());
  EXPECT_EQ(r.method, "tcp");
  EXPECT_EQ(r.sent, 5);
  ASSERT_EQ(r.rtts_ms.size(), 5u);
  for (double ms : r.rtts_ms) EXPECT_LT(ms, 400);
  EXPECT_FALSE(r.port_closed);
}

TEST(TcpPingTest, RefusedPortIsReachableHostWithPortClosed) {
  PingResult r = TcpPing(Addr("127.0.0.1"), ClosedPort(), Fast(3));
  EXPECT_EQ(r.sent, 3);
  EXPECT_EQ(r.rtts_ms.size(), 3u);
  EXPECT_TRUE(r.port_closed);
}

TEST(ReachabilityTest, LoopbackTargetsInParallelKeepOrderAndGroups) {
  Listener a, b;
  std::vector<HostToProbe> hosts = {
      {*ParseTarget("127.0.0.1:" + std::to_string(a.port)), TargetGroup::kTarget},
      {*ParseTarget("127.0.0.1:" + std::to_string(ClosedPort())), TargetGroup::kTarget},
      {*ParseTarget("localhost:" + std::to_string(b.port)), TargetGroup::kReference},
  };
  ReachabilityOptions opts;
  opts.ping = Fast(3);
  auto out = ProbeHosts(hosts, opts, SteadyClock::now() + std::chrono::seconds(5));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].name, hosts[0].target.spec);
  EXPECT_EQ(out[0].received, 3);
  EXPECT_DOUBLE_EQ(*out[0].loss_pct, 0);
  EXPECT_TRUE(out[0].rtt_median_ms.has_value());
  EXPECT_TRUE(out[1].port_closed);
  EXPECT_EQ(out[1].received, 3);
  EXPECT_EQ(out[2].group, TargetGroup::kReference);
  EXPECT_EQ(out[2].received, 3);
}

TEST(ReachabilityTest, UnresolvableNameIsReportedNotFatal) {
  ReachabilityOptions opts;
  opts.ping = Fast(2);
  opts.resolve_timeout = milliseconds(1500);
  auto f = ProbeHost({*ParseTarget("no-such-host.invalid"), TargetGroup::kTarget}, opts);
  EXPECT_EQ(f.sent, 0);
  EXPECT_TRUE(f.address.empty());
  EXPECT_NE(f.error.find("no-such-host.invalid"), std::string::npos);
  Snapshot snap;
  snap.network.reachability = ReachabilityFacts{{f}, false};
  auto findings = EvaluateRules(snap, Thresholds());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "net.target.unresolved");
}

// Issue 8 item 21: a series still running at the deadline is "not measured", never a DNS
// failure; and the probe shortens series that could not end before the check's deadline.
TEST(ReachabilityTest, UnfinishedSeriesIsNotADnsFailure) {
  Listener l;
  ReachabilityOptions opts;
  opts.ping.count = 5;
  opts.ping.interval = milliseconds(1000);
  opts.ping.timeout = milliseconds(400);
  auto out =
      ProbeHosts({{*ParseTarget("127.0.0.1:" + std::to_string(l.port)), TargetGroup::kTarget}},
                 opts, SteadyClock::now() + milliseconds(200));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].unfinished);
  Snapshot snap;
  snap.network.reachability = ReachabilityFacts{out, false};
  auto findings = EvaluateRules(snap, Thresholds());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "net.target.unfinished");
  EXPECT_EQ(findings[0].severity, Severity::kInfo);
}

TEST(ReachabilityTest, ProbeShortensASeriesThatCannotEndBeforeTheDeadline) {
  Listener l;
  auto settings = std::make_shared<Settings>();
  settings->net_targets = {"127.0.0.1:" + std::to_string(l.port)};
  settings->net_probe_count = 10;
  settings->net_probe_interval_ms = 400;  // 3.6 s of series
  ProbeContext ctx{settings, SteadyClock::now() + milliseconds(1500)};
  ProbeOutput out = RunReachabilityProbe(ctx);
  ASSERT_EQ(out.state, ProbeState::kOk) << out.reason;
  Snapshot snap;
  out.apply(snap);
  ASSERT_TRUE(snap.network.reachability);
  const TargetProbeFacts& h = snap.network.reachability->hosts.at(0);
  EXPECT_FALSE(h.unfinished) << h.error;
  EXPECT_GE(h.received, 1);
  EXPECT_LT(h.sent, 10);
  EXPECT_DOUBLE_EQ(*h.loss_pct, 0);
}

TEST(ReachabilityTest, OnlyTheImplicitGatewayWithoutAnyAnswerIsInconclusive) {
  PingResult silent;
  silent.sent = 5;
  EXPECT_TRUE(FallbackInconclusive(TargetGroup::kGateway, true, silent));
  EXPECT_FALSE(FallbackInconclusive(TargetGroup::kTarget, true, silent));
  EXPECT_FALSE(FallbackInconclusive(TargetGroup::kReference, true, silent));
  EXPECT_FALSE(FallbackInconclusive(TargetGroup::kGateway, false, silent));  // ICMP was used
  PingResult rst = silent;
  rst.port_closed = true;
  EXPECT_FALSE(FallbackInconclusive(TargetGroup::kGateway, true, rst));
  PingResult one_reply = silent;
  one_reply.rtts_ms = {1.5};
  EXPECT_FALSE(FallbackInconclusive(TargetGroup::kGateway, true, one_reply));
  PingResult nothing_sent;  // e.g. network unreachable: an error, not inconclusive
  EXPECT_FALSE(FallbackInconclusive(TargetGroup::kGateway, true, nothing_sent));

  // The rules: an inconclusive gateway gets neither net.loss nor a localisation verdict.
  TargetProbeFacts gw;
  gw.name = gw.address = "10.0.0.1";
  gw.group = TargetGroup::kGateway;
  gw.method = "tcp-fallback:22";
  gw.sent = 5;
  gw.loss_pct = 100;
  gw.error = kGatewayUnprobed;
  gw.inconclusive = true;
  Snapshot snap;
  snap.network.reachability = ReachabilityFacts{{gw}, true};
  EXPECT_TRUE(EvaluateRules(snap, Thresholds()).empty());
  snap.network.reachability->hosts[0].inconclusive = false;  // as before the fix: crit loss
  auto findings = EvaluateRules(snap, Thresholds());
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].id, "net.loss");
}

// The probe's output for an inconclusive implicit gateway names it and still carries the facts.
// It used to move the facts into the apply function before reading hosts[0] for the reason (g++
// evaluates the arguments right to left): `watch` died on its first tick with SIGSEGV whenever
// the default gateway's series was cut by the tick or fell back to TCP without an answer.
TEST(ReachabilityTest, InconclusiveGatewayIsSkippedNamingItAndKeepsItsFacts) {
  TargetProbeFacts gw;
  gw.name = gw.address = "192.0.2.1";
  gw.group = TargetGroup::kGateway;
  gw.inconclusive = true;
  gw.error = kGatewayUnprobed;
  ProbeOutput out = ReachabilityOutput(ReachabilityFacts{{gw}, true});
  EXPECT_EQ(out.state, ProbeState::kSkipped);
  EXPECT_EQ(out.reason, "default gateway 192.0.2.1 " + std::string(kGatewayUnprobed));
  Snapshot snap;
  ASSERT_TRUE(out.apply);
  out.apply(snap);
  ASSERT_TRUE(snap.network.reachability.has_value());
  ASSERT_EQ(snap.network.reachability->hosts.size(), 1u);
  EXPECT_EQ(snap.network.reachability->hosts[0].name, "192.0.2.1");

  gw.inconclusive = false;
  out = ReachabilityOutput(ReachabilityFacts{{gw}, true});
  EXPECT_EQ(out.state, ProbeState::kOk);
}

// The implicit gateway answered none of 40 pings: the ARP table decides. Real tables
// (tests/fixtures/net/arp/): a router that answers ARP but never ping (Azure's default gateway
// does so by design) is no loss, and no crit `contact_provider` on every check; one that answers
// not even ARP is a loss that says so, also over the TCP fallback; no entry (a link without ARP)
// cannot be told apart: inconclusive.
TEST(ReachabilityTest, SilentGatewayIsJudgedByTheArpTable) {
  const std::string openwrt =
      testing::ReadFileOrDie(testing::FixturePath("net/arp/openwrt_superuser.txt"));
  auto silent = [](const std::string& ip, const std::string& method) {
    TargetProbeFacts gw;
    gw.name = gw.address = ip;
    gw.group = TargetGroup::kGateway;
    gw.method = method;
    gw.sent = 40;
    gw.loss_pct = 100;
    if (method != "icmp-raw") {
      gw.inconclusive = true;
      gw.error = kGatewayUnprobed;
    }
    return gw;
  };
  auto findings_of = [](const TargetProbeFacts& gw) {
    Snapshot snap;
    snap.network.reachability = ReachabilityFacts{{gw}, true};
    return EvaluateRules(snap, Thresholds());
  };

  // Answers ARP on eth0.2: it drops pings. Inconclusive, the skip reason says why, no finding.
  TargetProbeFacts filters = silent("192.168.1.1", "icmp-raw");
  JudgeSilentGateway(filters, FindArpEntry(openwrt, "192.168.1.1", "eth0.2"));
  EXPECT_TRUE(filters.inconclusive);
  EXPECT_EQ(filters.arp_resolved, true);
  EXPECT_EQ(filters.error,
            "answered ARP on eth0.2 when last asked, but none of the 40 probes: it drops them "
            "(cloud routers often never answer ping) or died since; set [network] targets to "
            "measure the path");
  EXPECT_TRUE(findings_of(filters).empty());
  ProbeOutput out = ReachabilityOutput(ReachabilityFacts{{filters}, true});
  EXPECT_EQ(out.state, ProbeState::kSkipped);
  EXPECT_EQ(out.reason, "default gateway 192.168.1.1 " + filters.error);

  // Unresolved (flags 0x0): answers nothing at all. A crit loss naming ARP, over ICMP and over
  // the TCP fallback (which alone was inconclusive before).
  for (const char* method : {"icmp-raw", "tcp-fallback:22"}) {
    TargetProbeFacts dead = silent("192.168.1.67", method);
    JudgeSilentGateway(dead, FindArpEntry(openwrt, "192.168.1.67", "eth0.2"));
    EXPECT_FALSE(dead.inconclusive) << method;
    EXPECT_EQ(dead.arp_resolved, false) << method;
    EXPECT_TRUE(dead.error.empty()) << dead.error;
    auto findings = findings_of(dead);
    ASSERT_FALSE(findings.empty()) << method;
    EXPECT_EQ(findings[0].id, "net.loss");
    EXPECT_EQ(findings[0].severity, Severity::kCrit);
    EXPECT_EQ(findings[0].summary,
              "gateway '192.168.1.67' unreachable: 40 of 40 probes lost, and it does not answer "
              "ARP on eth0.2 either")
        << method;
  }

  // No entry (a TUN or WireGuard link, or /proc/net/arp unreadable): inconclusive.
  TargetProbeFacts unknown = silent("10.9.0.1", "icmp-raw");
  JudgeSilentGateway(unknown, FindArpEntry(openwrt, "10.9.0.1", "wg0"));
  EXPECT_TRUE(unknown.inconclusive);
  EXPECT_FALSE(unknown.arp_resolved.has_value());
  EXPECT_NE(unknown.error.find("no ARP entry"), std::string::npos) << unknown.error;
  EXPECT_TRUE(findings_of(unknown).empty());

  // Left alone: a gateway with one reply, a configured target, an unfinished series.
  TargetProbeFacts answered = silent("192.168.1.67", "icmp-raw");
  answered.received = 1;
  answered.loss_pct = 97.5;
  TargetProbeFacts target = silent("192.168.1.1", "icmp-raw");
  target.group = TargetGroup::kTarget;
  TargetProbeFacts cut = silent("192.168.1.1", "icmp-raw");
  cut.unfinished = cut.inconclusive = true;
  for (TargetProbeFacts* f : {&answered, &target, &cut}) {
    TargetProbeFacts before = *f;
    JudgeSilentGateway(*f, FindArpEntry(openwrt, f->address, "eth0.2"));
    EXPECT_EQ(f->inconclusive, before.inconclusive) << f->name;
    EXPECT_EQ(f->error, before.error) << f->name;
    EXPECT_FALSE(f->arp_resolved.has_value()) << f->name;
  }
}

TEST(ReachabilityTest, GatewayAnsweringRstOnTheFallbackPortIsReachable) {
  ReachabilityOptions opts;
  opts.ping = Fast(2);
  opts.use_icmp = false;
  opts.fallback_tcp_port = ClosedPort();
  TargetProbeFacts f = ProbeHost({*ParseTarget("127.0.0.1"), TargetGroup::kGateway}, opts);
  EXPECT_EQ(f.method, "tcp-fallback:" + std::to_string(opts.fallback_tcp_port));
  EXPECT_FALSE(f.inconclusive);
  EXPECT_TRUE(f.port_closed);
  EXPECT_DOUBLE_EQ(*f.loss_pct, 0);
}

TEST(IcmpPingTest, LoopbackEcho) {
  auto r = IcmpPing(Addr("127.0.0.1"), Fast(3));
  if (!r.ok()) GTEST_SKIP() << "no ICMP socket on this machine: " << r.status().message();
  EXPECT_EQ(r->sent, 3);
  EXPECT_EQ(r->rtts_ms.size(), 3u);
  EXPECT_EQ(r->kernel_timestamps, 3);  // SO_TIMESTAMPNS: RTTs from the kernel's receive time
  for (double ms : r->rtts_ms) EXPECT_GE(ms, 0);
}

TEST(TunPingTest, IcmpDelayAndLossAreMeasured) {
  WithTun([](TunResponder& tun) {
    tun.SetHost(2, HostBehaviour{milliseconds(30), 40, false, {}});
    auto r = IcmpPing(Addr("192.0.2.2"), Fast(5));
    if (!r.ok()) {
      std::printf("skipped inside: %s\n", r.status().message().c_str());
      return;
    }
    EXPECT_EQ(r->sent, 5);
    ASSERT_EQ(r->rtts_ms.size(), 3u);  // 40% of 5 dropped by the responder
    for (double ms : r->rtts_ms) {
      EXPECT_GE(ms, 29.0);
      EXPECT_LT(ms, 400.0);
    }
  });
}

// Replies stamped by the kernel are read at the next send, not as they come: one wake-up per
// probe instead of two, and the RTTs are still the kernel's (the 3 ms the responder waits, not
// the ~20 ms until the reply is read).
TEST(TunPingTest, StampedRepliesAreReadAtTheNextSendWithTheirOwnRtt) {
  WithTun([](TunResponder& tun) {
    tun.SetHost(4, HostBehaviour{milliseconds(3), 0, false, {}});
    PingOptions o;
    o.count = 20;
    o.interval = milliseconds(20);
    o.timeout = milliseconds(400);
    rusage before{}, after{};
    getrusage(RUSAGE_THREAD, &before);
    auto r = IcmpPing(Addr("192.0.2.4"), o);
    getrusage(RUSAGE_THREAD, &after);
    if (!r.ok()) {
      std::printf("skipped inside: %s\n", r.status().message().c_str());
      return;
    }
    ASSERT_EQ(r->rtts_ms.size(), 20u);
    EXPECT_EQ(r->kernel_timestamps, 20);
    // Read at the next send, every RTT would be ~20 ms or more; the kernel's are the responder's
    // 3 ms. The median is judged, not each one: on a loaded machine the responder thread itself is
    // sometimes late (CI once measured one reply at 15.4 ms), which is a late reply, not a late
    // read.
    std::vector<double> sorted = r->rtts_ms;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_LT(sorted[sorted.size() / 2], 15.0) << "median RTT";
    for (double ms : r->rtts_ms) {
      EXPECT_GE(ms, 2.9);
      EXPECT_LT(ms, 400.0);  // the timeout
    }
    // Woken for each reply as well as for each send, this was about 40.
    EXPECT_LE(after.ru_nvcsw - before.ru_nvcsw, 28) << "voluntary context switches";
  });
}

TEST(TunPingTest, TcpSynAckDelayAndRst) {
  WithTun([](TunResponder& tun) {
    tun.SetHost(3, HostBehaviour{milliseconds(25), 0, false, {81}});
    PingResult open = TcpPing(Addr("192.0.2.3"), 80, Fast(4));
    EXPECT_EQ(open.sent, 4);
    ASSERT_EQ(open.rtts_ms.size(), 4u) << open.last_error;
    for (double ms : open.rtts_ms) EXPECT_GE(ms, 24.0);
    EXPECT_FALSE(open.port_closed);
    PingResult closed = TcpPing(Addr("192.0.2.3"), 81, Fast(2));
    EXPECT_EQ(closed.rtts_ms.size(), 2u);
    EXPECT_TRUE(closed.port_closed);
  });
}

TEST(TunPingTest, SilentHostIsAllLossWithinTheBound) {
  WithTun([](TunResponder& tun) {
    tun.SetHost(99, HostBehaviour{milliseconds(0), 0, true, {}});
    auto start = SteadyClock::now();
    PingResult tcp = TcpPing(Addr("192.0.2.99"), 80, Fast(3));
    double s = std::chrono::duration<double>(SteadyClock::now() - start).count();
    EXPECT_EQ(tcp.sent, 3);
    EXPECT_TRUE(tcp.rtts_ms.empty());
    EXPECT_LT(s, 2.0);  // bound: (count-1)*interval + timeout, not count*timeout
  });
}

// give_up_silent: a series with no answer that long after its first probe sends no more and stops
// waiting; the others of the same call (and a host that answers) get their whole series.
TEST(TunPingTest, SilentSeriesIsGivenUpOnlyWhereAllowed) {
  WithTun([](TunResponder& tun) {
    tun.SetHost(96, HostBehaviour{milliseconds(0), 0, true, {}});   // drops everything
    tun.SetHost(95, HostBehaviour{milliseconds(2), 0, false, {}});  // answers
    PingOptions o;
    o.count = 30;
    o.interval = milliseconds(10);
    o.timeout = milliseconds(400);
    o.give_up_silent = milliseconds(100);
    auto start = SteadyClock::now();
    auto alone = IcmpPingMany({Addr("192.0.2.96")}, o);
    double alone_s = std::chrono::duration<double>(SteadyClock::now() - start).count();
    ASSERT_EQ(alone.size(), 1u);
    if (!alone[0].ok()) {
      std::printf("skipped inside: %s\n", alone[0].status().message().c_str());
      return;
    }
    EXPECT_TRUE(alone[0]->gave_up_silent);
    EXPECT_TRUE(alone[0]->rtts_ms.empty());
    // Probes go out at 0, 10, ... ms; at 100 ms the series stops: 10 or 11 sent, not 30 (fewer
    // when this thread was held off the CPU: overdue probes are not sent once it is past 100 ms).
    EXPECT_GE(alone[0]->sent, 1);
    EXPECT_LE(alone[0]->sent, 12);
    // Not given up before its time, and not the whole series (290 + 400 ms).
    EXPECT_GE(alone_s, 0.099);
    EXPECT_LT(alone_s, 0.6);

    auto many = IcmpPingMany({Addr("192.0.2.96"), Addr("192.0.2.96"), Addr("192.0.2.95")}, o,
                             {true, false, true});
    ASSERT_EQ(many.size(), 3u);
    ASSERT_TRUE(many[0].ok() && many[1].ok() && many[2].ok());
    EXPECT_TRUE(many[0]->gave_up_silent);
    EXPECT_LE(many[0]->sent, 12);
    EXPECT_FALSE(many[1]->gave_up_silent);  // not allowed: the whole series, all lost
    EXPECT_EQ(many[1]->sent, 30);
    EXPECT_TRUE(many[1]->rtts_ms.empty());
    EXPECT_FALSE(many[2]->gave_up_silent);  // allowed, but it answers
    EXPECT_EQ(many[2]->sent, 30);
    EXPECT_EQ(many[2]->rtts_ms.size(), 30u);

    PingResult tcp = TcpPing(Addr("192.0.2.96"), 80, o);
    EXPECT_TRUE(tcp.gave_up_silent);
    EXPECT_LE(tcp.sent, 12);
    EXPECT_TRUE(tcp.rtts_ms.empty());
    PingResult tcp_answered = TcpPing(Addr("192.0.2.95"), 81, o);  // RST: an answer
    EXPECT_FALSE(tcp_answered.gave_up_silent);
    EXPECT_EQ(tcp_answered.sent, 30);
  });
}

// The reachability layer gives up on the implicit gateway only: a silent configured target is
// measured to the end (100% loss of the whole series).
TEST(TunPingTest, OnlyTheImplicitGatewayIsGivenUpWhenSilent) {
  WithTun([](TunResponder& tun) {
    tun.SetHost(94, HostBehaviour{milliseconds(0), 0, true, {}});
    ReachabilityOptions opts;
    opts.ping.count = 30;
    opts.ping.interval = milliseconds(10);
    opts.ping.timeout = milliseconds(300);
    opts.gateway_give_up_silent = milliseconds(100);
    auto facts = ProbeHosts({{*ParseTarget("192.0.2.94"), TargetGroup::kGateway},
                             {*ParseTarget("192.0.2.94"), TargetGroup::kReference}},
                            opts, SteadyClock::now() + std::chrono::seconds(5));
    ASSERT_EQ(facts.size(), 2u);
    EXPECT_LE(facts[0].sent, 5) << facts[0].method;  // quiet after 5 (gateway_quiet_after)
    EXPECT_GE(facts[0].sent, 1);
    EXPECT_EQ(facts[0].received, 0);
    EXPECT_EQ(facts[1].sent, 30) << facts[1].method;
    EXPECT_DOUBLE_EQ(*facts[1].loss_pct, 100);
  });
}

// clean_after: a series every probe of which was answered in time up to that probe ends there;
// one lost probe and the whole series runs, and a series not allowed to stop runs to the end.
// The stop is judged when a probe is due, so a reply the responder thread sent late on a loaded
// machine moves it a probe or two later: at or after clean_after, always before the end.
TEST(TunPingTest, CleanSeriesEndsAtCleanAfterOnlyWhereAllowed) {
  WithTun([](TunResponder& tun) {
    tun.SetHost(91, HostBehaviour{milliseconds(1), 0, false, {}});   // answers every probe
    tun.SetHost(90, HostBehaviour{milliseconds(1), 10, false, {}});  // drops the 10th and 20th
    PingOptions o;
    o.count = 20;
    o.interval = milliseconds(20);
    o.timeout = milliseconds(300);
    o.clean_after = 10;
    auto many = IcmpPingMany({Addr("192.0.2.91"), Addr("192.0.2.90"), Addr("192.0.2.91")}, o,
                             {true, true, false});
    ASSERT_EQ(many.size(), 3u);
    if (!many[0].ok()) {
      std::printf("skipped inside: %s\n", many[0].status().message().c_str());
      return;
    }
    ASSERT_TRUE(many[1].ok() && many[2].ok());
    EXPECT_TRUE(many[0]->stopped_clean);
    EXPECT_GE(many[0]->sent, 10);
    EXPECT_LT(many[0]->sent, 20);
    EXPECT_EQ(many[0]->rtts_ms.size(), static_cast<size_t>(many[0]->sent));
    EXPECT_FALSE(many[1]->stopped_clean);  // its 10th probe was lost: the whole series
    EXPECT_EQ(many[1]->sent, 20);
    EXPECT_EQ(many[1]->rtts_ms.size(), 18u);
    EXPECT_FALSE(many[2]->stopped_clean);  // clean, but not allowed to stop
    EXPECT_EQ(many[2]->sent, 20);
    EXPECT_EQ(many[2]->rtts_ms.size(), 20u);

    PingResult tcp = TcpPing(Addr("192.0.2.91"), 80, o);
    EXPECT_TRUE(tcp.stopped_clean);
    EXPECT_GE(tcp.sent, 10);
    EXPECT_LT(tcp.sent, 20);
    EXPECT_EQ(tcp.rtts_ms.size(), static_cast<size_t>(tcp.sent));
    PingResult tcp_lossy = TcpPing(Addr("192.0.2.90"), 80, o);
    EXPECT_FALSE(tcp_lossy.stopped_clean);
    EXPECT_EQ(tcp_lossy.sent, 20);
  });
}

// quiet_after: from that probe on a series with no reply yet sends nothing (its slots pass
// unsent, not lost); the first reply, however late, lets the slots due after it go out. A series
// not allowed to cut short sends every probe.
TEST(TunPingTest, QuietSeriesListensBeforeSendingMore) {
  WithTun([](TunResponder& tun) {
    tun.SetHost(88, HostBehaviour{milliseconds(0), 0, true, {}});     // drops everything
    tun.SetHost(87, HostBehaviour{milliseconds(150), 0, false, {}});  // a slow router
    PingOptions o;
    o.count = 30;
    o.interval = milliseconds(10);
    o.timeout = milliseconds(400);
    o.quiet_after = 3;
    auto start = SteadyClock::now();
    auto many = IcmpPingMany({Addr("192.0.2.88"), Addr("192.0.2.87"), Addr("192.0.2.88")}, o,
                             {true, true, false});
    double s = std::chrono::duration<double>(SteadyClock::now() - start).count();
    ASSERT_EQ(many.size(), 3u);
    if (!many[0].ok()) {
      std::printf("skipped inside: %s\n", many[0].status().message().c_str());
      return;
    }
    ASSERT_TRUE(many[1].ok() && many[2].ok());
    EXPECT_EQ(many[0]->sent, 3);  // silent: three probes, then only listening
    EXPECT_TRUE(many[0]->rtts_ms.empty());
    EXPECT_FALSE(many[0]->gave_up_silent);  // no give_up_silent: not given up, just quiet
    // The slow router: three probes, its first reply at ~150 ms, then the slots due after it
    // (~15 of the 27 left); every probe sent is answered, none counted lost for the pause.
    EXPECT_GT(many[1]->sent, 6);
    EXPECT_LT(many[1]->sent, 25);
    EXPECT_EQ(many[1]->rtts_ms.size(), static_cast<size_t>(many[1]->sent));
    for (double ms : many[1]->rtts_ms) EXPECT_GE(ms, 149.0);
    EXPECT_EQ(many[2]->sent, 30);  // not allowed: the whole series, all lost
    EXPECT_TRUE(many[2]->rtts_ms.empty());
    EXPECT_LT(s, 1.5);  // the whole series' bound: 290 ms + the 400 ms timeout, with slack

    PingResult tcp = TcpPing(Addr("192.0.2.88"), 80, o);
    EXPECT_EQ(tcp.sent, 3);
    EXPECT_TRUE(tcp.rtts_ms.empty());
    PingResult tcp_slow = TcpPing(Addr("192.0.2.87"), 80, o);
    EXPECT_GT(tcp_slow.sent, 6);
    EXPECT_LT(tcp_slow.sent, 25);
    EXPECT_EQ(tcp_slow.rtts_ms.size(), static_cast<size_t>(tcp_slow.sent));
  });
}

// The reachability layer stops only the implicit gateway's clean series (at half of it); a
// configured reference to the same host gets all its probes.
TEST(TunPingTest, OnlyTheImplicitGatewayStopsWhenClean) {
  WithTun([](TunResponder& tun) {
    tun.SetHost(89, HostBehaviour{milliseconds(1), 0, false, {}});
    ReachabilityOptions opts;
    opts.ping.count = 24;
    opts.ping.interval = milliseconds(20);
    opts.ping.timeout = milliseconds(300);
    EXPECT_EQ(GatewayCleanAfter(opts), 12);
    auto facts = ProbeHosts({{*ParseTarget("192.0.2.89"), TargetGroup::kGateway},
                             {*ParseTarget("192.0.2.89"), TargetGroup::kReference}},
                            opts, SteadyClock::now() + std::chrono::seconds(5));
    ASSERT_EQ(facts.size(), 2u);
    EXPECT_GE(facts[0].sent, 12) << facts[0].method;
    EXPECT_LT(facts[0].sent, 24);
    EXPECT_EQ(facts[0].received, facts[0].sent);
    EXPECT_DOUBLE_EQ(*facts[0].loss_pct, 0);
    EXPECT_EQ(facts[1].sent, 24) << facts[1].method;
    EXPECT_EQ(facts[1].received, 24);

    opts.gateway_stop_clean = false;
    EXPECT_EQ(GatewayCleanAfter(opts), 0);
    opts.gateway_stop_clean = true;
    opts.ping.count = 9;  // too short a series to halve
    EXPECT_EQ(GatewayCleanAfter(opts), 0);
  });
}

// Without ICMP, the implicit gateway is probed on the TCP fallback port; a router that drops
// those SYNs silently is "could not be probed", not "unreachable". A configured target that
// stays silent is still 100% loss, and a gateway that answers RST is reachable.
TEST(TunPingTest, SilentGatewayOnTcpFallbackIsInconclusiveNotLost) {
  WithTun([](TunResponder& tun) {
    tun.SetHost(98, HostBehaviour{milliseconds(0), 0, true, {}});     // drops everything
    tun.SetHost(97, HostBehaviour{milliseconds(0), 0, false, {22}});  // RST on port 22
    ReachabilityOptions opts;
    opts.ping = Fast(2);
    opts.use_icmp = false;
    TargetProbeFacts gw = ProbeHost({*ParseTarget("192.0.2.98"), TargetGroup::kGateway}, opts);
    EXPECT_EQ(gw.method, "tcp-fallback:22");
    EXPECT_EQ(gw.sent, 2);
    EXPECT_TRUE(gw.inconclusive);
    EXPECT_EQ(gw.error, "could not be probed (no ICMP socket; TCP fallback unanswered)");
    TargetProbeFacts target = ProbeHost({*ParseTarget("192.0.2.98"), TargetGroup::kTarget}, opts);
    EXPECT_FALSE(target.inconclusive);
    EXPECT_DOUBLE_EQ(*target.loss_pct, 100);
    TargetProbeFacts answering =
        ProbeHost({*ParseTarget("192.0.2.97"), TargetGroup::kGateway}, opts);
    EXPECT_FALSE(answering.inconclusive);
    EXPECT_TRUE(answering.port_closed);
    EXPECT_DOUBLE_EQ(*answering.loss_pct, 0);

    Snapshot snap;
    snap.network.reachability = ReachabilityFacts{{gw}, true};
    for (const auto& f : EvaluateRules(snap, Thresholds())) {
      ADD_FAILURE() << "unexpected finding " << f.id << ": " << f.summary;
    }
    snap.network.reachability = ReachabilityFacts{{target}, false};
    auto findings = EvaluateRules(snap, Thresholds());
    ASSERT_FALSE(findings.empty());
    EXPECT_EQ(findings[0].id, "net.loss");
    EXPECT_EQ(findings[0].severity, Severity::kCrit);
  });
}

// The localisation verdict end to end: real probes, then the rules.
TEST(TunPingTest, LocalizeVerdictFromProbedHosts) {
  WithTun([](TunResponder& tun) {
    tun.SetHost(10, HostBehaviour{milliseconds(1), 0, false, {}});    // healthy target
    tun.SetHost(11, HostBehaviour{milliseconds(150), 0, false, {}});  // slow target
    tun.SetHost(20, HostBehaviour{milliseconds(2), 0, false, {}});    // healthy reference
    Thresholds t;
    t.Set("net.latency.high", "warn_rtt_ms", 100);
    ReachabilityOptions opts;
    opts.ping = Fast(3);
    std::vector<HostToProbe> hosts = {
        {*ParseTarget("192.0.2.10:80"), TargetGroup::kTarget},
        {*ParseTarget("192.0.2.11:80"), TargetGroup::kTarget},
        {*ParseTarget("192.0.2.20:443"), TargetGroup::kReference},
    };
    Snapshot snap;
    snap.network.reachability = ReachabilityFacts{
        ProbeHosts(hosts, opts, SteadyClock::now() + std::chrono::seconds(5)), false};
    auto findings = EvaluateRules(snap, t);
    const Finding* loc = nullptr;
    const Finding* slow = nullptr;
    for (const auto& f : findings) {
      if (f.id == "net.localize") loc = &f;
      if (f.id == "net.latency.high") slow = &f;
    }
    ASSERT_NE(loc, nullptr);
    EXPECT_EQ(std::get<std::string>(loc->evidence[0].value), "target");
    ASSERT_NE(slow, nullptr);
    EXPECT_EQ(slow->subject, "192.0.2.11:80");
  });
}

}  // namespace
}  // namespace gpudoctor
