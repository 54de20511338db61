// False alarms of the network layer found in review, each on literal facts: loopback sockets
// counted as outbound traffic, busy training ranks flagged as suspicious, virtual interfaces
// judged saturated at their nominal speed, unused ports reported as broken links, and /proc
// scans that ignored the check deadline (partial facts must say so).
#include <gtest/gtest.h>

#include "net/proc_scan.h"
#include "net/process_signs.h"
#include "net/socket_traffic.h"
#include "rules/engine.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

std::vector<const Finding*> WithId(const std::vector<Finding>& all, const std::string& id) {
  std::vector<const Finding*> out;
  for (const auto& f : all) {
    if (f.id == id) out.push_back(&f);
  }
  return out;
}

const EvidenceItem* FindEvidence(const Finding& f, const std::string& name) {
  for (const auto& e : f.evidence) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

TcpSocketInfo Socket(uint64_t inode, const std::string& remote, bool loopback,
                     std::optional<uint64_t> acked) {
  TcpSocketInfo s;
  s.inode = inode;
  s.state = kTcpEstablished;
  s.remote = remote;
  s.remote_loopback = loopback;
  s.bytes_acked = acked;
  s.bytes_received = 0;
  return s;
}

TEST(NetFalseAlarmsTest, LoopbackSocketsAreNotOutboundTraffic) {
  ScannedProcess self;
  self.pid = 4100;
  self.comm = "trainer";
  self.socket_inodes = {11, 12, 13};
  // 2.3 GiB to itself over 127.0.0.1 and ::1 within one second, 1 MB to a real peer.
  std::vector<TcpSocketInfo> before = {Socket(11, "127.0.0.1:6000", true, 0),
                                       Socket(12, "[::1]:6001", true, 0),
                                       Socket(13, "10.0.0.7:443", false, 0)};
  std::vector<TcpSocketInfo> after = {Socket(11, "127.0.0.1:6000", true, 2'000'000'000),
                                      Socket(12, "[::1]:6001", true, 469'000'000),
                                      Socket(13, "10.0.0.7:443", false, 1'000'000)};
  SocketTrafficFacts t = AggregateSocketTraffic(before, after, {self}, 1.0);
  ASSERT_EQ(t.processes.size(), 1u);
  EXPECT_EQ(t.processes[0].tx_bytes, 1'000'000u);
  ASSERT_EQ(t.processes[0].peers.size(), 1u);
  EXPECT_EQ(t.processes[0].peers[0].peer, "10.0.0.7:443");
  EXPECT_EQ(t.loopback_tx_bytes, 2'469'000'000u);
  EXPECT_EQ(t.unmapped_tx_bytes, 0u);

  // Only loopback: no process at all, so nothing for net.outbound.heavy or net.localize.
  SocketTrafficFacts only_lo = AggregateSocketTraffic({before[0]}, {after[0]}, {self}, 1.0);
  EXPECT_TRUE(only_lo.processes.empty());
  Snapshot snap;
  snap.network.sockets = only_lo;
  EXPECT_TRUE(WithId(EvaluateRules(snap, Thresholds()), "net.outbound.heavy").empty());
}

ProcessSigns TrainingRank(int pid) {
  ProcessSigns p;
  p.pid = pid;
  p.comm = "python";
  p.cpu_pct = 95;
  p.outbound_peers = {"10.0.0.1:29500"};
  p.remote_ports = {29500};
  return p;
}

TEST(NetFalseAlarmsTest, BusyWithOutboundConnectionsAloneIsNotSuspicious) {
  Snapshot snap;
  ProcessSignFacts facts;
  ProcessSigns rank = TrainingRank(10);
  ProcessSigns loader = TrainingRank(11);
  loader.outbound_peers = {"52.216.0.1:443"};  // a data loader reading S3
  loader.remote_ports = {443};
  ProcessSigns odd = TrainingRank(12);  // the same, plus a deleted executable: two signs
  odd.exe_deleted = true;
  facts.processes = {rank, loader, odd};
  snap.network.process_signs = facts;
  auto findings = WithId(EvaluateRules(snap, Thresholds()), "proc.suspicious");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0]->subject, "12");
  EXPECT_EQ(findings[0]->severity, Severity::kWarn);
  EXPECT_NE(findings[0]->summary.find("high CPU (95%"), std::string::npos);
  EXPECT_NE(findings[0]->summary.find("deleted"), std::string::npos);
}

NicFacts Nic(const std::string& name, bool physical) {
  NicFacts n;
  n.name = name;
  n.physical = physical;
  n.admin_up = true;
  n.operstate = "up";
  n.carrier = true;
  n.window_s = 1.0;
  n.carrier_changes = 1;
  n.carrier_changes_delta = 0;
  n.rx_bytes_per_s = 0;
  return n;
}

TEST(NetFalseAlarmsTest, VirtualInterfacesAreNeverSaturated) {
  NicFacts tun = Nic("tun0", false);
  tun.speed_mbps = 10;          // what older kernels report for tun
  tun.tx_bytes_per_s = 1.25e6;  // a VPN at 1.25 MB/s: 100% of a nominal 10 Mb/s
  NicFacts eth = Nic("eth0", true);
  eth.speed_mbps = 10;
  eth.tx_bytes_per_s = 1.25e6;  // the same on a real 10 Mb/s port is saturated
  Snapshot snap;
  snap.network.nics = std::vector<NicFacts>{tun};
  auto quiet = EvaluateRules(snap, Thresholds());
  EXPECT_TRUE(WithId(quiet, "net.nic.saturated").empty());
  EXPECT_TRUE(WithId(quiet, "net.localize").empty());
  snap.network.nics = std::vector<NicFacts>{tun, eth};
  auto sat = WithId(EvaluateRules(snap, Thresholds()), "net.nic.saturated");
  ASSERT_EQ(sat.size(), 1u);
  EXPECT_EQ(sat[0]->subject, "eth0");
  EXPECT_EQ(sat[0]->severity, Severity::kCrit);
}

TEST(NetFalseAlarmsTest, AdminUpPortThatNeverHadCarrierIsOnlyInfo) {
  NicFacts spare = Nic("eth3", true);
  spare.carrier = false;
  spare.operstate = "down";
  spare.carrier_changes = 0;
  NicFacts lost = spare;  // had a link since boot and lost it
  lost.name = "eth4";
  lost.carrier_changes = 3;
  NicFacts unknown = spare;  // no carrier_changes file: judged as before
  unknown.name = "eth5";
  unknown.carrier_changes.reset();
  unknown.carrier_changes_delta.reset();
  Snapshot snap;
  snap.network.nics = std::vector<NicFacts>{spare, lost, unknown};
  auto link = WithId(EvaluateRules(snap, Thresholds()), "net.link");
  ASSERT_EQ(link.size(), 3u);
  EXPECT_EQ(link[0]->subject, "eth3");
  EXPECT_EQ(link[0]->severity, Severity::kInfo);
  EXPECT_NE(link[0]->summary.find("never had a link"), std::string::npos);
  EXPECT_EQ(link[1]->subject, "eth4");
  EXPECT_EQ(link[1]->severity, Severity::kCrit);
  EXPECT_EQ(link[2]->subject, "eth5");
  EXPECT_EQ(link[2]->severity, Severity::kCrit);
}

// A fixture procfs with `count` processes, each holding one socket.
RootFs ManyProcesses(testing::TempDir& dir, int count) {
  const char* tail = " 1 1 1 0 -1 0 0 0 0 0 50 50 0 0 20 0 1 0 9 0 0\n";
  for (int pid = 100; pid < 100 + count; ++pid) {
    std::string p = "proc/" + std::to_string(pid);
    dir.Write(p + "/stat", std::to_string(pid) + " (worker) S" + tail);
    dir.Write(p + "/comm", "worker\n");
    dir.Symlink("socket:[" + std::to_string(pid) + "]", p + "/fd/3");
  }
  return RootFs(dir.path() + "/proc", dir.path() + "/sys", dir.path());
}

TEST(NetFalseAlarmsTest, ProcessScanStopsAtTheDeadlineAndSaysSo) {
  testing::TempDir dir;
  RootFs fs = ManyProcesses(dir, 2 * static_cast<int>(kScanDeadlineStride) + 5);
  ProcScanOptions opts;
  ProcessScan full = ScanProcesses(fs, opts);
  EXPECT_EQ(full.processes.size(), 2 * kScanDeadlineStride + 5);
  EXPECT_FALSE(full.truncated);
  opts.deadline = SteadyClock::now() + std::chrono::seconds(60);
  EXPECT_FALSE(ScanProcesses(fs, opts).truncated);
  opts.deadline = SteadyClock::now() - std::chrono::milliseconds(1);  // already passed
  ProcessScan cut = ScanProcesses(fs, opts);
  EXPECT_TRUE(cut.truncated);
  EXPECT_LT(cut.processes.size(), full.processes.size());

  // Partial facts carry the mark into the findings built on them.
  ProcessSignsBaseline cut_baseline = MakeProcessSignsBaseline(cut, nullptr);
  ProcessSignInputs in;
  in.before = &cut_baseline;
  in.after = &full;
  EXPECT_TRUE(CollectProcessSigns(in).truncated);
  ProcessSignFacts signs;
  ProcessSigns miner;
  miner.pid = 7;
  miner.comm = "xmrig";
  signs.processes = {miner};
  signs.scanned = 40;
  signs.truncated = true;
  SocketTrafficFacts traffic;
  traffic.window_s = 1;
  ProcessTraffic sender;
  sender.pid = 8;
  sender.comm = "rsync";
  sender.tx_bytes = 500'000'000;
  sender.tx_bytes_per_s = 500e6;
  traffic.processes = {sender};
  traffic.process_scan_truncated = true;
  traffic.processes_scanned = 40;
  Snapshot snap;
  snap.network.process_signs = signs;
  snap.network.sockets = traffic;
  auto findings = EvaluateRules(snap, Thresholds());
  for (const char* id : {"proc.suspicious", "net.outbound.heavy"}) {
    auto hits = WithId(findings, id);
    ASSERT_EQ(hits.size(), 1u) << id;
    const EvidenceItem* e = FindEvidence(*hits[0], "process_scan_truncated");
    ASSERT_NE(e, nullptr) << id;
    EXPECT_TRUE(std::get<bool>(e->value));
  }
}

}  // namespace
}  // namespace gpudoctor
