// proc.suspicious on a fixture /proc tree (tests/fixtures/suspicious, see its README): a known
// miner name, a pool port on a connected and on a listening socket, executables under /tmp,
// /var/tmp and /dev/shm — each caught while the process is idle (no CPU ticks) — and a deleted
// executable alone still not reported (package upgrades leave those everywhere).
//
// Temporary directories: what legitimate tools build and run there is not a sign — `go run`
// (/tmp/go-build<N>/b001/exe/NAME; kardianos/osext#17 shows the go-build<N>/.../exe/ layout),
// `go test` (b<NNN>/PKG.test), an AppImage's own mount (/tmp/.mount_*: the type 2 runtime mounts
// its squashfs there and runs AppRun), pip's isolated build environment (the cmake/ninja wheels
// under /tmp/pip-build-env-*, scikit-build/scikit-build-core#649), and the same inside a systemd
// PrivateTmp (/tmp/systemd-private-*-UNIT-*/tmp/). Malware hides in hidden paths (/tmp/.s/crond
// and /tmp/.x from webhostsecurity.com's list of what attackers left in /tmp; .ICE-unix) and under
// a miner's name (kdevtmpfsi, Kinsing's miner, runs as /tmp/kdevtmpfsi): still reported, and a
// miner's name under an exempt path too. A plain /tmp executable alone (a test build looks the
// same) is a note (info), not a warning.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "facts/miner_signs.h"
#include "net/proc_scan.h"
#include "net/process_signs.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"
#include "rules/engine.h"
#include "socket_test_util.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using testing::Sock;

struct Seen {
  std::string summary;
  Severity severity = Severity::kInfo;
};

std::map<std::string, Seen> SuspiciousFindings() {
  std::string root = testing::FixturePath("suspicious");
  RootFs fs(root + "/proc", root + "/sys", root);
  ProcScanOptions opts;
  opts.read_exe = true;
  ProcessScan before = ScanProcesses(fs, opts);
  ProcessScan after = ScanProcesses(fs, opts);
  EXPECT_EQ(after.processes.size(), 18u);
  // 5001: helper's new connection to a pool port (not in the first dump: not persistent).
  // 5002: proxy listening on 3333 (a mining proxy).
  std::vector<TcpSocketInfo> sockets_before;
  std::vector<TcpSocketInfo> sockets_after = {Sock(5001, 1, "203.0.113.9:14444", 14444, 40001),
                                              Sock(5002, 10, "0.0.0.0:0", 0, 3333)};
  ProcessSignsBaseline baseline = MakeProcessSignsBaseline(before, &sockets_before);
  ProcessSignInputs in;
  in.before = &baseline;
  in.after = &after;
  in.sockets_after = &sockets_after;
  in.window_s = 1;
  ProcessSignFacts facts = CollectProcessSigns(in);
  Snapshot snap;
  snap.network.process_signs = facts;
  std::map<std::string, Seen> out;
  for (const auto& f : EvaluateRules(snap, Thresholds())) {
    if (f.id == "proc.suspicious") out[f.subject] = {f.summary, f.severity};
  }
  return out;
}

std::map<std::string, std::string> SuspiciousBySubject() {
  std::map<std::string, std::string> out;
  for (const auto& [pid, seen] : SuspiciousFindings()) out[pid] = seen.summary;
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
  EXPECT_NE(found["102"].find("hidden or memory-only temporary path (/tmp/.x/kworkerds)"),
            std::string::npos)
      << found["102"];
  ASSERT_TRUE(found.count("103"));  // /dev/shm and deleted: two signs
  EXPECT_NE(found["103"].find("/dev/shm/sshd2"), std::string::npos);
  EXPECT_NE(found["103"].find("deleted"), std::string::npos);
  ASSERT_TRUE(found.count("104"));
  EXPECT_NE(found["104"].find("temporary directory (/var/tmp/p)"), std::string::npos);
}

TEST(SuspiciousFixtureTest, HiddenOrShmPathWarnsAPlainTempPathAloneIsANote) {
  auto found = SuspiciousFindings();
  for (const char* pid : {"102", "103", "115", "118"}) {
    ASSERT_TRUE(found.count(pid)) << pid;
    EXPECT_EQ(found[pid].severity, Severity::kWarn) << pid << ": " << found[pid].summary;
  }
  // /var/tmp/p, nothing else: a developer's test build looks the same.
  ASSERT_TRUE(found.count("104"));
  EXPECT_EQ(found["104"].severity, Severity::kInfo) << found["104"].summary;
}

TEST(SuspiciousFixtureTest, BuildAndRuntimeTempPathsAreNotReported) {
  auto found = SuspiciousFindings();
  EXPECT_FALSE(found.count("110")) << "go run: " << found["110"].summary;
  EXPECT_FALSE(found.count("111")) << "go test: " << found["111"].summary;
  EXPECT_FALSE(found.count("112")) << "AppImage mount: " << found["112"].summary;
  EXPECT_FALSE(found.count("113")) << "pip build env: " << found["113"].summary;
  EXPECT_FALSE(found.count("114")) << "go run in a PrivateTmp: " << found["114"].summary;
}

TEST(SuspiciousFixtureTest, RealMinerCasesInTempDirsAreStillReported) {
  auto found = SuspiciousFindings();
  // A hidden directory inside a service's PrivateTmp: judged as the service sees its /tmp.
  ASSERT_TRUE(found.count("115"));
  EXPECT_NE(found["115"].summary.find(".ICE-unix/dbus-update"), std::string::npos);
  // A miner's name is a sign wherever it runs from, an AppImage mount included.
  ASSERT_TRUE(found.count("116"));
  EXPECT_NE(found["116"].summary.find("known miner"), std::string::npos);
  EXPECT_EQ(found["116"].summary.find("temporary"), std::string::npos) << found["116"].summary;
  // Kinsing's miner: name and a plain /tmp path, two reasons.
  ASSERT_TRUE(found.count("117"));
  EXPECT_EQ(found["117"].severity, Severity::kWarn);
  EXPECT_NE(found["117"].summary.find("known miner"), std::string::npos);
  EXPECT_NE(found["117"].summary.find("temporary directory (/tmp/kdevtmpfsi)"), std::string::npos);
  ASSERT_TRUE(found.count("118"));
  EXPECT_NE(found["118"].summary.find("/tmp/.s/crond"), std::string::npos);
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
  // 101-106, 115-118.
  EXPECT_EQ(found.size(), 10u);
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

TEST(MinerSignsTest, TempExecutablePaths) {
  EXPECT_EQ(ClassifyTempExe("/usr/bin/python3"), TempExe::kNotTemp);
  EXPECT_EQ(ClassifyTempExe("/tmpfoo/a"), TempExe::kNotTemp);
  EXPECT_EQ(ClassifyTempExe("/tmp/go-build1234/b001/exe/main"), TempExe::kBuildOrRuntime);
  EXPECT_EQ(ClassifyTempExe("/var/tmp/go-build99/b001/exe/main (deleted)"),
            TempExe::kBuildOrRuntime);
  EXPECT_EQ(ClassifyTempExe("/tmp/go-buildx/b001/exe/main"), TempExe::kPlain);  // not go's
  EXPECT_EQ(ClassifyTempExe("/tmp/.mount_CursorAbC123/AppRun"), TempExe::kBuildOrRuntime);
  EXPECT_EQ(ClassifyTempExe("/tmp/.mount_"), TempExe::kHidden);
  EXPECT_EQ(ClassifyTempExe("/tmp/pip-req-build-abc/build/tool"), TempExe::kBuildOrRuntime);
  EXPECT_EQ(ClassifyTempExe("/tmp/systemd-private-ab-x.service-Y/tmp/go-build1/b001/exe/x"),
            TempExe::kBuildOrRuntime);
  EXPECT_EQ(ClassifyTempExe("/tmp/systemd-private-ab-x.service-Y/tmp/a.out"), TempExe::kPlain);
  EXPECT_EQ(ClassifyTempExe("/tmp/systemd-private-ab-x.service-Y/tmp/.x/a"), TempExe::kHidden);
  // /dev/shm is never exempt: nothing builds or mounts there.
  EXPECT_EQ(ClassifyTempExe("/dev/shm/go-build1/b001/exe/x"), TempExe::kHidden);
  EXPECT_EQ(ClassifyTempExe("/tmp/. /x"), TempExe::kHidden);
  EXPECT_EQ(ClassifyTempExe("/tmp/a.out"), TempExe::kPlain);
  EXPECT_EQ(ClassifyTempExe("/tmp/a.out (deleted)"), TempExe::kPlain);
}

// Under `watch` the probe keeps only a baseline of its run (ticks by pid, established inodes)
// for the next one, not the round's /proc walk: once the round's probes are through, nobody holds
// the walk (RecentFullScan keeps a weak reference only), so the next caller gets a new one. On a
// host with thousands of processes the walk held for the whole slow interval was megabytes.
TEST(SuspiciousProbeTest, WatchKeepsNoProcWalkBetweenRuns) {
  std::string root = testing::FixturePath("suspicious");
  auto settings = std::make_shared<Settings>();
  settings->fs = RootFs(root + "/proc", root + "/sys", root);
  ProbeContext ctx{settings, SteadyClock::now() + std::chrono::seconds(5)};
  ctx.continuous = true;
  ProbeOutput first = RunSuspiciousProbe(ctx);
  ASSERT_NE(first.next, nullptr);
  ctx.previous = first.next;
  ctx.deadline = SteadyClock::now() + std::chrono::seconds(5);
  ProbeOutput second = RunSuspiciousProbe(ctx);
  ASSERT_EQ(second.state, ProbeState::kOk) << second.reason;
  Snapshot snap;
  second.apply(snap);
  ASSERT_TRUE(snap.network.process_signs.has_value());
  EXPECT_EQ(snap.network.process_signs->scanned, 18);
  // Both carries alive, yet the walk is gone: a recent-enough walk is taken afresh.
  const TimePoint asked = SteadyClock::now();
  auto walk = RecentFullScan(settings->fs, std::chrono::hours(1), std::nullopt);
  EXPECT_GE(walk->started_at, asked);
}

}  // namespace
}  // namespace gpudoctor
