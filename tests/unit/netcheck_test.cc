// netcheck's verdict (issue 25 section 4): own network, the server's name, the server, the path,
// or nothing wrong, from probe results alone.
#include "net/netcheck.h"

#include <gtest/gtest.h>

namespace gpudoctor {
namespace {

TargetProbeFacts Host(std::string name, TargetGroup g, double loss, double rtt) {
  TargetProbeFacts f;
  f.name = std::move(name);
  f.group = g;
  f.address = "192.0.2.1";
  f.method = "tcp";
  f.sent = 20;
  f.received = static_cast<int>(20 * (100 - loss) / 100);
  f.loss_pct = loss;
  if (f.received > 0) f.rtt_median_ms = rtt;
  return f;
}

constexpr auto S = TargetGroup::kTarget;
constexpr auto R = TargetGroup::kReference;

TEST(NetcheckTest, Verdicts) {
  auto verdict = [](std::vector<TargetProbeFacts> v) { return JudgeNetcheck(v).verdict; };
  // Everything fine.
  EXPECT_EQ(verdict({Host("srv:443", S, 0, 30), Host("srv", S, 0, 29), Host("a:443", R, 0, 10),
                     Host("b:443", R, 0, 12)}),
            NetcheckVerdict::kNone);
  // The references fail too: the user's own network.
  EXPECT_EQ(verdict({Host("srv:443", S, 60, 30), Host("a:443", R, 100, 0), Host("b:443", R, 50, 9),
                     Host("c:443", R, 0, 10)}),
            NetcheckVerdict::kOwnNetwork);
  // The host answers ICMP, the service does not: the server.
  EXPECT_EQ(verdict({Host("srv:443", S, 100, 0), Host("srv", S, 0, 29), Host("a:443", R, 0, 10)}),
            NetcheckVerdict::kServer);
  // Refused (RST): the host is there, the service is not.
  auto refused = Host("srv:443", S, 0, 1);
  refused.port_closed = true;
  refused.http_failed_pct = std::nullopt;
  auto j = JudgeNetcheck({refused, Host("a:443", R, 0, 10)});
  EXPECT_EQ(j.verdict, NetcheckVerdict::kServer);
  EXPECT_NE(j.headline.find("connection refused"), std::string::npos) << j.headline;
  auto ref_refused = Host("a:443", R, 0, 10);
  ref_refused.port_closed = true;  // a reference that refuses still proves the network works
  EXPECT_EQ(verdict({Host("srv:443", S, 0, 30), ref_refused}), NetcheckVerdict::kNone);
  // Slow or lossy everywhere to the server while references are fine: the path.
  EXPECT_EQ(verdict({Host("srv:443", S, 35, 40), Host("srv", S, 30, 40), Host("a:443", R, 0, 10)}),
            NetcheckVerdict::kPath);
  EXPECT_EQ(verdict({Host("srv:443", S, 0, 450), Host("srv", S, 0, 440), Host("a:443", R, 0, 10)}),
            NetcheckVerdict::kPath);
  // The name does not resolve.
  auto unresolved = Host("nosuch.example:443", S, 0, 0);
  unresolved.address.clear();
  unresolved.sent = 0;
  unresolved.error = "Name or service not known";
  j = JudgeNetcheck({unresolved, Host("a:443", R, 0, 10)});
  EXPECT_EQ(j.verdict, NetcheckVerdict::kServerName);
  EXPECT_NE(j.headline.find("does not resolve"), std::string::npos);
}

TEST(NetcheckTest, HostsProbeTheServiceTheBareHostAndReferences) {
  auto server = ParseTarget("192.0.2.7:8443");
  ASSERT_TRUE(server.ok());
  auto refs = ParseTargets({"223.5.5.5:443"});
  ASSERT_TRUE(refs.ok());
  auto hosts = NetcheckHosts(*server, *refs);
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[0].target.method, ProbeMethod::kTcp);
  EXPECT_EQ(hosts[1].target.method, ProbeMethod::kIcmp);
  EXPECT_EQ(hosts[1].target.host, "192.0.2.7");
  EXPECT_EQ(hosts[2].group, TargetGroup::kReference);
}

}  // namespace
}  // namespace gpudoctor
