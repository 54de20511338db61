#include "report/report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "rules/make_finding.h"

namespace gpudoctor {
namespace {

using ::testing::HasSubstr;

Report SampleReport() {
  Report r;
  r.snapshot.hostname = "node-7";
  r.snapshot.time = std::chrono::system_clock::from_time_t(1796000000);
  r.snapshot.probes.push_back({"cpu", Layer::kResources, ProbeState::kOk, "", 251.2});
  r.snapshot.probes.push_back({"pressure", Layer::kResources, ProbeState::kSkipped, "no PSI", 0.1});
  r.findings.push_back(MakeFinding("host.iowait.high", Severity::kWarn, "iowait 30%"));
  r.findings.back().Add("iowait_pct", 30.5);
  Finding dstate = MakeFinding("proc.dstate", Severity::kCrit, "nvidia-smi stuck");
  dstate.Add("count", 1).Add("comm", "nvidia-smi");
  dstate.gpu = GpuRef{3, "GPU-abc", "0000:3b:00.0", "1320", "H100"};
  r.findings.push_back(dstate);
  r.findings.push_back(MakeFinding("host.disk.full", Severity::kCrit, "/data 98% full"));
  SortFindings(r.findings);
  return r;
}

TEST(ReportTest, SortsByLayerThenSeverity) {
  Report r = SampleReport();
  ASSERT_EQ(r.findings.size(), 3u);
  EXPECT_EQ(r.findings[0].id, "proc.dstate");     // software before resources
  EXPECT_EQ(r.findings[1].id, "host.disk.full");  // crit before warn
  EXPECT_EQ(r.findings[2].id, "host.iowait.high");
}

TEST(ReportTest, VerdictAndExitCode) {
  std::vector<Finding> none;
  EXPECT_STREQ(Verdict(none), "ok");
  EXPECT_EQ(ExitCodeFor(none), 0);
  std::vector<Finding> info = {MakeFinding("host.load.high", Severity::kInfo, "x")};
  EXPECT_STREQ(Verdict(info), "ok");
  EXPECT_EQ(ExitCodeFor(info), 0);
  std::vector<Finding> warn = {MakeFinding("host.load.high", Severity::kWarn, "x")};
  EXPECT_EQ(ExitCodeFor(warn), 1);
  EXPECT_EQ(ExitCodeFor(SampleReport().findings), 2);
}

// The node's action ranks only warn and crit findings, as the verdict and the exit code do: an
// info finding with a disruptive action (driver.release.old: fix_config; a pending kernel
// update: reboot) never becomes what the node must do.
TEST(ReportTest, NodeActionIgnoresInfoFindings) {
  Finding info_reboot = MakeFinding("driver.release.old", Severity::kInfo, "older point release");
  info_reboot.action = Action::kReboot;
  Finding warn_watch = MakeFinding("host.load.high", Severity::kWarn, "load");
  warn_watch.action = Action::kWatch;
  EXPECT_EQ(NodeAction({}), Action::kNone);
  EXPECT_EQ(NodeAction({info_reboot}), Action::kNone);
  EXPECT_EQ(NodeAction({info_reboot, warn_watch}), Action::kWatch);
  Finding crit = MakeFinding("gpu.ecc.dbe", Severity::kCrit, "dbe");
  EXPECT_EQ(NodeAction({info_reboot, warn_watch, crit}), Action::kDrainReset);

  Report healthy;
  healthy.snapshot.hostname = "node-1";
  healthy.findings = {info_reboot};
  auto j = nlohmann::json::parse(RenderJson(healthy));
  EXPECT_EQ(j["verdict"], "ok");
  EXPECT_EQ(j["action"], "none");
  EXPECT_EQ(j["findings"][0]["action"], "reboot");  // the finding keeps its own action
  std::string text = RenderText(healthy, false);
  EXPECT_EQ(text.find("action: reboot - "), std::string::npos) << text;
  EXPECT_EQ(ExitCodeFor(healthy.findings), 0);
}

TEST(ReportTest, JsonHasContractFields) {
  auto j = nlohmann::json::parse(RenderJson(SampleReport()));
  EXPECT_EQ(j["verdict"], "crit");
  EXPECT_EQ(j["host"], "node-7");
  EXPECT_EQ(j["time"], "2026-11-30T00:53:20Z");
  ASSERT_EQ(j["findings"].size(), 3u);
  const auto& f = j["findings"][0];
  EXPECT_EQ(f["id"], "proc.dstate");
  EXPECT_EQ(f["layer"], "software");
  EXPECT_EQ(f["severity"], "crit");
  EXPECT_EQ(f["evidence"]["count"], 1);
  EXPECT_EQ(f["evidence"]["comm"], "nvidia-smi");
  EXPECT_EQ(f["gpu"]["index"], 3);
  EXPECT_EQ(f["gpu"]["serial"], "1320");
  EXPECT_FALSE(f["next_steps"].empty());
  EXPECT_FALSE(j["findings"][1].contains("gpu"));
  ASSERT_EQ(j["probes"].size(), 2u);
  EXPECT_EQ(j["probes"][1]["status"], "skipped");
  EXPECT_EQ(j["probes"][1]["reason"], "no PSI");
}

TEST(ReportTest, JsonSurvivesInvalidUtf8) {
  Report r = SampleReport();
  r.findings[0].summary = std::string("bad \xff\xfe bytes");
  auto j = nlohmann::json::parse(RenderJson(r));
  EXPECT_THAT(j["findings"][0]["summary"].get<std::string>(), HasSubstr("bad"));
}

TEST(ReportTest, TextGroupsLayersInOrderWithVerdict) {
  std::string text = RenderText(SampleReport(), false);
  size_t net = text.find("NETWORK"), hw = text.find("HARDWARE"), sw = text.find("SOFTWARE"),
         res = text.find("RESOURCES");
  ASSERT_NE(net, std::string::npos);
  EXPECT_LT(net, hw);
  EXPECT_LT(hw, sw);
  EXPECT_LT(sw, res);
  EXPECT_LT(sw, text.find("proc.dstate"));
  EXPECT_LT(res, text.find("host.disk.full"));
  EXPECT_THAT(text, HasSubstr("GPU 3 (0000:3b:00.0, serial 1320)"));
  EXPECT_THAT(text, HasSubstr("probe pressure skipped: no PSI"));
  EXPECT_THAT(text, HasSubstr("verdict: CRIT - 2 critical, 1 warning"));
  // Each finding says what to do, and the report its worst action.
  std::string dstate_action = ActionName(SampleReport().findings[0].action);
  EXPECT_THAT(text, HasSubstr("action: " + dstate_action + " ("));
  EXPECT_THAT(text, HasSubstr("action: fix_config ("));  // host.disk.full
  EXPECT_THAT(
      text,
      HasSubstr("action: " + std::string(ActionName(NodeAction(SampleReport().findings))) + " - "));
  EXPECT_EQ(text.find("\033["), std::string::npos);  // no colour when asked for none
  EXPECT_NE(RenderText(SampleReport(), true).find("\033["), std::string::npos);
}

}  // namespace
}  // namespace gpudoctor

#include "report/gpu_report.h"

namespace gpudoctor {
namespace {

TEST(GpuTableTest, StateColumnShowsTheWorstFindingPerGpu) {
  GpuLayerFacts facts;
  for (int i = 0; i < 3; ++i) {
    GpuFacts g;
    g.index = i;
    g.name = "NVIDIA H100 80GB HBM3";
    g.pci_bus_id = "0000:1" + std::to_string(i) + ":00.0";
    facts.gpus.push_back(g);
  }
  facts.gpus[2].hung = true;
  Finding dbe = MakeFinding("host.disk.full", Severity::kCrit, "stand-in GPU finding");
  dbe.gpu = GpuRef{1, "", "0000:11:00.0", "", ""};
  Finding by_slot = MakeFinding("host.disk.full", Severity::kWarn, "named by slot only");
  by_slot.gpu = GpuRef{std::nullopt, "", "0000:10:00.0", "", ""};
  std::string table = GpuTable(facts, {dbe, by_slot});
  auto lines = SplitLines(table);
  ASSERT_GE(lines.size(), 4u);
  EXPECT_TRUE(EndsWith(lines[1], "WARN")) << lines[1];
  EXPECT_TRUE(EndsWith(lines[2], "CRIT")) << lines[2];
  EXPECT_TRUE(EndsWith(lines[3], "HUNG")) << lines[3];
  EXPECT_TRUE(EndsWith(SplitLines(GpuTable(facts))[1], "ok"));
}

}  // namespace
}  // namespace gpudoctor

#include "report/net_report.h"

namespace gpudoctor {
namespace {

TEST(NetReportTest, OneLinePerProbedHostInTheTextReport) {
  Report r;
  r.snapshot.hostname = "n";
  r.snapshot.probes.push_back({"reachability", Layer::kNetwork, ProbeState::kOk, "", 400});
  ReachabilityFacts reach;
  TargetProbeFacts t;
  t.name = "storage01:2049";
  t.address = "10.0.0.5";
  t.method = "tcp";
  t.sent = 5;
  t.received = 4;
  t.rtt_median_ms = 1.25;
  t.rtt_p95_ms = 3.5;
  TargetProbeFacts gw;
  gw.name = "192.0.2.1";
  gw.group = TargetGroup::kGateway;
  gw.address = "192.0.2.1";
  gw.inconclusive = true;
  gw.error = "could not be probed (no ICMP socket; TCP fallback unanswered)";
  reach.hosts = {t, gw};
  r.snapshot.network.reachability = reach;
  std::string text = RenderText(r, false);
  EXPECT_THAT(text, HasSubstr("target storage01:2049 (10.0.0.5) tcp: 4/5 replies, median 1.25 ms, "
                              "p95 3.5 ms"));
  EXPECT_THAT(text, HasSubstr("gateway 192.0.2.1: could not be probed"));
  EXPECT_EQ(ReachabilityLines(NetworkFacts{}), "");
}

}  // namespace
}  // namespace gpudoctor

namespace gpudoctor {
namespace {

TEST(FactsJsonTest, MeasuredHostAndNetworkFactsAppearUnknownOnesDoNot) {
  Report r = SampleReport();
  auto bare = nlohmann::json::parse(RenderJson(r));
  EXPECT_FALSE(bare.contains("resources"));
  EXPECT_FALSE(bare.contains("network"));
  CpuFacts cpu;
  cpu.busy_pct = 97.5;
  cpu.logical_cores = 64;
  r.snapshot.host.cpu = cpu;
  MountFacts m;
  m.mount_point = "/data";
  m.device = "/dev/nvme0n1p1";
  m.fs_type = "xfs";
  m.total_bytes = 1000;
  r.snapshot.host.mounts = std::vector<MountFacts>{m};
  ReachabilityFacts reach;
  TargetProbeFacts t;
  t.name = "storage01";
  t.sent = 5;
  t.received = 5;
  t.rtt_median_ms = 0.5;
  reach.hosts = {t};
  r.snapshot.network.reachability = reach;
  auto j = nlohmann::json::parse(RenderJson(r));
  EXPECT_EQ(j["resources"]["cpu"]["busy_pct"], 97.5);
  EXPECT_EQ(j["resources"]["cpu"]["logical_cores"], 64);
  EXPECT_FALSE(j["resources"]["cpu"].contains("iowait_pct"));  // not measured: absent, not 0
  EXPECT_EQ(j["resources"]["mounts"][0]["mount_point"], "/data");
  EXPECT_FALSE(j["resources"]["mounts"][0].contains("available_bytes"));
  EXPECT_EQ(j["network"]["reachability"][0]["name"], "storage01");
  EXPECT_EQ(j["network"]["reachability"][0]["group"], "target");
  EXPECT_EQ(j["network"]["reachability"][0]["rtt_median_ms"], 0.5);
}

}  // namespace
}  // namespace gpudoctor
