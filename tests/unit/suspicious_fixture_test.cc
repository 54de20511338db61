// proc.suspicious on a fixture /proc tree (tests/fixtures/suspicious, see its README): a known
// miner name, a pool port on a connected and on a listening socket, executables under /tmp,
// /var/tmp and /dev/shm — each caught while the process is idle (no CPU ticks) — and a deleted
// executable alone still not reported (package upgrades leave those everywhere).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "facts/miner_signs.h"
#include "net/proc_scan.h"
#include "net/process_signs.h"
#include "rules/engine.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

TcpSocketInfo Sock(uint64_t inode, int state, const std::string& remote, uint16_t rport,
                   uint16_t lport) {
  TcpSocketInfo s;
  s.inode = inode;
  s.state = state;
  s.remote = remote;
  s.remote_port = rport;
  s.local_port = lport;
  return s;
}

std::map<std::string, std::string> SuspiciousBySubject() {
  std::string root = testing::FixturePath("suspicious");
  RootFs fs(root + "/proc", root + "/sys", root);
  ProcScanOptions opts;
  opts.read_exe = true;
  ProcessScan before = ScanProcesses(fs, opts);
  ProcessScan after = ScanProcesses(fs, opts);
  EXPECT_EQ(after.processes.size(), 9u);
  // 5001: helper's new connection to a pool port (not in the first dump: not persistent).
  // 5002: proxy listening on 3333 (a mining proxy).
  std::vector<TcpSocketInfo> sockets_before;
  std::vector<TcpSocketInfo> sockets_after = {Sock(5001, 1, "203.0.113.9:14444", 14444, 40001),
                                              Sock(5002, 10, "0.0.0.0:0", 0, 3333)};
  ProcessSignInputs in;
  in.before = &before;
  in.after = &after;
  in.sockets_before = &sockets_before;
  in.sockets_after = &sockets_after;
  in.window_s = 1;
  ProcessSignFacts facts = CollectProcessSigns(in);
  Snapshot snap;
  snap.network.process_signs = facts;
  std::map<std::string, std::string> out;
  for (const auto& f : EvaluateRules(snap, Thresholds())) {
    if (f.id == "proc.suspicious") out[f.subject] = f.summary;
  }
  return out;
}

TEST(SuspiciousFixtureTest, IdleMinerByName) {
  auto found = SuspiciousBySubject();
  ASSERT_TRUE(found.count("101"));
  EXPECT_NE(found["101"].find("known miner"), std::string::npos) << found["101"];
}

TEST(SuspiciousFixtureTest, ExecutablesInTmpVarTmpAndDevShm) {
  auto found = SuspiciousBySubject();
  ASSERT_TRUE(found.count("102"));
  EXPECT_NE(found["102"].find("temporary directory (/tmp/.x/kworkerds)"), std::string::npos);
  ASSERT_TRUE(found.count("103"));  // /dev/shm and deleted: two signs
  EXPECT_NE(found["103"].find("/dev/shm/sshd2"), std::string::npos);
  EXPECT_NE(found["103"].find("deleted"), std::string::npos);
  ASSERT_TRUE(found.count("104"));
  EXPECT_NE(found["104"].find("/var/tmp/p"), std::string::npos);
}

TEST(SuspiciousFixtureTest, PoolPortConnectedOrListening) {
  auto found = SuspiciousBySubject();
  ASSERT_TRUE(found.count("105"));
  EXPECT_NE(found["105"].find("stratum port(s) 14444"), std::string::npos) << found["105"];
  ASSERT_TRUE(found.count("106"));
  EXPECT_NE(found["106"].find("listens on common stratum port(s) 3333"), std::string::npos)
      << found["106"];
}

TEST(SuspiciousFixtureTest, DeletedAloneAndOrdinaryProcessesAreNotReported) {
  auto found = SuspiciousBySubject();
  EXPECT_FALSE(found.count("107"));  // deleted executable only
  EXPECT_FALSE(found.count("108"));
  EXPECT_FALSE(found.count("109"));  // a GPU process, no known-user list
  EXPECT_EQ(found.size(), 6u);
}

TEST(MinerSignsTest, NamesPortsAndTempDirs) {
  EXPECT_TRUE(MinerName("XMRig"));
  EXPECT_TRUE(MinerName("kdevtmpfsi"));
  EXPECT_FALSE(MinerName("python3"));
  for (int port : {3333, 4444, 5555, 7777, 14444, 14433}) EXPECT_TRUE(StratumPort(port)) << port;
  EXPECT_FALSE(StratumPort(8888));  // Jupyter
  EXPECT_FALSE(StratumPort(443));
  EXPECT_TRUE(ExeInTempDir("/dev/shm/x (deleted)"));
  EXPECT_TRUE(ExeInTempDir("/var/tmp/a"));
  EXPECT_FALSE(ExeInTempDir("/tmpfoo/a"));
  EXPECT_FALSE(ExeInTempDir("/usr/bin/tmp"));
}

}  // namespace
}  // namespace gpudoctor
