#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/config.h"
#include "net/neighbor_table.h"
#include "net/route_table.h"
#include "net/rtt_stats.h"
#include "net/target.h"
#include "rules/thresholds.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using ::testing::HasSubstr;

TEST(NetTargetTest, ParsesIcmpAndTcpForms) {
  auto a = ParseTarget("10.0.0.5");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "10.0.0.5");
  EXPECT_EQ(a->method, ProbeMethod::kIcmp);
  EXPECT_TRUE(a->numeric);
  EXPECT_FALSE(a->port);

  auto b = ParseTarget(" storage-01.cluster.local:2049 ");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->spec, "storage-01.cluster.local:2049");
  EXPECT_EQ(b->host, "storage-01.cluster.local");
  EXPECT_EQ(*b->port, 2049);
  EXPECT_EQ(b->method, ProbeMethod::kTcp);
  EXPECT_FALSE(b->numeric);

  auto c = ParseTarget("[fd00::5]:22");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->host, "fd00::5");
  EXPECT_EQ(*c->port, 22);

  auto d = ParseTarget("::1");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->method, ProbeMethod::kIcmp);
  EXPECT_TRUE(d->numeric);
}

TEST(NetTargetTest, BadEntriesNameTheEntryAndTheProblem) {
  struct Case {
    const char* spec;
    const char* why;
  } cases[] = {
      {"", "empty entry"},
      {"host:", "empty port"},
      {"host:0", "out of range"},
      {"host:65536", "out of range"},
      {"host:99999999999999999999", "out of range"},
      {"host:-1", "not a number"},
      {"host:+22", "not a number"},
      {"host:ssh", "not a number"},
      {"bad host", "invalid character ' '"},
      {"a..b", "empty label"},
      {"-a.b", "starts or ends with '-'"},
      {"300.1.2.3", "malformed IPv4"},
      {"1.2.3", "malformed IPv4"},
      {"fd00::zz", "malformed IPv6"},
      {"[fd00::1", "missing ']'"},
      {"[fd00::1]x", "expected ':port'"},
      {"[nothost]:22", "malformed IPv6"},
      {":22", "empty host"},
  };
  for (const auto& c : cases) {
    auto r = ParseTarget(c.spec);
    ASSERT_FALSE(r.ok()) << c.spec;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr(std::string("target '") + c.spec + "'"));
    EXPECT_THAT(r.status().message(), HasSubstr(c.why)) << c.spec;
  }
  std::string long_label(64, 'a');
  EXPECT_FALSE(ParseTarget(long_label + ".example").ok());
}

// Issue 8 item 9: URL targets.
TEST(NetTargetTest, ParsesHttpAndHttpsUrls) {
  auto a = ParseTarget("http://api.example:8080/healthz?full=1");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->method, ProbeMethod::kHttp);
  EXPECT_TRUE(a->IsUrl());
  EXPECT_EQ(a->host, "api.example");
  EXPECT_EQ(*a->port, 8080);
  EXPECT_EQ(a->path, "/healthz?full=1");
  EXPECT_EQ(a->Url(), "http://api.example:8080/healthz?full=1");

  auto b = ParseTarget("HTTPS://10.0.0.5");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->method, ProbeMethod::kHttps);
  EXPECT_EQ(*b->port, 443);  // the scheme's port
  EXPECT_EQ(b->path, "/");
  EXPECT_TRUE(b->numeric);
  EXPECT_EQ(b->spec, "HTTPS://10.0.0.5");  // as written, for the report
  EXPECT_EQ(b->Url(), "https://10.0.0.5:443/");

  auto c = ParseTarget("https://[fd00::5]:8443?x=1");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->host, "fd00::5");
  EXPECT_EQ(c->path, "/?x=1");
  EXPECT_EQ(c->Url(), "https://[fd00::5]:8443/?x=1");
  EXPECT_EQ(*ParseTarget("http://h")->port, 80);
  EXPECT_FALSE(ParseTarget("storage:2049")->IsUrl());
}

// A token in a URL target's query never reaches reports, labels or the history; the request
// itself keeps it.
TEST(NetTargetTest, DisplayNameHidesSecretQueryValues) {
  auto t = ParseTarget("https://svc:8443/health?Token=abc123&verbose=1&api_key=k&sig=s");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->DisplayName(),
            "https://svc:8443/health?Token=<redacted>&verbose=1&api_key=<redacted>&sig=<redacted>");
  EXPECT_NE(t->Url().find("abc123"), std::string::npos);
  auto plain = ParseTarget("http://svc/health?verbose=1");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->DisplayName(), "http://svc/health?verbose=1");
  auto host = ParseTarget("10.0.0.1");
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host->DisplayName(), "10.0.0.1");
}

TEST(NetTargetTest, BadUrlsNameTheEntryAndTheProblem) {
  struct Case {
    const char* spec;
    const char* why;
  } cases[] = {
      {"ftp://files.example/", "unsupported scheme 'ftp'"},
      {"http://", "empty host"},
      {"http:///path", "empty host"},
      {"http://user:secret@api/", "user:password@"},
      {"http://api/#frag", "fragment"},
      {"http://api/a b", "visible ASCII"},
      {"http://api:0/", "out of range"},
      {"http://api:http/", "not a number"},
      {"http://fd00::5/", "in brackets"},
      {"http://bad_host!/", "invalid character '!'"},
      {"api.example/healthz", "needs http:// or https://"},
  };
  for (const auto& c : cases) {
    auto r = ParseTarget(c.spec);
    ASSERT_FALSE(r.ok()) << c.spec;
    EXPECT_THAT(r.status().message(), HasSubstr(std::string("target '") + c.spec + "'"));
    EXPECT_THAT(r.status().message(), HasSubstr(c.why)) << c.spec;
  }
  EXPECT_FALSE(ParseTarget("http://api/" + std::string(2048, 'p')).ok());
}

TEST(NetTargetTest, HttpAndJitterSettingsFromTheNetworkTable) {
  Settings s;
  auto ok = ApplyConfigText(R"([network]
targets = ["https://api.example/healthz", "10.0.0.1"]
http_count = 7
http_interval_ms = 100
http_timeout_ms = 1500
http_tls_verify = false
http_slow_ms = 250
jitter_ms = 5
)",
                            "net.toml", s);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(s.net_http_count, 7);
  EXPECT_EQ(s.net_http_interval_ms, 100);
  EXPECT_EQ(s.net_http_timeout_ms, 1500);
  EXPECT_FALSE(s.net_http_tls_verify);
  Thresholds t(s.thresholds);
  EXPECT_DOUBLE_EQ(t.Get("net.http.slow", "warn_ttfb_ms"), 250);
  EXPECT_DOUBLE_EQ(t.Get("net.target.jitter", "warn_jitter_ms"), 5);
  // The shorthands' documented defaults are the catalogue's.
  for (const auto& spec : ConfigSchema()) {
    if (spec.path == std::vector<std::string>{"network", "jitter_ms"}) {
      EXPECT_DOUBLE_EQ(std::get<double>(spec.default_value),
                       Thresholds().Get("net.target.jitter", "warn_jitter_ms"));
    }
    if (spec.path == std::vector<std::string>{"network", "http_slow_ms"}) {
      EXPECT_DOUBLE_EQ(std::get<double>(spec.default_value),
                       Thresholds().Get("net.http.slow", "warn_ttfb_ms"));
    }
  }
  Settings bad;
  EXPECT_FALSE(ApplyConfigText("[network]\nhttp_timeout_ms = 0\n", "b.toml", bad).ok());
  EXPECT_FALSE(ApplyConfigText("[network]\njitter_ms = -1\n", "b.toml", bad).ok());
  EXPECT_FALSE(ApplyConfigText("[network]\ntargets = [\"http://u:p@h/\"]\n", "b.toml", bad).ok());
}

TEST(NetTargetTest, ParseTargetsFailsOnFirstBadEntry) {
  auto r = ParseTargets({"10.0.0.1", "ok:80", "x:70000", "also bad"});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("'x:70000'"));
  auto ok = ParseTargets({"10.0.0.1", "ok:80"});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), 2u);
}

TEST(NetTargetTest, ResolvesNumericAndLocalhost) {
  auto t = ParseTarget("127.0.0.1:80");
  ASSERT_TRUE(t.ok());
  auto a = ResolveTarget(*t, std::chrono::milliseconds(500));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->family(), AF_INET);
  EXPECT_EQ(AddressToString(*a), "127.0.0.1");
  auto six = ResolveTarget(*ParseTarget("::1"), std::chrono::milliseconds(500));
  ASSERT_TRUE(six.ok());
  EXPECT_EQ(AddressToString(*six), "::1");
  auto local = ResolveTarget(*ParseTarget("localhost"), std::chrono::milliseconds(2000));
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  EXPECT_THAT(AddressToString(*local), ::testing::AnyOf("127.0.0.1", "::1"));
}

TEST(NetTargetTest, UnresolvableNameIsAnErrorNamingTheHost) {
  // .invalid is reserved (RFC 6761) and never resolves; with no DNS here it fails fast or times
  // out — either way an error naming the host, not a crash.
  auto r = ResolveTarget(*ParseTarget("no-such-host.invalid"), std::chrono::milliseconds(1500));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("no-such-host.invalid"));
}

TEST(NetTargetTest, ConfigNetworkTableAppliesAndRejectsBadEntries) {
  Settings s;
  auto ok = ApplyConfigText(R"([network]
targets = ["10.0.0.1", "storage:2049"]
references = ["192.0.2.10"]
probe_count = 3
probe_interval_ms = 50
known_gpu_users = ["slurm", "1000"]
)",
                            "net.toml", s);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(s.net_targets, (std::vector<std::string>{"10.0.0.1", "storage:2049"}));
  EXPECT_EQ(s.net_references, (std::vector<std::string>{"192.0.2.10"}));
  EXPECT_EQ(s.net_probe_count, 3);
  EXPECT_EQ(s.net_probe_interval_ms, 50);
  EXPECT_EQ(s.net_known_gpu_users.size(), 2u);

  Settings s2;
  auto bad = ApplyConfigText("[network]\ntargets = [\"ok\", \"nfs:0\"]\n", "net.toml", s2);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("network.targets"));
  EXPECT_THAT(bad.status().message(), HasSubstr("'nfs:0'"));
  Settings s3;
  auto range = ApplyConfigText("[network]\nprobe_count = 0\n", "net.toml", s3);
  EXPECT_FALSE(range.ok());
}

TEST(RttStatsTest, LossPercentilesAndJitter) {
  RttStats s = ComputeRttStats(5, {10, 30, 20, 40});
  EXPECT_EQ(s.sent, 5);
  EXPECT_EQ(s.received, 4);
  EXPECT_DOUBLE_EQ(*s.loss_pct, 20);
  EXPECT_DOUBLE_EQ(*s.min_ms, 10);
  EXPECT_DOUBLE_EQ(*s.max_ms, 40);
  EXPECT_DOUBLE_EQ(*s.median_ms, 25);
  EXPECT_DOUBLE_EQ(*s.p95_ms, 40);
  EXPECT_DOUBLE_EQ(*s.jitter_ms, (20.0 + 10 + 20) / 3);

  RttStats odd = ComputeRttStats(3, {5, 1, 3});
  EXPECT_DOUBLE_EQ(*odd.median_ms, 3);
  EXPECT_FALSE(ComputeRttStats(3, {7}).jitter_ms);
}

TEST(RttStatsTest, NothingReceivedOrSent) {
  RttStats lost = ComputeRttStats(5, {});
  EXPECT_DOUBLE_EQ(*lost.loss_pct, 100);
  EXPECT_FALSE(lost.median_ms);
  RttStats none = ComputeRttStats(0, {});
  EXPECT_FALSE(none.loss_pct);
  // Garbage RTTs are ignored, and never more replies than probes.
  RttStats junk = ComputeRttStats(2, {-1, 1.0 / 0.0, 4, 5, 6});
  EXPECT_EQ(junk.received, 2);
  EXPECT_DOUBLE_EQ(*junk.loss_pct, 0);
}

TEST(RouteTableTest, PicksLowestMetricDefaultRoute) {
  const char* text =
      "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
      "eth1\t00000000\t0101A8C0\t0003\t0\t0\t200\t00000000\t0\t0\t0\n"
      "eth0\t00000000\t010200C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
      "eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";
  auto r = ParseDefaultRoute(text);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->iface, "eth0");
  EXPECT_EQ(r->gateway, "192.0.2.1");
  EXPECT_EQ(r->metric, 100);
}

TEST(RouteTableTest, NoDefaultRouteOrGarbage) {
  EXPECT_FALSE(ParseDefaultRoute(""));
  EXPECT_FALSE(
      ParseDefaultRoute("Iface\tDestination\n"
                        "eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"));
  // A down (flags without UP) default route and a garbled line are ignored.
  EXPECT_FALSE(
      ParseDefaultRoute("Iface\n"
                        "eth0\t00000000\t010200C0\t0002\t0\t0\t0\t00000000\t0\t0\t0\n"
                        "eth0\t00000000\tZZZZ\t0003\t0\t0\t0\t00000000\n"));
}

// /proc/net/arp as real hosts print it (tests/fixtures/net/arp/).
TEST(NeighborTableTest, FindsTheEntryAndItsStateInRealTables) {
  const std::string openwrt =
      testing::ReadFileOrDie(testing::FixturePath("net/arp/openwrt_superuser.txt"));
  auto gw = FindArpEntry(openwrt, "192.168.1.1", "eth0.2");
  ASSERT_TRUE(gw);
  EXPECT_TRUE(gw->complete());
  EXPECT_EQ(gw->flags, 0x2u);
  EXPECT_EQ(gw->hw_address, "00:1f:90:XX:XX:XX");
  EXPECT_EQ(gw->device, "eth0.2");
  auto unresolved = FindArpEntry(openwrt, "192.168.1.67", "");
  ASSERT_TRUE(unresolved);
  EXPECT_FALSE(unresolved->complete());
  EXPECT_EQ(unresolved->hw_address, "00:00:00:00:00:00");
  EXPECT_FALSE(FindArpEntry(openwrt, "192.168.1.6", ""));  // no prefix match
  EXPECT_FALSE(FindArpEntry(openwrt, "192.168.1", ""));

  // proc(5)'s example: a published proxy entry (0xc) is this host answering, not the neighbour.
  const std::string manpage =
      testing::ReadFileOrDie(testing::FixturePath("net/arp/proc_5_manpage.txt"));
  EXPECT_TRUE(FindArpEntry(manpage, "192.168.0.50", "eth0"));
  EXPECT_FALSE(FindArpEntry(manpage, "192.168.0.250", "eth0"));
}

TEST(NeighborTableTest, TheRoutesDeviceWinsAndGarbageIsSkipped) {
  const std::string text =
      "IP address       HW type     Flags       HW address            Mask     Device\n"
      "10.0.0.1         0x1         0x0         00:00:00:00:00:00     *        eth1\n"
      "10.0.0.1         0x1         0x2         02:00:00:00:00:01     *        eth0\n"
      "10.0.0.1 0x1 zz 02:00:00:00:00:02 * eth2\n"
      "10.0.0.1 0x1\n";
  EXPECT_EQ(FindArpEntry(text, "10.0.0.1", "eth0")->device, "eth0");
  EXPECT_TRUE(FindArpEntry(text, "10.0.0.1", "eth0")->complete());
  EXPECT_EQ(FindArpEntry(text, "10.0.0.1", "")->device, "eth1");  // the first, without a device
  EXPECT_EQ(FindArpEntry(text, "10.0.0.1", "eth9")->device, "eth1");
  EXPECT_FALSE(FindArpEntry("", "10.0.0.1", ""));
  EXPECT_FALSE(FindArpEntry("garbage", "garbage", ""));
}

}  // namespace
}  // namespace gpudoctor
