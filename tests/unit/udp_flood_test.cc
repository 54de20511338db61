// Outbound UDP and raw traffic attributed to a process (issue 25 §1): the SNMP counter parsers,
// the owner/peer/queue aggregation, the net.outbound.udp rule, and a real UDP flood from a child
// process inside a network namespace this test creates (its packets go into a TUN device in that
// namespace: nothing leaves the machine).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

#include "net/proc_scan.h"
#include "net/sock_diag.h"
#include "net/udp_sample.h"
#include "net/udp_senders.h"
#include "net_test_env.h"
#include "rules/engine.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

// The layout of Linux's /proc/net/snmp (net/ipv4/proc.c: header line, values line per group).
constexpr const char* kSnmp =
    "Ip: Forwarding DefaultTTL InReceives OutRequests\n"
    "Ip: 1 64 100 2000\n"
    "Tcp: RtoAlgorithm MaxConn OutSegs\n"
    "Tcp: 1 -1 300\n"
    "Udp: InDatagrams NoPorts OutDatagrams\n"
    "Udp: 5 0 1500\n";

TEST(SnmpParserTest, ReadsGroupsAndSnmp6AndRejectsMismatchedLines) {
  std::map<std::string, uint64_t> c;
  ASSERT_TRUE(ParseSnmpCounters(kSnmp, c).ok());
  EXPECT_EQ(c["Udp.OutDatagrams"], 1500u);
  EXPECT_EQ(c["Ip.OutRequests"], 2000u);
  EXPECT_EQ(c.count("Tcp.MaxConn"), 0u);  // -1: "dynamic", not a count
  ASSERT_TRUE(
      ParseSnmp6Counters("Udp6OutDatagrams                \t42\nIp6InReceives 7\n", c).ok());
  EXPECT_EQ(c["Udp6.OutDatagrams"], 42u);
  std::map<std::string, uint64_t> bad;
  Status st = ParseSnmpCounters("Udp: InDatagrams OutDatagrams\nUdp: 5\n", bad);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("line 2"), std::string::npos) << st.message();
  EXPECT_FALSE(ParseSnmpCounters("Udp: A\nUdp: x\n", bad).ok());
  EXPECT_FALSE(ParseSnmp6Counters("Udp6OutDatagrams\n", bad).ok());
}

// `only`: just the named counters are kept (the rates CollectUdpSenders computes, the TCP opens
// the shared samples compare), and every line is still checked: a garbled line fails the parse
// whether or not its counters are wanted.
TEST(SnmpParserTest, OnlyTheWantedCountersAreKeptAndEveryLineIsChecked) {
  std::map<std::string, uint64_t> c;
  ASSERT_TRUE(ParseSnmpCounters(kSnmp, c, kUdpSenderCounters).ok());
  ASSERT_TRUE(ParseSnmp6Counters("Udp6OutDatagrams 42\nIp6InReceives 7\nIcmp6InMsgs 3\n"
                                 "UnknownGroupCounter 9\n",
                                 c, kUdpSenderCounters)
                  .ok());
  EXPECT_EQ(c, (std::map<std::string, uint64_t>{{"Ip.OutRequests", 2000},
                                                {"Tcp.OutSegs", 300},
                                                {"Udp.OutDatagrams", 1500},
                                                {"Udp6.OutDatagrams", 42}}));
  std::map<std::string, uint64_t> all;
  ASSERT_TRUE(ParseSnmp6Counters("Ip6InReceives 7\nUnknownGroupCounter 9\n", all).ok());
  EXPECT_EQ(all,
            (std::map<std::string, uint64_t>{{"Ip6.InReceives", 7}, {"UnknownGroupCounter", 9}}));

  std::map<std::string, uint64_t> bad;
  Status st = ParseSnmpCounters("Icmp: InMsgs\nIcmp: x\n", bad, kUdpSenderCounters);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("line 2"), std::string::npos) << st.message();
  st = ParseSnmp6Counters("Udp6OutDatagrams 1\nIcmp6InMsgs 2 3\n", bad, kUdpSenderCounters);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("line 2: expected 'Name value'"), std::string::npos) << st.message();
  st = ParseSnmp6Counters("Ip6InReceives 7x\n", bad, kUdpSenderCounters);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'7x' is not a number"), std::string::npos) << st.message();
  EXPECT_TRUE(ParseSnmp6Counters("  \t \n\n", bad).ok());  // blank lines are no lines
}

TcpSocketInfo Udp(uint64_t inode, const char* remote, uint32_t wqueue, bool loopback = false) {
  TcpSocketInfo s;
  s.protocol = 17;
  s.inode = inode;
  s.remote = remote;
  s.remote_loopback = loopback;
  s.wqueue = wqueue;
  s.state = 7;
  return s;
}

TEST(UdpSendersTest, RanksBySendQueueAndSaysBytesAreNotAvailable) {
  std::vector<ScannedProcess> procs(3);
  procs[0].pid = 10;
  procs[0].comm = "resolved";
  procs[0].socket_inodes = {1, 2};
  procs[1].pid = 20;
  procs[1].comm = "flood";
  procs[1].socket_inodes = {3};
  procs[2].pid = 30;
  procs[2].comm = "local";
  procs[2].socket_inodes = {4};
  std::vector<TcpSocketInfo> a = {Udp(1, "0.0.0.0:0", 0), Udp(2, "8.8.8.8:53", 0),
                                  Udp(3, "0.0.0.0:0", 0), Udp(4, "127.0.0.1:53", 0, true)};
  std::vector<TcpSocketInfo> b = a;
  b[2].wqueue = 212992;  // the flood's socket has a full send buffer at the second dump
  TcpSocketInfo raw;
  raw.protocol = 255;
  raw.inode = 5;
  raw.remote = "0.0.0.0:0";
  b.push_back(raw);
  procs[1].socket_inodes.push_back(5);
  std::map<std::string, uint64_t> c0, c1;
  ASSERT_TRUE(ParseSnmpCounters(kSnmp, c0).ok());
  c1 = c0;
  c1["Udp.OutDatagrams"] += 100000;
  c1["Ip.OutRequests"] += 100000 + 5000;
  UdpSenderInputs in;
  in.samples = {&a, &b};
  in.processes = &procs;
  in.counters_before = &c0;
  in.counters_after = &c1;
  in.window_s = 2;
  UdpTrafficFacts f = CollectUdpSenders(in);
  ASSERT_TRUE(f.udp_out_datagrams_per_s);
  EXPECT_DOUBLE_EQ(*f.udp_out_datagrams_per_s, 50000);
  ASSERT_TRUE(f.other_out_packets_per_s);
  EXPECT_DOUBLE_EQ(*f.other_out_packets_per_s, 2500);
  ASSERT_EQ(f.senders.size(), 2u);  // the loopback-only socket's owner is not a sender
  EXPECT_EQ(f.senders[0].pid, 20);
  EXPECT_EQ(f.senders[0].send_queue_bytes, 212992u);
  EXPECT_EQ(f.senders[0].raw_sockets, 1);
  EXPECT_EQ(f.senders[1].pid, 10);
  EXPECT_EQ(f.senders[1].peer_count, 1);
  EXPECT_EQ(f.senders[1].peers, std::vector<std::string>{"8.8.8.8:53"});
  EXPECT_NE(f.method.find("bytes not available for UDP: peers and queue sizes only"),
            std::string::npos);

  // Queues empty at both dumps (a fast NIC drains them): the process that burnt CPU in the window
  // ranks before an idle resolver with a peer.
  std::vector<TcpSocketInfo> quiet = a;
  std::vector<ScannedProcess> earlier = procs;
  procs[1].cpu_ticks = 95;  // 95 ticks used in the window by the flood
  UdpSenderInputs q = in;
  q.samples = {&a, &quiet};
  q.processes_before = &earlier;
  UdpTrafficFacts by_cpu = CollectUdpSenders(q);
  ASSERT_EQ(by_cpu.senders.size(), 2u);
  EXPECT_EQ(by_cpu.senders[0].pid, 20);
  q.processes_before = nullptr;  // without the first walk: peers decide
  EXPECT_EQ(CollectUdpSenders(q).senders[0].pid, 10);

  // The rule names the sender; below the threshold it stays quiet.
  Snapshot snap;
  SocketTrafficFacts t;
  t.udp = f;
  snap.network.sockets = t;
  auto findings = EvaluateRules(snap, Thresholds());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "net.outbound.udp");
  EXPECT_EQ(findings[0].subject, "20");
  EXPECT_NE(findings[0].summary.find("flood (pid 20)"), std::string::npos) << findings[0].summary;
  f.udp_out_datagrams_per_s = 100;
  snap.network.sockets->udp = f;
  EXPECT_TRUE(EvaluateRules(snap, Thresholds()).empty());
}

// A child process in a test network namespace floods UDP to 192.0.2.77 (RFC 5737, routed into
// the namespace's TUN device): the UDP sample names its pid and comm.
TEST(UdpFloodNetnsTest, FloodingChildIsNamed) {
  std::string why;
  bool ran = testing::RunInFreshNetns(
      [&] {
        testing::TunResponder tun;
        if (!tun.Start(&why)) {
          why = "TUN: " + why;
          return;
        }
        pid_t child = fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
          prctl(PR_SET_NAME, "udpflood", 0, 0, 0);
          prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
          int s = socket(AF_INET, SOCK_DGRAM, 0);
          sockaddr_in to{};
          to.sin_family = AF_INET;
          to.sin_port = htons(9);
          inet_pton(AF_INET, "192.0.2.77", &to.sin_addr);
          char payload[512] = {};
          for (;;) {
            (void)sendto(s, payload, sizeof payload, 0, reinterpret_cast<sockaddr*>(&to),
                         sizeof to);
          }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the child is sending
        RootFs fs;
        ProcessScan scan_before = ScanProcesses(fs, ProcScanOptions{});
        UdpSample before = TakeUdpSample(fs);
        std::this_thread::sleep_for(std::chrono::milliseconds(400));
        UdpSample after = TakeUdpSample(fs);
        ProcessScan scan = ScanProcesses(fs, ProcScanOptions{});
        kill(child, SIGKILL);
        waitpid(child, nullptr, 0);
        if (!after.udp_ok) {
          why = "no UDP sock_diag (udp_diag module) here";
          return;
        }
        ASSERT_TRUE(before.counters_ok && after.counters_ok);
        UdpTrafficFacts f = UdpFactsBetween(before, after, scan.processes, &scan_before.processes);
        ASSERT_TRUE(f.udp_out_datagrams_per_s);
        EXPECT_GT(*f.udp_out_datagrams_per_s, 500) << "the child sent too little";
        ASSERT_FALSE(f.senders.empty());
        std::printf("udp flood in the test namespace: %.0f datagrams/s, send queue %llu bytes\n",
                    *f.udp_out_datagrams_per_s,
                    static_cast<unsigned long long>(f.senders[0].send_queue_bytes));
        EXPECT_EQ(f.senders[0].pid, child);
        EXPECT_EQ(f.senders[0].comm, "udpflood");
        EXPECT_EQ(f.senders[0].udp_sockets, 1);

        Snapshot snap;
        SocketTrafficFacts t;
        t.udp = f;
        snap.network.sockets = t;
        // A shared CI machine may give the child little CPU: a bar it reaches for sure.
        ThresholdOverrides low;
        low.Set("net.outbound.udp", "warn_datagrams_per_s", 500);
        auto findings = EvaluateRules(snap, Thresholds(low));
        ASSERT_FALSE(findings.empty()) << *f.udp_out_datagrams_per_s << " datagrams/s";
        EXPECT_EQ(findings[0].id, "net.outbound.udp");
        EXPECT_EQ(findings[0].subject, std::to_string(child));
        bool method = false;
        for (const auto& e : findings[0].evidence) {
          if (e.name == "method") method = true;
        }
        EXPECT_TRUE(method);
        why.clear();
      },
      &why);
  if (!ran || !why.empty()) GTEST_SKIP() << "no test network namespace here: " << why;
}

}  // namespace
}  // namespace gpudoctor
