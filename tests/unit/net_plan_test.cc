// Issue 8 item 7: bandwidth judged against the plan, not the port; NICs whose capacity nobody
// knows; heavy senders against the plan; per-NIC throughput in the text report.
#include <gtest/gtest.h>

#include "config/config.h"
#include "report/net_report.h"
#include "rules/engine.h"

namespace gpudoctor {
namespace {

NicFacts Nic(std::string name, std::optional<int64_t> speed, double tx_bytes_per_s,
             bool physical = true) {
  NicFacts n;
  n.name = std::move(name);
  n.physical = physical;
  n.operstate = "up";
  n.speed_mbps = speed;
  n.rx_bytes_per_s = 1000;
  n.tx_bytes_per_s = tx_bytes_per_s;
  n.window_s = 1;
  return n;
}

std::vector<Finding> Judge(const Snapshot& s, const std::string& config = "") {
  Settings settings;
  auto loaded = ApplyConfigText(config, "t.toml", settings);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  std::vector<Finding> out;
  NetRules(s, Thresholds(settings.thresholds), out);
  return out;
}

const Finding* Find(const std::vector<Finding>& fs, std::string_view id) {
  for (const auto& f : fs) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

TEST(NetPlanTest, HundredMegabitPlanOnATenGigabitPortIsSaturated) {
  Snapshot s;
  s.network.nics = std::vector<NicFacts>{Nic("eth0", 10000, 12.0e6)};  // 96 Mb/s out
  EXPECT_EQ(Find(Judge(s), "net.nic.saturated"), nullptr);             // 1% of the port
  auto fs = Judge(s, "[network]\nplan_mbps = 100\n");
  const Finding* f = Find(fs, "net.nic.saturated");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary.find("of the 100 Mb/s plan"), std::string::npos) << f->summary;
  // A per-NIC plan wins over the global one.
  EXPECT_EQ(Find(Judge(s, "[network]\nplan_mbps = 100\nplan_mbps_nics = [\"eth0=1000\"]\n"),
                 "net.nic.saturated"),
            nullptr);
}

TEST(NetPlanTest, VirtioWithoutSpeedOrPlanSaysItCannotJudge) {
  Snapshot s;
  s.network.nics = std::vector<NicFacts>{Nic("ens3", std::nullopt, 5e6)};
  auto fs = Judge(s);
  const Finding* f = Find(fs, "net.nic.capacity_unknown");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_EQ(Find(Judge(s, "[network]\nplan_mbps = 1000\n"), "net.nic.capacity_unknown"), nullptr);
}

TEST(NetPlanTest, HeavySenderIsJudgedAgainstThePlan) {
  Snapshot s;
  SocketTrafficFacts sockets;
  ProcessTraffic p;
  p.pid = 42;
  p.comm = "rsync";
  p.tx_bytes_per_s = 8e6;  // 64 Mb/s: far below 50 MB/s, but most of a 100 Mb/s plan
  sockets.processes.push_back(p);
  sockets.window_s = 1;
  s.network.sockets = sockets;
  EXPECT_EQ(Find(Judge(s), "net.outbound.heavy"), nullptr);
  const Finding* f = Find(Judge(s, "[network]\nplan_mbps = 100\n"), "net.outbound.heavy");
  ASSERT_NE(f, nullptr);
}

TEST(NetPlanTest, BadPlanEntriesNameTheValue) {
  Settings settings;
  auto r = ApplyConfigText("[network]\nplan_mbps_nics = [\"eth0:100\"]\n", "t.toml", settings);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("eth0:100"), std::string::npos) << r.status().message();
}

TEST(NetPlanTest, TextReportShowsPerNicThroughput) {
  NetworkFacts n;
  n.nics = std::vector<NicFacts>{Nic("eth0", 10000, 12.5e6)};
  std::string lines = NicLines(n);
  EXPECT_NE(lines.find("nic eth0 up 10000 Mb/s: rx 0 Mb/s, tx 100 Mb/s"), std::string::npos)
      << lines;
}

}  // namespace
}  // namespace gpudoctor
