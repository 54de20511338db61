// sock_diag byte counters, /proc fd → process mapping and the per-process traffic sum, with
// real loopback sockets of this test process; the process scanner on a fixture procfs with a
// D-state task; and the rules for heavy senders, suspicious processes and localisation.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "net/proc_scan.h"
#include "net/process_signs.h"
#include "net/sock_diag.h"
#include "net/socket_traffic.h"
#include "rules/engine.h"
#include "socket_test_util.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

struct LoopbackPair {
  int listener = -1, client = -1, server = -1;
  LoopbackPair() {
    uint16_t port = 0;
    listener = testing::BindLoopback(4, &port);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    connect(client, reinterpret_cast<sockaddr*>(&a), sizeof a);
    server = accept(listener, nullptr, nullptr);
  }
  ~LoopbackPair() {
    close(client);
    close(server);
    close(listener);
  }
  // Sends n bytes client → server and reads them all, so they are acknowledged.
  void Transfer(size_t n) {
    std::string buf(n, 'x');
    size_t sent = 0;
    std::string sink(65536, '\0');
    size_t got = 0;
    while (got < n) {
      if (sent < n) {
        ssize_t w = send(client, buf.data() + sent, n - sent, MSG_DONTWAIT);
        if (w > 0) sent += w;
      }
      ssize_t r = recv(server, sink.data(), sink.size(), MSG_DONTWAIT);
      if (r > 0) got += r;
    }
  }
};

uint64_t Inode(int fd) {
  struct stat st {};
  fstat(fd, &st);
  return st.st_ino;
}

const TcpSocketInfo* Find(const std::vector<TcpSocketInfo>& v, uint64_t inode) {
  for (const auto& s : v) {
    if (s.inode == inode) return &s;
  }
  return nullptr;
}

TEST(SockDiagTest, SeesLoopbackBytesAndMapsThemToThisProcess) {
  LoopbackPair pair;
  pair.Transfer(100000);
  auto before = DumpTcpSockets();
  if (!before.ok()) GTEST_SKIP() << "no sock_diag here: " << before.status().message();
  const TcpSocketInfo* c = Find(*before, Inode(pair.client));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->state, kTcpEstablished);
  EXPECT_TRUE(c->remote_loopback);
  ASSERT_TRUE(c->bytes_acked.has_value()) << "kernel without tcpi_bytes_acked";
  // The ACK for the last segment may trail by a moment: at least all but one segment.
  EXPECT_GE(*c->bytes_acked, 100000u - 65536u);
  EXPECT_EQ(*Find(*before, Inode(pair.server))->bytes_received, 100000u);

  pair.Transfer(250000);
  // The server has read everything; wait (bounded) until the kernel also has the last ACK, so
  // `after` sees all 350000 bytes acknowledged. The check below tolerates one segment anyway.
  auto after = DumpTcpSockets();
  (void)testing::WaitUntil(
      [&] {
        after = DumpTcpSockets();
        const TcpSocketInfo* s = after.ok() ? Find(*after, Inode(pair.client)) : nullptr;
        return s != nullptr && s->bytes_acked && *s->bytes_acked >= 350000u;
      },
      std::chrono::seconds(5));
  ASSERT_TRUE(after.ok());
  ProcessScan scan = ScanProcesses(RootFs(), ProcScanOptions{});
  const ScannedProcess* me = nullptr;
  for (const auto& p : scan.processes) {
    if (p.pid == getpid()) me = &p;
  }
  ASSERT_NE(me, nullptr);
  EXPECT_TRUE(me->fds_read);
  EXPECT_NE(std::find(me->socket_inodes.begin(), me->socket_inodes.end(), Inode(pair.client)),
            me->socket_inodes.end());

  // Talking to ourselves over 127.0.0.1 is not outbound traffic: no process sum, no peer; the
  // bytes only show up as loopback_tx_bytes (client sent 250000, acked, within the window).
  SocketTrafficFacts t = AggregateSocketTraffic(*before, *after, scan.processes, 0.5);
  for (const auto& p : t.processes) {
    if (p.pid != getpid()) continue;
    for (const auto& peer : p.peers) EXPECT_NE(peer.peer.rfind("127.0.0.1:", 0), 0u);
  }
  EXPECT_GE(t.loopback_tx_bytes, 250000u - 65536u);
}

// The TCP dump reads both families in one kernel walk (legacy request, AF_UNSPEC); the listeners
// dump reads the listening table only. Both must still report every family's sockets.
TEST(SockDiagTest, BothFamiliesInOneDumpAndListenersOnly) {
  LoopbackPair pair;
  int listener6 = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener6, 0);
  sockaddr_in6 a6{};
  a6.sin6_family = AF_INET6;
  a6.sin6_addr = in6addr_loopback;
  if (bind(listener6, reinterpret_cast<sockaddr*>(&a6), sizeof a6) != 0) {
    close(listener6);
    GTEST_SKIP() << "no IPv6 loopback here: " << std::strerror(errno);
  }
  ASSERT_EQ(listen(listener6, 4), 0);
  socklen_t len6 = sizeof a6;
  getsockname(listener6, reinterpret_cast<sockaddr*>(&a6), &len6);
  const uint16_t port6 = ntohs(a6.sin6_port);
  auto all = DumpTcpSockets();
  auto listeners = DumpTcpListeners();
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_TRUE(listeners.ok()) << listeners.status().message();
  for (const auto* dump : {&*all, &*listeners}) {
    const TcpSocketInfo* v4 = Find(*dump, Inode(pair.listener));
    const TcpSocketInfo* v6 = Find(*dump, Inode(listener6));
    ASSERT_NE(v4, nullptr);
    ASSERT_NE(v6, nullptr);
    EXPECT_EQ(v4->family, AF_INET);
    EXPECT_EQ(v6->family, AF_INET6);
    EXPECT_EQ(v6->local_port, port6);
    EXPECT_EQ(v4->state, 10);
  }
  ASSERT_NE(Find(*all, Inode(pair.client)), nullptr);
  EXPECT_EQ(Find(*listeners, Inode(pair.client)), nullptr);
  for (const auto& s : *listeners) EXPECT_EQ(s.state, 10) << s.local;
  // No socket twice (one walk per family before: a dual-stack dump must not repeat any).
  std::set<uint64_t> inodes;
  for (const auto& s : *all) {  // (TIME_WAIT and SYN_RECV entries have no inode)
    if (s.inode != 0) {
      EXPECT_TRUE(inodes.insert(s.inode).second) << s.local;
    }
  }
  close(listener6);
}

// The second sample of a check: each socket of an earlier dump looked up by its addresses, ports
// and cookie gives what a dump gives for it now (bytes moved since included); a socket closed
// since is left out, without failing the others; sockets of both families are found.
TEST(SockDiagTest, LookupsGiveTheDumpsSocketsAsTheyAreNow) {
  LoopbackPair pair, gone;
  pair.Transfer(1000);
  auto before = DumpTcpSockets();
  if (!before.ok()) GTEST_SKIP() << "no sock_diag here: " << before.status().message();
  std::vector<const TcpSocketInfo*> known;
  for (int fd : {pair.client, pair.server, gone.client}) {
    known.push_back(Find(*before, Inode(fd)));
    ASSERT_NE(known.back(), nullptr);
  }
  pair.Transfer(50000);
  close(gone.client);  // FIN_WAIT or TIME_WAIT now: a socket of another identity (no inode)
  gone.client = -1;
  close(gone.server);
  gone.server = -1;
  std::vector<TcpSocketInfo> found;
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        auto r = LookupTcpSockets(known);
        if (!r.ok()) return false;
        found = std::move(*r);
        const TcpSocketInfo* c = Find(found, Inode(pair.client));
        return c != nullptr && c->bytes_acked && *c->bytes_acked >= 51000u;
      },
      std::chrono::seconds(5)));
  auto dump = DumpTcpSockets();
  ASSERT_TRUE(dump.ok());
  for (int fd : {pair.client, pair.server}) {
    const TcpSocketInfo* l = Find(found, Inode(fd));
    const TcpSocketInfo* d = Find(*dump, Inode(fd));
    ASSERT_NE(l, nullptr);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(l->local, d->local);
    EXPECT_EQ(l->remote, d->remote);
    EXPECT_EQ(l->state, kTcpEstablished);
    EXPECT_EQ(l->uid, d->uid);
  }
  EXPECT_EQ(*Find(found, Inode(pair.server))->bytes_received, 51000u);
  EXPECT_EQ(Find(found, known[2]->inode), nullptr);  // the closed one: not with its inode
  EXPECT_LE(found.size(), 3u);
  // Nothing asked, nothing found; more than one batch of 64 works (the same socket 150 times).
  auto none = LookupTcpSockets({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  std::vector<const TcpSocketInfo*> many(150, known[0]);
  auto r = LookupTcpSockets(many);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->size(), 150u);
}

TEST(SockDiagTest, ParserRejectsMalformedMessages) {
  std::vector<TcpSocketInfo> out;
  bool done = false;
  std::string junk(20, '\xff');
  EXPECT_FALSE(ParseSockDiagReply(junk, out, &done).ok());
  EXPECT_TRUE(ParseSockDiagReply("", out, &done).ok());
  EXPECT_FALSE(done);
  EXPECT_TRUE(out.empty());
}

TEST(ProcScanTest, ParsersForStatLinksAndPasswd) {
  auto s = ParsePidStat("42 (a) (b)) S 1 42 42 0 -1 4194560 0 0 0 0 700 300 0 0 20 0 1 0 9 0 0");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->comm, "a) (b)");
  EXPECT_EQ(s->state, 'S');
  EXPECT_EQ(s->utime_ticks, 700u);
  EXPECT_EQ(s->stime_ticks, 300u);
  EXPECT_FALSE(ParsePidStat("42 (x) S 1")->utime_ticks);  // short line: no CPU times
  EXPECT_FALSE(ParsePidStat("garbage").ok());
  EXPECT_EQ(*ParseSocketLink("socket:[12345]"), 12345u);
  EXPECT_FALSE(ParseSocketLink("pipe:[1]"));
  EXPECT_FALSE(ParseSocketLink("socket:[x]"));
  EXPECT_TRUE(IsNvidiaGpuDevice("/dev/nvidia3"));
  EXPECT_FALSE(IsNvidiaGpuDevice("/dev/nvidiactl"));
  EXPECT_FALSE(IsNvidiaGpuDevice("/dev/nvidia-uvm"));
  auto users =
      ParsePasswd("root:x:0:0::/root:/bin/sh\nbad line\nslurm:x:64030:64030::/:/bin/false\n");
  EXPECT_EQ(users.size(), 2u);
  EXPECT_EQ(users.at(64030), "slurm");
}

TEST(ProcScanTest, DStateTasksGetNoFdOrExeReads) {
  testing::TempDir dir;
  const char* tail = " 1 1 1 0 -1 0 0 0 0 0 50 50 0 0 20 0 1 0 9 0 0\n";
  dir.Write("proc/100/stat", std::string("100 (stuck) D") + tail);
  dir.Write("proc/100/comm", "stuck\n");
  dir.Symlink("socket:[555]", "proc/100/fd/3");
  dir.Symlink("/usr/bin/stuck", "proc/100/exe");
  dir.Write("proc/200/stat", std::string("200 (xmrig) R") + tail);
  dir.Write("proc/200/comm", "xmrig\n");
  dir.Symlink("socket:[777]", "proc/200/fd/4");
  dir.Symlink("/dev/nvidia0", "proc/200/fd/5");
  dir.Symlink("/tmp/.x/xmrig (deleted)", "proc/200/exe");
  dir.Write("proc/self", "");
  RootFs fs(dir.path() + "/proc", dir.path() + "/sys", dir.path());
  ProcScanOptions opts;
  opts.read_exe = true;
  ProcessScan scan = ScanProcesses(fs, opts);
  ASSERT_EQ(scan.processes.size(), 2u);
  EXPECT_EQ(scan.skipped_dstate, 1);
  const auto& stuck = scan.processes[0];
  EXPECT_EQ(stuck.state, 'D');
  EXPECT_FALSE(stuck.fds_read);
  EXPECT_TRUE(stuck.socket_inodes.empty());
  EXPECT_TRUE(stuck.exe.empty());
  const auto& miner = scan.processes[1];
  EXPECT_EQ(miner.comm, "xmrig");
  EXPECT_EQ(miner.cpu_ticks, 100u);
  EXPECT_EQ(miner.socket_inodes, std::vector<uint64_t>{777});
  EXPECT_TRUE(miner.gpu_device_open);
  EXPECT_EQ(miner.exe, "/tmp/.x/xmrig (deleted)");
}

// Kernel threads the walk at the window's start found are read through PID/stat alone in the walk
// after it (no directory, no stat(2): uid 0); a hinted pid that is a process's now is read in full.
constexpr unsigned kPfKthread = 0x00200000;  // PF_KTHREAD in a stat line's flags (field 9)

// A /proc/PID/stat line: state S, 50 + 50 ticks of CPU, started at tick 9.
std::string StatLine(int pid, const char* comm, unsigned flags, int ppid = 2) {
  return std::to_string(pid) + " (" + comm + ") S " + std::to_string(ppid) + " 0 0 0 -1 " +
         std::to_string(flags) + " 0 0 0 0 50 50 0 0 20 0 1 0 9 0 0\n";
}

TEST(ProcScanTest, KnownKernelThreadsAreReadThroughTheirStatAlone) {
  testing::TempDir dir;
  auto stat_line = [](int pid, const char* comm, int ppid, unsigned flags) {
    return StatLine(pid, comm, flags, ppid);
  };
  dir.Write("proc/2/stat", stat_line(2, "kthreadd", 0, kPfKthread));
  dir.Write("proc/50/stat", stat_line(50, "kworker/3:1", 2, kPfKthread));
  dir.Symlink("socket:[555]", "proc/50/fd/3");  // never read: a kernel thread has no files
  dir.Write("proc/60/stat", stat_line(60, "python3", 1, 0));  // was a kernel thread's pid
  dir.Symlink("socket:[888]", "proc/60/fd/7");
  dir.Symlink("/usr/bin/python3.11", "proc/60/exe");
  dir.Write("proc/100/stat", stat_line(100, "sshd", 1, 0));
  dir.Symlink("socket:[999]", "proc/100/fd/4");
  dir.Write("proc/self", "");
  if (::geteuid() == 0) {  // owners that only a stat(2) of the directory would report
    for (const char* pid : {"2", "50", "60", "100"}) {
      // Fails only where uid 4242 is not mapped (a user namespace): the owners stay root's.
      (void)::lchown((dir.path() + "/proc/" + pid).c_str(), 4242, 4242);
    }
  }
  struct stat own {};
  ASSERT_EQ(::stat((dir.path() + "/proc/60").c_str(), &own), 0);
  RootFs fs(dir.path() + "/proc", dir.path() + "/sys", dir.path());
  ProcScanOptions opts;
  opts.read_exe = true;
  const std::vector<int> hinted = {2, 50, 60};
  for (bool with_hint : {false, true}) {
    opts.kernel_threads = with_hint ? &hinted : nullptr;
    ProcessScan scan = ScanProcesses(fs, opts);
    ASSERT_EQ(scan.processes.size(), 4u) << with_hint;
    std::map<int, const ScannedProcess*> by_pid;
    for (const auto& p : scan.processes) by_pid[p.pid] = &p;
    for (int pid : {2, 50}) {
      const ScannedProcess& k = *by_pid.at(pid);
      EXPECT_TRUE(k.kernel_thread) << pid;
      EXPECT_EQ(k.uid, std::optional<uint32_t>(0)) << pid << " with hint " << with_hint;
      EXPECT_TRUE(k.socket_inodes.empty()) << pid;
      EXPECT_TRUE(k.exe.empty()) << pid;
      EXPECT_EQ(k.cpu_ticks, 100u) << pid;
    }
    EXPECT_EQ(by_pid.at(50)->comm, "kworker/3:1");
    for (int pid : {60, 100}) {
      const ScannedProcess& p = *by_pid.at(pid);
      EXPECT_FALSE(p.kernel_thread) << pid;
      EXPECT_EQ(p.uid, std::optional<uint32_t>(own.st_uid)) << pid << " with hint " << with_hint;
      EXPECT_TRUE(p.fds_read) << pid;
    }
    EXPECT_EQ(by_pid.at(60)->socket_inodes, std::vector<uint64_t>{888}) << with_hint;
    EXPECT_EQ(by_pid.at(60)->exe, "/usr/bin/python3.11") << with_hint;
    EXPECT_EQ(by_pid.at(100)->socket_inodes, std::vector<uint64_t>{999}) << with_hint;
  }
}

// skip_kernel_threads (`check`'s walk after its window): the hinted kernel threads are not read
// at all and are absent; a kernel thread the hint does not name is read and listed as one; the
// processes are read in full.
TEST(ProcScanTest, HintedKernelThreadsAreSkippedWhenAsked) {
  testing::TempDir dir;
  auto stat_line = [](int pid, const char* comm, unsigned flags) {
    return StatLine(pid, comm, flags);
  };
  dir.Write("proc/2/stat", stat_line(2, "kthreadd", kPfKthread));
  dir.Write("proc/50/stat", "not a stat line: never read\n");  // hinted: passed over unread
  dir.Write("proc/60/stat", stat_line(60, "kworker/u8:2", kPfKthread));  // new since the hint
  dir.Write("proc/100/stat", stat_line(100, "sshd", 0));
  dir.Symlink("socket:[999]", "proc/100/fd/4");
  RootFs fs(dir.path() + "/proc", dir.path() + "/sys", dir.path());
  const std::vector<int> hinted = {2, 50};
  ProcScanOptions opts;
  opts.read_exe = true;
  opts.kernel_threads = &hinted;
  opts.skip_kernel_threads = true;
  ProcessScan scan = ScanProcesses(fs, opts);
  EXPECT_EQ(scan.kernel_threads_skipped, 2);
  EXPECT_EQ(scan.kernel_threads_hinted, 0);
  std::map<int, const ScannedProcess*> by_pid;
  for (const auto& p : scan.processes) by_pid[p.pid] = &p;
  ASSERT_EQ(by_pid.size(), 2u);
  EXPECT_TRUE(by_pid.at(60)->kernel_thread);
  EXPECT_EQ(by_pid.at(100)->socket_inodes, std::vector<uint64_t>{999});

  opts.skip_kernel_threads = false;  // the same hint without the skip: read through their stat
  scan = ScanProcesses(fs, opts);
  EXPECT_EQ(scan.kernel_threads_skipped, 0);
  EXPECT_EQ(scan.kernel_threads_hinted, 1);  // 2; 50's stat does not parse, so it is not listed
  EXPECT_EQ(scan.processes.size(), 3u);
}

// `watch`'s walks (RecentFullScan): each new walk of a procfs reads the kernel threads the walk
// before it found through their stat alone; a pid that a process has taken since is read in
// full (fds, exe), and a walk of another procfs gets no hint from this one.
TEST(ProcScanTest, WatchWalksReadTheLastWalksKernelThreadsThroughTheirStat) {
  testing::TempDir dir;
  auto stat_line = [](int pid, const char* comm, unsigned flags) {
    return StatLine(pid, comm, flags);
  };
  dir.Write("proc/2/stat", stat_line(2, "kthreadd", kPfKthread));
  dir.Write("proc/50/stat", stat_line(50, "kworker/3:1", kPfKthread));
  dir.Write("proc/60/stat", stat_line(60, "ksoftirqd/0", kPfKthread));
  dir.Write("proc/100/stat", stat_line(100, "sshd", 0));
  dir.Symlink("socket:[999]", "proc/100/fd/4");
  RootFs fs(dir.path() + "/proc", dir.path() + "/sys", dir.path());
  const auto now = std::chrono::milliseconds(0);  // max_age 0: every call walks again

  auto first = RecentFullScan(fs, now, std::nullopt);
  ASSERT_EQ(first->processes.size(), 4u);
  EXPECT_EQ(first->kernel_threads_hinted, 0);  // nothing walked this procfs before

  // pid 60 now belongs to a process with a socket and an exe.
  dir.Write("proc/60/stat", stat_line(60, "python3", 0));
  dir.Symlink("socket:[888]", "proc/60/fd/7");
  dir.Symlink("/usr/bin/python3.11", "proc/60/exe");
  auto second = RecentFullScan(fs, now, std::nullopt);
  ASSERT_EQ(second->processes.size(), 4u);
  EXPECT_EQ(second->kernel_threads_hinted, 2);  // 2 and 50; 60 is a process's now
  std::map<int, const ScannedProcess*> by_pid;
  for (const auto& p : second->processes) by_pid[p.pid] = &p;
  EXPECT_TRUE(by_pid.at(50)->kernel_thread);
  EXPECT_EQ(by_pid.at(50)->comm, "kworker/3:1");
  EXPECT_EQ(by_pid.at(50)->cpu_ticks, 100u);
  EXPECT_FALSE(by_pid.at(60)->kernel_thread);
  EXPECT_EQ(by_pid.at(60)->socket_inodes, std::vector<uint64_t>{888});
  EXPECT_EQ(by_pid.at(60)->exe, "/usr/bin/python3.11");
  EXPECT_EQ(by_pid.at(100)->socket_inodes, std::vector<uint64_t>{999});

  auto third = RecentFullScan(fs, now, std::nullopt);
  EXPECT_EQ(third->kernel_threads_hinted, 2);  // the hint follows the last walk: 2 and 50

  testing::TempDir other;
  other.Write("proc/2/stat", stat_line(2, "kthreadd", kPfKthread));
  RootFs other_fs(other.path() + "/proc", other.path() + "/sys", other.path());
  EXPECT_EQ(RecentFullScan(other_fs, now, std::nullopt)->kernel_threads_hinted, 0);
}

// A process with more fds than one getdents64 buffer holds (the fd directory is read in 8 KiB
// pieces): every link is read, the socket owner of each inode (a stratum-port socket among them)
// is found, and a GPU device behind the last fd is seen.
TEST(ProcScanTest, ManyFdsAreAllReadAcrossDirectoryReads) {
  testing::TempDir dir;
  const char* tail = " 1 1 1 0 -1 0 0 0 0 0 50 50 0 0 20 0 1 0 9 0 0\n";
  dir.Write("proc/300/stat", std::string("300 (pool) S") + tail);
  constexpr int kFds = 1500;
  for (int fd = 0; fd < kFds; ++fd) {
    dir.Symlink("socket:[" + std::to_string(100000 + kFds - fd) + "]",
                "proc/300/fd/" + std::to_string(fd));
  }
  dir.Symlink("/dev/nvidia1", "proc/300/fd/" + std::to_string(kFds));
  dir.Write("proc/self", "");
  RootFs fs(dir.path() + "/proc", dir.path() + "/sys", dir.path());
  ProcessScan scan = ScanProcesses(fs, ProcScanOptions{});
  ASSERT_EQ(scan.processes.size(), 1u);
  const ScannedProcess& p = scan.processes[0];
  EXPECT_TRUE(p.fds_read);
  EXPECT_FALSE(scan.truncated);
  ASSERT_EQ(p.socket_inodes.size(), static_cast<size_t>(kFds));
  EXPECT_TRUE(std::is_sorted(p.socket_inodes.begin(), p.socket_inodes.end()));
  EXPECT_EQ(p.socket_inodes.front(), 100001u);
  EXPECT_EQ(p.socket_inodes.back(), static_cast<uint64_t>(100000 + kFds));
  EXPECT_TRUE(p.gpu_device_open);
  // The owner of a socket to a stratum port (3333) is this process.
  std::vector<TcpSocketInfo> after = {
      testing::Sock(100777, kTcpEstablished, "203.0.113.9:3333", 3333)};
  ProcessSignInputs in;
  in.after = &scan;
  in.sockets_after = &after;
  ProcessSignFacts facts = CollectProcessSigns(in);
  ASSERT_EQ(facts.processes.size(), 1u);
  EXPECT_EQ(facts.processes[0].pid, 300);
  ASSERT_EQ(facts.processes[0].remote_ports.size(), 1u);
  EXPECT_EQ(facts.processes[0].remote_ports[0], 3333);
}

// The running kernel's procfs: a fd directory larger than one getdents64 reply (8 KiB) is read
// whole: this process with 700 sockets has every one of them found.
TEST(ProcScanTest, RealProcfsFdDirectoriesAreReadWholeWhateverTheirSize) {
  std::vector<int> fds;
  for (int i = 0; i < 700; ++i) {
    int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0) << "socket " << i;
    fds.push_back(fd);
  }
  std::vector<uint64_t> want;
  for (int fd : fds) {
    struct stat st {};
    ASSERT_EQ(::fstat(fd, &st), 0);
    want.push_back(st.st_ino);
  }
  std::sort(want.begin(), want.end());
  ProcessScan scan = ScanProcesses(RootFs(), ProcScanOptions{});
  for (int fd : fds) ::close(fd);
  const ScannedProcess* self = nullptr;
  for (const ScannedProcess& p : scan.processes) {
    if (p.pid == ::getpid()) self = &p;
  }
  ASSERT_NE(self, nullptr);
  ASSERT_TRUE(self->fds_read);
  EXPECT_TRUE(std::includes(self->socket_inodes.begin(), self->socket_inodes.end(), want.begin(),
                            want.end()))
      << self->socket_inodes.size() << " socket inodes found";
}

using testing::Sock;

TEST(ProcessSignsTest, PersistentOutboundCpuAndDeletedExe) {
  ProcessScan before, after;
  ScannedProcess miner;
  miner.pid = 200;
  miner.comm = "kworker-fake";
  miner.cpu_ticks = 1000;
  miner.uid = 1001;
  before.processes.push_back(miner);
  miner.cpu_ticks = 1095;  // 95 ticks in 1 s at 100 Hz = 95%
  miner.socket_inodes = {777, 778, 779};
  miner.exe = "/tmp/.x/kw (deleted)";
  miner.gpu_device_open = true;
  after.processes.push_back(miner);
  ScannedProcess idle;
  idle.pid = 300;
  idle.comm = "sleep";
  before.processes.push_back(idle);
  after.processes.push_back(idle);
  std::vector<TcpSocketInfo> s0 = {Sock(777, kTcpEstablished, "203.0.113.9:4444", 4444),
                                   Sock(779, kTcpEstablished, "10.0.0.9:22", 40001, 22)};
  std::vector<TcpSocketInfo> s1 = {
      Sock(777, kTcpEstablished, "203.0.113.9:4444", 4444),
      Sock(778, kTcpEstablished, "203.0.113.10:443", 443),   // new: not persistent
      Sock(779, kTcpEstablished, "10.0.0.9:22", 40001, 22),  // inbound to sshd's port
      Sock(900, 10, "0.0.0.0:0", 0, 22)};                    // the listener on 22
  std::map<uint32_t, std::string> users = {{1001, "mallory"}};
  ProcessSignsBaseline start = MakeProcessSignsBaseline(before, &s0);
  ProcessSignInputs in{&start, &after, &s1, &users, 1.0, 100, 20};
  ProcessSignFacts facts = CollectProcessSigns(in);
  ASSERT_EQ(facts.processes.size(), 1u);  // the idle process has no sign
  const auto& p = facts.processes[0];
  EXPECT_DOUBLE_EQ(*p.cpu_pct, 95);
  EXPECT_EQ(p.user, "mallory");
  EXPECT_TRUE(p.exe_deleted);
  EXPECT_EQ(p.outbound_peers, std::vector<std::string>{"203.0.113.9:4444"});
  // Remote ports: every outbound connection at the end, persistent or not (a pool port on a new
  // connection is a sign too); the inbound one to sshd is not outbound.
  EXPECT_EQ(p.remote_ports, (std::vector<int>{4444, 443}));

  Snapshot snap;
  snap.network.process_signs = facts;
  snap.network.process_signs->processes[0].gpu_user_known = false;
  auto findings = EvaluateRules(snap, Thresholds());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "proc.suspicious");
  EXPECT_EQ(findings[0].severity, Severity::kWarn);
  EXPECT_NE(findings[0].summary.find("stratum port(s) 4444"), std::string::npos);
  EXPECT_NE(findings[0].summary.find("high CPU (95%"), std::string::npos);
  EXPECT_NE(findings[0].summary.find("deleted"), std::string::npos);
  EXPECT_NE(findings[0].summary.find("not one of the known GPU users"), std::string::npos);
  EXPECT_EQ(findings[0].summary.rfind("worth inspecting", 0), 0u);
}

// The start of a window as `watch` carries it: byte counters by inode, sorted, inode 0 left out,
// and of an inode dumped twice the later entry (as the table's map kept it).
TEST(SocketTrafficTest, StartOfWindowKeepsByteCountersByInode) {
  auto with_bytes = [](uint64_t inode, uint64_t acked) {
    TcpSocketInfo s = Sock(inode, kTcpEstablished, "10.0.0.7:443", 443);
    s.bytes_acked = acked;
    s.bytes_received = acked / 2;
    return s;
  };
  std::vector<TcpSocketInfo> table = {with_bytes(9, 100), with_bytes(0, 5), with_bytes(4, 10),
                                      with_bytes(9, 300)};
  std::vector<SocketBytes> start = SocketBytesOf(table);
  ASSERT_EQ(start.size(), 2u);
  EXPECT_EQ(start[0].inode, 4u);
  EXPECT_EQ(start[1].inode, 9u);
  EXPECT_EQ(start[1].acked, 300u);
  EXPECT_EQ(start[1].received, 150u);
  ScannedProcess owner;
  owner.pid = 42;
  owner.socket_inodes = {4, 9, 11};
  std::vector<TcpSocketInfo> end = {with_bytes(4, 1010), with_bytes(9, 1300), with_bytes(11, 7)};
  SocketTrafficFacts from_start = AggregateSocketTraffic(start, end, {owner}, 1.0);
  SocketTrafficFacts from_table = AggregateSocketTraffic(table, end, {owner}, 1.0);
  ASSERT_EQ(from_start.processes.size(), 1u);
  // 1000 + 1000 grown, 7 on a socket opened in the window.
  EXPECT_EQ(from_start.processes[0].tx_bytes, 2007u);
  EXPECT_EQ(from_start.processes[0].rx_bytes, 500u + 500u + 3u);
  ASSERT_EQ(from_table.processes.size(), 1u);
  EXPECT_EQ(from_table.processes[0].tx_bytes, from_start.processes[0].tx_bytes);
  EXPECT_EQ(from_table.processes[0].rx_bytes, from_start.processes[0].rx_bytes);
}

// A pid reused by another task between the two scans (watch: minutes apart) is not the same
// process: no CPU share from the old task's ticks.
TEST(ProcessSignsTest, ReusedPidGetsNoCpuShare) {
  ProcessScan before, after;
  ScannedProcess old_task;
  old_task.pid = 200;
  old_task.cpu_ticks = 10;
  old_task.start_ticks = 5000;
  before.processes.push_back(old_task);
  ScannedProcess new_task = old_task;
  new_task.cpu_ticks = 5000;
  new_task.start_ticks = 90000;
  after.processes.push_back(new_task);
  ProcessSignsBaseline start = MakeProcessSignsBaseline(before, nullptr);
  ProcessSignInputs in{&start, &after, nullptr, nullptr, 60.0, 100, 20};
  ProcessSignFacts facts = CollectProcessSigns(in);
  for (const auto& p : facts.processes) EXPECT_FALSE(p.cpu_pct) << p.pid;
  after.processes[0].start_ticks = 5000;  // the same task: 4990 ticks over 60 s at 100 Hz
  facts = CollectProcessSigns(in);
  ASSERT_EQ(facts.processes.size(), 1u);
  EXPECT_NEAR(*facts.processes[0].cpu_pct, 4990.0 / 100 / 60 * 100, 1e-9);
}

// Kernel threads are never kept, however busy: the busiest by CPU are user processes only, the
// same whether the walk listed the kernel threads (`watch`) or left them out (`check`).
TEST(ProcessSignsTest, KernelThreadsAreNeverKeptHoweverBusy) {
  ProcessScan before, after;
  ScannedProcess kworker;
  kworker.pid = 7;
  kworker.comm = "kworker/0:1+events";
  kworker.kernel_thread = true;
  kworker.cpu_ticks = 10;
  kworker.start_ticks = 100;
  ScannedProcess app = kworker;
  app.pid = 300;
  app.comm = "python3";
  app.kernel_thread = false;
  before.processes = {kworker, app};
  kworker.cpu_ticks += 5000;  // a kernel thread at 83% of a core
  app.cpu_ticks += 60;        // a process at 1%
  after.processes = {kworker, app};
  ProcessSignsBaseline start = MakeProcessSignsBaseline(before, nullptr);
  ProcessSignInputs in{&start, &after, nullptr, nullptr, 60.0, 100, 20};
  ProcessSignFacts facts = CollectProcessSigns(in);
  ASSERT_EQ(facts.processes.size(), 1u);
  EXPECT_EQ(facts.processes[0].pid, 300);
  EXPECT_NEAR(*facts.processes[0].cpu_pct, 1.0, 1e-9);
  after.processes.erase(after.processes.begin());  // `check`'s walk after the window
  ProcessSignFacts without = CollectProcessSigns(in);
  ASSERT_EQ(without.processes.size(), 1u);
  EXPECT_EQ(without.processes[0].pid, 300);
}

TEST(ProcessSignsTest, MinerNameAloneWarnsDeletedExeAloneIsNotReported) {
  Snapshot snap;
  ProcessSignFacts facts;
  ProcessSigns a;
  a.pid = 1;
  a.comm = "XMRig";
  ProcessSigns b;
  b.pid = 2;
  b.comm = "nginx";
  b.exe_deleted = true;
  ProcessSigns c;
  c.pid = 3;
  c.comm = "python";
  c.gpu_device_open = true;  // no known-user list configured: not a sign
  ProcessSigns d;            // a GPU process of an unknown user: a weak sign on its own
  d.pid = 4;
  d.comm = "python";
  d.gpu_device_open = true;
  d.gpu_user_known = false;
  ProcessSigns e = d;  // ... and with a deleted executable: two signs
  e.pid = 5;
  e.exe_deleted = true;
  facts.processes = {a, b, c, d, e};
  snap.network.process_signs = facts;
  auto findings = EvaluateRules(snap, Thresholds());
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[0].severity, Severity::kWarn);
  EXPECT_EQ(findings[0].subject, "1");
  EXPECT_EQ(findings[1].severity, Severity::kInfo);
  EXPECT_EQ(findings[1].subject, "4");
  EXPECT_EQ(findings[2].severity, Severity::kWarn);
  EXPECT_EQ(findings[2].subject, "5");
}

TEST(OutboundRulesTest, HeavySenderNamedWithPeers) {
  Snapshot snap;
  SocketTrafficFacts t;
  t.window_s = 0.25;
  ProcessTraffic big;
  big.pid = 4242;
  big.comm = "rsync";
  big.tx_bytes = 50'000'000;
  big.tx_bytes_per_s = 200e6;
  big.peers = {{"198.51.100.7:873", 50'000'000, 0}};
  ProcessTraffic small = big;
  small.pid = 7;
  small.tx_bytes_per_s = 1e6;
  t.processes = {big, small};
  snap.network.sockets = t;
  auto findings = EvaluateRules(snap, Thresholds());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "net.outbound.heavy");
  EXPECT_EQ(findings[0].subject, "4242");
  bool has_peers = false;
  for (const auto& e : findings[0].evidence) {
    if (e.name == "peers") {
      has_peers = std::get<std::string>(e.value).find("198.51.100.7:873") != std::string::npos;
    }
  }
  EXPECT_TRUE(has_peers);
}

TargetProbeFacts Host(const char* name, TargetGroup g, double median_ms, double loss_pct) {
  TargetProbeFacts h;
  h.name = name;
  h.group = g;
  h.address = name;
  h.method = "icmp-raw";
  h.sent = 5;
  h.received = static_cast<int>(5 - loss_pct / 20);
  h.loss_pct = loss_pct;
  if (h.received > 0) h.rtt_median_ms = median_ms;
  return h;
}

std::string Verdict(const std::vector<Finding>& findings) {
  for (const auto& f : findings) {
    if (f.id == "net.localize") return std::get<std::string>(f.evidence[0].value);
  }
  return "";
}

TEST(LocalizeRulesTest, LocalTargetAndNone) {
  Snapshot snap;
  snap.network.reachability =
      ReachabilityFacts{{Host("10.0.0.1", TargetGroup::kTarget, 250, 0),
                         Host("10.0.0.2", TargetGroup::kTarget, 1, 40),
                         Host("192.0.2.50", TargetGroup::kReference, 400, 0)},
                        false};
  auto all_bad = EvaluateRules(snap, Thresholds());
  EXPECT_EQ(Verdict(all_bad), "local");
  int per_target = 0;
  for (const auto& f : all_bad) per_target += f.id == "net.latency.high" || f.id == "net.loss";
  EXPECT_EQ(per_target, 2);  // references never get per-host findings

  snap.network.reachability->hosts[2].rtt_median_ms = 20;  // the reference is fine
  EXPECT_EQ(Verdict(EvaluateRules(snap, Thresholds())), "target");

  snap.network.reachability->hosts[0].rtt_median_ms = 1;
  snap.network.reachability->hosts[1].loss_pct = 0;
  snap.network.reachability->hosts[1].received = 5;
  EXPECT_EQ(Verdict(EvaluateRules(snap, Thresholds())), "");
}

const Finding* Localize(const std::vector<Finding>& findings) {
  for (const auto& f : findings) {
    if (f.id == "net.localize") return &f;
  }
  return nullptr;
}

// Issue 8 item 5: one target and nothing to compare says so; steps fit the verdict.
TEST(LocalizeRulesTest, OneTargetWithoutReferencesIsUndecided) {
  Snapshot snap;
  snap.network.reachability =
      ReachabilityFacts{{Host("10.0.0.1", TargetGroup::kTarget, 250, 0)}, false};
  auto findings = EvaluateRules(snap, Thresholds());
  const Finding* f = Localize(findings);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Verdict(findings), "undecided");
  EXPECT_EQ(f->summary.find("other targets are fine"), std::string::npos) << f->summary;
  EXPECT_NE(f->summary.find("nothing to compare"), std::string::npos) << f->summary;
  ASSERT_EQ(f->next_steps.size(), 1u);
  EXPECT_NE(f->next_steps[0].find("--reference"), std::string::npos);

  // With a healthy reference: verdict target, and only the target step.
  snap.network.reachability->hosts.push_back(Host("192.0.2.50", TargetGroup::kReference, 20, 0));
  findings = EvaluateRules(snap, Thresholds());
  f = Localize(findings);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Verdict(findings), "target");
  ASSERT_EQ(f->next_steps.size(), 1u);
  EXPECT_NE(f->next_steps[0].find("mtr"), std::string::npos);
  EXPECT_EQ(f->next_steps[0].find("`local`"), std::string::npos);
  EXPECT_EQ(f->next_steps[0].find("ethtool"), std::string::npos);

  // Reference slow too: local, and only the local step.
  snap.network.reachability->hosts[1].rtt_median_ms = 400;
  findings = EvaluateRules(snap, Thresholds());
  f = Localize(findings);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Verdict(findings), "local");
  ASSERT_EQ(f->next_steps.size(), 1u);
  EXPECT_NE(f->next_steps[0].find("ip -s link"), std::string::npos);
}

// A reference is slow by the targets' own bar (warn_rtt_ms, 100 ms), not by a fixed 300 ms: a
// 250 ms reference beside a 150 ms target means the server's own line, not the target.
TEST(LocalizeRulesTest, ReferenceIsJudgedByTheTargetsBar) {
  Snapshot snap;
  snap.network.reachability =
      ReachabilityFacts{{Host("10.0.0.1", TargetGroup::kTarget, 150, 0),
                         Host("192.0.2.50", TargetGroup::kReference, 250, 0)},
                        false};
  EXPECT_EQ(Verdict(EvaluateRules(snap, Thresholds())), "local");
  // A site that gives references their own bar gets it.
  ThresholdOverrides o;
  o.Set("net.latency.high", "reference_warn_rtt_ms", 300);
  EXPECT_EQ(Verdict(EvaluateRules(snap, Thresholds(o))), "target");
}

TEST(LocalizeRulesTest, UnreachableTargetIsCriticalLoss) {
  Snapshot snap;
  snap.network.reachability =
      ReachabilityFacts{{Host("storage:2049", TargetGroup::kTarget, 0, 100)}, false};
  auto findings = EvaluateRules(snap, Thresholds());
  const Finding* loss = nullptr;
  for (const auto& f : findings) {
    if (f.id == "net.loss") loss = &f;
  }
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->severity, Severity::kCrit);
  EXPECT_NE(loss->summary.find("unreachable"), std::string::npos);
  EXPECT_EQ(Verdict(findings), "undecided");  // one target, no references: nothing to compare
}

}  // namespace
}  // namespace gpudoctor
