// Unit tests of the streaming scanner, the anchor filter, the aggregator and the kernel rules.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <thread>

#include "facts/pci_tuple.h"
#include "kmsg/anchor_filter.h"
#include "kmsg/log_scanner.h"
#include "rules/catalogue.h"
#include "rules/engine.h"
#include "rules/gpu_map.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

const KernelEvent* FindEvent(const KernelLogFacts& f, KernelEventKind kind, int xid = 0) {
  for (const auto& e : f.events) {
    if (e.kind == kind && (kind != KernelEventKind::kXid || e.xid == xid)) return &e;
  }
  return nullptr;
}

KernelLogFacts ScanFixture(const std::string& name, KernelLogScanOptions o = {}) {
  auto r = ScanLogPath(testing::FixturePath("kmsg/" + name), o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : KernelLogFacts{};
}

// Every search width this CPU has (scalar, AVX2, AVX-512BW) against a naive search; texts of
// 0-700 bytes so each wide loop's tail handling runs.
TEST(KmsgAnchorFilterTest, MatchesNaiveSearchOnRandomText) {
  std::vector<Anchor> anchors = {{"NVRM: ", "NVR"}, {"Link ", "Lin"}, {"oom-kill", "m-k"}};
  for (auto simd :
       {AnchorFilter::Simd::kScalar, AnchorFilter::Simd::kAvx2, AnchorFilter::Simd::kAvx512}) {
    AnchorFilter filter(anchors, simd);
    if (filter.simd() != simd) continue;  // the CPU lacks it
    std::mt19937 rng(7);
    const std::string alphabet = "NVRM: Linkom-l\nabc";
    for (int round = 0; round < 200; ++round) {
      std::string text;
      const size_t n = round < 100 ? 300 : rng() % 700;
      for (size_t i = 0; i < n; ++i) text += alphabet[rng() % alphabet.size()];
      if (text.empty()) continue;
      if (round % 3 == 0) text.insert(rng() % text.size(), "oom-kill");
      const char* b = text.data();
      const char* e = b + text.size();
      // Naive: every anchor start, in order of fingerprint position; compare the sets.
      std::vector<const char*> expected, got;
      for (size_t i = 0; i < text.size(); ++i) {
        for (const auto& a : anchors) {
          if (text.compare(i, a.text.size(), a.text) == 0) expected.push_back(b + i);
        }
      }
      for (const char* from = b; from < e;) {
        const char* hit = filter.Find(b, from, e);
        if (!hit) break;
        got.push_back(hit);
        from = hit + 1;
      }
      std::sort(got.begin(), got.end());
      got.erase(std::unique(got.begin(), got.end()), got.end());
      EXPECT_EQ(got, expected) << "round " << round << " simd " << static_cast<int>(simd);
    }
  }
}

TEST(KmsgScannerTest, DmesgFixtureH100) {
  KernelLogFacts f = ScanFixture("dmesg_r535_h100.log");
  EXPECT_EQ(f.boots_seen, 1);
  ASSERT_EQ(f.gpus.size(), 2u);
  EXPECT_EQ(f.gpus[0].serial, "1654123019876");
  const KernelEvent* x119 = FindEvent(f, KernelEventKind::kXid, 119);
  ASSERT_NE(x119, nullptr);
  EXPECT_EQ(x119->count, 2u);
  EXPECT_EQ(x119->processes, std::vector<std::string>{"nvidia-smi[3111]"});
  EXPECT_EQ(x119->first.boot_us, 1107204019);
  EXPECT_EQ(x119->last.boot_us, 1152881002);
  const KernelEvent* x95 = FindEvent(f, KernelEventKind::kXid, 95);
  ASSERT_NE(x95, nullptr);
  EXPECT_TRUE(x95->reset_required);
  EXPECT_FALSE(x95->drain_reset_required);
  const KernelEvent* hung = FindEvent(f, KernelEventKind::kHungTask);
  ASSERT_NE(hung, nullptr);
  EXPECT_TRUE(hung->nvidia_related);
  // The audit line quoting "NVRM: Xid" and the NVSwitch SXid line are not Xids.
  EXPECT_EQ(FindEvent(f, KernelEventKind::kXid, 12028), nullptr);
  int xid_events = 0;
  for (const auto& e : f.events) xid_events += e.kind == KernelEventKind::kXid;
  EXPECT_EQ(xid_events, 6);  // 48, 94, 63, 45 on 18:00; 119 on 2a:00; 95 on 18:00
  EXPECT_EQ(f.garbled_lines, 0u);
}

TEST(KmsgScannerTest, RawKmsgFixtureNvlink5AndThreeLineFallenOff) {
  KernelLogFacts f = ScanFixture("kmsg_raw_r570_b200.log");
  const KernelEvent* x149 = FindEvent(f, KernelEventKind::kXid, 149);
  ASSERT_NE(x149, nullptr);
  EXPECT_EQ(x149->count, 2u);
  EXPECT_TRUE(x149->nvlink_fatal);
  EXPECT_EQ(x149->ids, (std::vector<int64_t>{8, 9}));
  EXPECT_EQ(x149->pci->domain, 0x18u);
  const KernelEvent* lost = FindEvent(f, KernelEventKind::kGpuLost);
  ASSERT_NE(lost, nullptr);
  EXPECT_EQ(lost->subject, "0000:b3:00.0");
  EXPECT_NE(lost->sample.find("fallen off the bus"), std::string::npos);
  EXPECT_EQ(FindEvent(f, KernelEventKind::kXid, 79), nullptr);  // user-space record ignored
  EXPECT_EQ(f.non_kernel_lines, 1u);
  ASSERT_NE(FindEvent(f, KernelEventKind::kNetLink), nullptr);
  EXPECT_EQ(FindEvent(f, KernelEventKind::kNetLink)->tx_timeouts, 1u);
}

TEST(KmsgScannerTest, JournalAndSyslogFixtures) {
  setenv("TZ", "UTC", 1);
  tzset();
  KernelLogFacts j = ScanFixture("journal_short_r550_a100.log");
  const KernelEvent* x13 = FindEvent(j, KernelEventKind::kXid, 13);
  ASSERT_NE(x13, nullptr);
  EXPECT_EQ(x13->ids, std::vector<int64_t>{2});  // MIG GPU instance
  const KernelEvent* oom = FindEvent(j, KernelEventKind::kOom);
  ASSERT_NE(oom, nullptr);
  EXPECT_TRUE(oom->cgroup_oom);  // from the CONSTRAINT_MEMCG line and the prefix
  EXPECT_EQ(oom->max_anon_rss_kb, 61440000);
  const KernelEvent* link = FindEvent(j, KernelEventKind::kNetLink);
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->link_down, 2u);
  EXPECT_EQ(link->link_up, 2u);
  const KernelEvent* th = FindEvent(j, KernelEventKind::kCpuThermal);
  ASSERT_NE(th, nullptr);
  EXPECT_EQ(th->ids.size(), 2u);
  EXPECT_EQ(th->max_total_events, 41);
  EXPECT_EQ(FindEvent(j, KernelEventKind::kXid, 79), nullptr);  // persistenced's line

  KernelLogFacts s = ScanFixture("syslog_r390_k80.log");
  EXPECT_NE(FindEvent(s, KernelEventKind::kXid, 14), nullptr);  // oldest form without PCI:
  const KernelEvent* aer = FindEvent(s, KernelEventKind::kPcieAer);
  ASSERT_NE(aer, nullptr);
  EXPECT_EQ(aer->aer_severity, AerSeverity::kFatal);
  EXPECT_EQ(aer->vendor_id, 0x10deu);
  EXPECT_EQ(aer->error_names, std::vector<std::string>{"CmpltTO"});
  const KernelEvent* oldoom = FindEvent(s, KernelEventKind::kOom);
  ASSERT_NE(oldoom, nullptr);
  EXPECT_EQ(oldoom->count, 1u);  // "Kill process" + "Killed process" is one kill
  EXPECT_TRUE(FindEvent(s, KernelEventKind::kMce)->mce_exception);
  EXPECT_EQ(s.non_kernel_lines, 1u);  // the CRON line quoting NVRM: Xid
}

TEST(KmsgScannerTest, GarbageIsSkippedAndCounted) {
  KernelLogFacts f = ScanFixture("garbage.log");
  // Bad bus, absurd code, cut line and a non-numeric hung-task pid are skipped as garbled; an
  // absurd pid, invalid UTF-8 and control bytes no longer cost the Xid (issue 8 item 19).
  ASSERT_EQ(f.events.size(), 2u);
  const KernelEvent* x31 = FindEvent(f, KernelEventKind::kXid, 31);
  ASSERT_NE(x31, nullptr);
  EXPECT_EQ(x31->count, 3u);
  const KernelEvent* x13 = FindEvent(f, KernelEventKind::kXid, 13);
  ASSERT_NE(x13, nullptr);
  EXPECT_EQ(x13->processes, std::vector<std::string>{"a"});
  EXPECT_EQ(f.garbled_lines, 4u);
  EXPECT_EQ(f.repaired_lines, 3u);
}

TEST(KmsgScannerTest, FloodIsOneEventInBoundedMemory) {
  testing::TempDir dir;
  std::string chunk;
  for (int i = 0; i < 1000; ++i) {
    chunk += "[ 5000.000001] NVRM: Xid (PCI:0000:3b:00): 95, pid=" + std::to_string(7000 + i % 50) +
             ", name=python, Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST: No\n";
  }
  std::string path = dir.path() + "/flood.log";
  {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    for (int k = 0; k < 300; ++k)
      ASSERT_EQ(::write(fd, chunk.data(), chunk.size()), static_cast<ssize_t>(chunk.size()));
    ::close(fd);
  }
  auto r = ScanLogPath(path, {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->events.size(), 1u);
  EXPECT_EQ(r->events[0].count, 300000u);
  EXPECT_EQ(r->events[0].processes.size(), EventAggregator::kMaxProcesses);
  EXPECT_TRUE(r->events[0].processes_truncated);
  EXPECT_EQ(r->bytes_scanned, chunk.size() * 300);
}

TEST(KmsgScannerTest, ChunkBoundariesDoNotMatter) {
  std::string text = testing::ReadFileOrDie(testing::FixturePath("kmsg/dmesg_r535_h100.log"));
  KernelLogScanner whole;
  whole.ScanText(text);
  KernelLogFacts a = whole.Finish();
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  std::thread writer([&] {
    for (size_t i = 0; i < text.size(); i += 7) {
      ssize_t w = ::write(pipefd[1], text.data() + i, std::min<size_t>(7, text.size() - i));
      (void)w;
    }
    ::close(pipefd[1]);
  });
  KernelLogScanner streamed;
  ASSERT_TRUE(ScanLogFd(pipefd[0], streamed).ok());
  writer.join();
  ::close(pipefd[0]);
  KernelLogFacts b = streamed.Finish();
  ASSERT_EQ(a.events.size(), b.events.size());
  for (size_t i = 0; i < a.events.size(); ++i) {
    EXPECT_EQ(a.events[i].subject, b.events[i].subject);
    EXPECT_EQ(a.events[i].count, b.events[i].count);
  }
}

TEST(KmsgScannerTest, CurrentBootOnlyAndSince) {
  std::string text =
      "[    0.000000] Linux version 6.1.0\n"
      "[   10.000000] NVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=a, old boot\n"
      "[    0.000000] Linux version 6.1.0\n"
      "[   20.000000] NVRM: Xid (PCI:0000:3b:00): 31, pid=2, name=b, this boot\n";
  KernelLogScanOptions cur;
  cur.current_boot_only = true;
  KernelLogScanner s(cur);
  s.ScanText(text);
  KernelLogFacts f = s.Finish();
  EXPECT_EQ(f.boots_seen, 2);
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].xid, 31);

  KernelLogScanOptions since;
  since.boot_wall_us = int64_t{1700000000} * 1000000;
  since.since_wall_us = int64_t{1700000015} * 1000000;
  KernelLogScanner s2(since);
  s2.ScanText(text);
  KernelLogFacts g = s2.Finish();
  ASSERT_EQ(g.events.size(), 1u);
  EXPECT_EQ(g.events[0].xid, 31);
  EXPECT_EQ(g.events[0].first.wall_us, int64_t{1700000020} * 1000000);
  EXPECT_EQ(g.before_since_lines, 1u);
}

TEST(KmsgScannerTest, OverlongLinesAreTruncatedNotFatal) {
  std::string text = "[ 1.0] NVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=a, " +
                     std::string(20000, 'x') +
                     "\n[ 2.0] NVRM: Xid (PCI:0000:3b:00): 31, pid=1, x\n";
  KernelLogScanner s;
  s.ScanText(text);
  KernelLogFacts f = s.Finish();
  EXPECT_EQ(f.truncated_lines, 1u);
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].xid, 31);
}

// Issue 8 item 19: inputs that used to lose events.
TEST(KmsgScannerTest, CrlfLinesKeepTheirEvents) {
  KernelLogScanner s;
  s.ScanText(
      "[ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=a, GPU has fallen off the bus.\r\n"
      "[ 2.0] Out of memory: Killed process 42 (python) total-vm:1kB, anon-rss:2kB\r\n");
  KernelLogFacts f = s.Finish();
  EXPECT_EQ(f.garbled_lines, 0u);
  ASSERT_NE(FindEvent(f, KernelEventKind::kXid, 79), nullptr);
  EXPECT_NE(FindEvent(f, KernelEventKind::kOom), nullptr);
  EXPECT_EQ(FindEvent(f, KernelEventKind::kXid, 79)->sample.find('\r'), std::string::npos);
}

TEST(KmsgScannerTest, NulRunEndsALineSoTheNextBootMarkerCounts) {
  std::string text =
      "[ 10.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=a, dead boot\n"
      "[ 11.0] some half-written line";
  text += std::string(4096, '\0');
  text +=
      "[ 0.000000] Linux version 6.1.0 (gcc) #1 SMP\n"
      "[ 5.0] NVRM: Xid (PCI:0000:3b:00): 13, pid=2, name=b, this boot\n";
  KernelLogScanOptions cur;
  cur.current_boot_only = true;
  KernelLogScanner s(cur);
  s.ScanText(text);
  KernelLogFacts f = s.Finish();
  EXPECT_EQ(f.boots_seen, 1);
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].xid, 13);
  // The same through the file reader (NULs inside a buffered chunk).
  testing::TempDir dir;
  dir.Write("k.log", text);
  auto r = ScanLogPath(dir.path() + "/k.log", cur);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->events.size(), 1u);
  EXPECT_EQ(r->events[0].xid, 13);
}

TEST(KmsgScannerTest, InvalidUtf8AndOddPidKeepTheXid) {
  KernelLogScanner s;
  s.ScanText(
      "[ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=p\xff\xfey, GPU has fallen off\n"
      "[ 2.0] NVRM: Xid (PCI:0000:5e:00): 48, pid=-1, name=q, DBE\n"
      "[ 3.0] NVRM: Xid (PCI:0000:86:00): 94, pid='<none>', name=r, Contained\n");
  KernelLogFacts f = s.Finish();
  EXPECT_EQ(f.garbled_lines, 0u);
  EXPECT_EQ(f.repaired_lines, 1u);
  const KernelEvent* x79 = FindEvent(f, KernelEventKind::kXid, 79);
  ASSERT_NE(x79, nullptr);
  ASSERT_EQ(x79->processes.size(), 1u);
  EXPECT_EQ(x79->processes[0], "p??y[1]");
  const KernelEvent* x48 = FindEvent(f, KernelEventKind::kXid, 48);
  ASSERT_NE(x48, nullptr);
  EXPECT_EQ(x48->processes, std::vector<std::string>{"q"});
  EXPECT_NE(FindEvent(f, KernelEventKind::kXid, 94), nullptr);
  EXPECT_EQ(RepairLogText("a\xc3\xa9\x01\xe2\x82z"), "a\xc3\xa9???z");
  EXPECT_TRUE(IsCleanLogText(RepairLogText(std::string("\xf0\x9f\x98\x80\xf0\x9f\0x", 9))));
}

// IsCleanLogText skips printable ASCII 8 bytes at a time: it must judge every position of a bad
// byte (inside a block, at block edges, in the tail) exactly as the byte loop does.
TEST(KmsgScannerTest, CleanTextCheckFindsABadByteAtAnyPosition) {
  struct Token {
    std::string bytes;
    bool clean;
  };
  const std::vector<Token> tokens = {
      {"a", true},
      {"Z", true},
      {" ", true},
      {"~", true},
      {"\t", true},
      {"\xc3\xa9", true},
      {"\xe2\x82\xac", true},
      {"\n", false},
      {std::string(1, '\0'), false},
      {"\x1f", false},
      {"\x7f", false},
      {"\x80", false},
      {"\xff", false},
  };
  std::mt19937 rng(7);
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    bool clean = true;
    size_t n = rng() % 40;
    for (size_t i = 0; i < n; ++i) {
      // Mostly printable letters, as in a real log, so long clean runs reach the fast path.
      const Token& t = tokens[rng() % 8 == 0 ? rng() % tokens.size() : rng() % 2];
      text += t.bytes;
      clean = clean && t.clean;
    }
    ASSERT_EQ(IsCleanLogText(text), clean) << ::testing::PrintToString(text);
  }
  EXPECT_TRUE(IsCleanLogText("[    1.000000] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen"));
  EXPECT_FALSE(IsCleanLogText("[    1.000000] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fall\x7f"));
}

TEST(KmsgScannerTest, FullEventTableMakesRoomForASeriousEvent) {
  KernelLogScanner s;
  std::string text;
  for (size_t i = 0; i < EventAggregator::kMaxEvents + 10; ++i) {
    text += "[ 1.0] Out of memory: Killed process " + std::to_string(i) + " (job" +
            std::to_string(i) + ") total-vm:1kB, anon-rss:2kB\n";
  }
  text += "[ 9.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=a, GPU has fallen off the bus.\n";
  text += "[ 9.5] Out of memory: Killed process 99999 (late) total-vm:1kB, anon-rss:2kB\n";
  s.ScanText(text);
  KernelLogFacts f = s.Finish();
  EXPECT_EQ(f.events.size(), EventAggregator::kMaxEvents);
  EXPECT_NE(FindEvent(f, KernelEventKind::kXid, 79), nullptr);
  EXPECT_EQ(f.dropped_events, 12u);  // 10 OOM keys, 1 evicted for the Xid, the late OOM
}

TEST(KmsgScannerTest, SinceWithoutWallClockIsCountedAndReported) {
  KernelLogScanOptions o;
  o.since_wall_us = int64_t{1700000000} * 1000000;  // no boot_wall_us: dmesg stamps stay relative
  KernelLogScanner s(o);
  s.ScanText("[ 5.0] NVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=a, x\n");
  Snapshot snap;
  snap.kernel = s.Finish();
  EXPECT_EQ(snap.kernel.since_unapplied_lines, 1u);
  EXPECT_EQ(snap.kernel.events.size(), 1u);
  std::vector<Finding> out;
  KernelRules(snap, Thresholds{}, out);
  bool said = false;
  for (const auto& f : out) said |= f.id == "gpudoctor.kmsg.since_unapplied";
  EXPECT_TRUE(said);
}

TEST(KmsgScannerTest, FifoStopsAtTheDeadlineAndSaysPartial) {
  testing::TempDir dir;
  dir.MakeFifo("k.fifo");
  // A writer that is connected but stays silent: the read must still end at the deadline.
  int wfd = ::open((dir.path() + "/k.fifo").c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(wfd, 0);
  ASSERT_EQ(::write(wfd, "[ 1.0] usb 1-1: new\n", 20), 20);
  auto start = SteadyClock::now();
  auto r = ScanLogPath(dir.path() + "/k.fifo", {}, start + std::chrono::milliseconds(300));
  ::close(wfd);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_LT(SteadyClock::now() - start, std::chrono::seconds(3));
  EXPECT_TRUE(r->stopped_at_deadline);
  EXPECT_EQ(r->bytes_scanned, 20u);
  Snapshot snap;
  snap.kernel = *r;
  {
    std::vector<Finding> out;
    KernelRules(snap, Thresholds{}, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].id, "gpudoctor.kmsg.partial");
    EXPECT_EQ(out[0].severity, Severity::kWarn);
  }
  // /dev/zero never ends: stopped at the deadline, reported as partial.
  auto z = ScanLogPath("/dev/zero", {}, SteadyClock::now() + std::chrono::milliseconds(200));
  ASSERT_TRUE(z.ok());
  EXPECT_TRUE(z->stopped_at_deadline);
  snap.kernel = *z;
  std::vector<Finding> out;
  KernelRules(snap, Thresholds{}, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, "gpudoctor.kmsg.partial");
}

TEST(KmsgGpuMapTest, MapsByIntegerTuple) {
  std::vector<GpuBusEntry> nvml = {{0, "GPU-a", *ParsePciTuple("00000000:3B:00.0"), ""},
                                   {1, "GPU-b", *ParsePciTuple("00000000:86:00.0"), ""}};
  const GpuBusEntry* g = MapBusToGpu(*ParsePciTuple("PCI:0000:3b:00"), nvml);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->index, 0);
  EXPECT_EQ(MapBusToGpu(*ParsePciTuple("0001:3b:00"), nvml), nullptr);  // other domain
  auto merged = MergeGpuTables(nvml, {{std::nullopt, "GPU-a", *ParsePciTuple("0000:3b:00"), "SN1"},
                                      {std::nullopt, "GPU-c", *ParsePciTuple("0000:99:00"), ""}});
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].serial, "SN1");
}

std::vector<Finding> RulesOn(const std::string& fixture) {
  Snapshot snap;
  snap.kernel = ScanFixture(fixture);
  Thresholds t;
  std::vector<Finding> out;
  KernelRules(snap, t, out);
  return out;
}

const Finding* FindFinding(const std::vector<Finding>& v, const std::string& id,
                           const std::string& summary_part = "") {
  for (const auto& f : v) {
    if (f.id == id && f.summary.find(summary_part) != std::string::npos) return &f;
  }
  return nullptr;
}

// Issue 17 §4: a reload of the NVIDIA module (the GPU reset path: rmmod, nvidia-smi -r,
// modprobe) makes the GPU driver events before it history; what the probe of the new load logs
// just before its banner is current (the real log fallen_off_three_line.log).
TEST(KmsgRulesTest, DriverReloadMakesEarlierGpuEventsHistory) {
  auto judge = [](const std::string& text) {
    KernelLogScanner s(KernelLogScanOptions{});
    s.ScanText(text);
    Snapshot snap;
    snap.kernel = s.Finish();
    std::vector<Finding> out;
    KernelRules(snap, Thresholds{}, out);
    return std::make_pair(snap.kernel, out);
  };
  auto has = [](const std::vector<Finding>& fs, const std::string& id) -> const Finding* {
    for (const auto& f : fs) {
      if (f.id == id) return &f;
    }
    return nullptr;
  };
  const std::string boot =
      "[    6.2] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.148.06  Mon May  5 "
      "11:36:21 UTC 2025\n";
  const std::string xid =
      "[  100.0] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen "
      "off the bus.\n";
  const std::string reload =
      "[  900.5] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.158.01  Release "
      "Build  (dvs-builder@U22-I3-B10-02-5)  Mon Jun  2 13:13:04 UTC 2025\n";

  // Without a reload the Xid is current.
  auto [k0, before] = judge(boot + xid);
  EXPECT_EQ(k0.driver_loads, 1u);
  EXPECT_EQ(k0.last_driver_load_version, "570.148.06");
  ASSERT_NE(has(before, "gpu.xid"), nullptr);
  EXPECT_EQ(has(before, "driver.reloaded"), nullptr) << "the boot's own load is not a reload";

  // Reloaded 800 s later: the Xid and the lost GPU are history, named in one info finding.
  auto [k1, after] = judge(boot + xid + reload);
  EXPECT_EQ(k1.driver_loads, 2u);
  EXPECT_EQ(k1.last_driver_load_version, "570.158.01");
  EXPECT_EQ(has(after, "gpu.xid"), nullptr);
  EXPECT_EQ(has(after, "gpu.lost"), nullptr);
  const Finding* r = has(after, "driver.reloaded");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->severity, Severity::kInfo);
  EXPECT_EQ(r->action, Action::kNone);
  EXPECT_NE(r->summary.find("Xid 79 on"), std::string::npos) << r->summary;
  EXPECT_NE(r->summary.find("570.158.01"), std::string::npos) << r->summary;

  // The same Xid again after the reload is a new, current finding.
  auto [k2, again] = judge(boot + xid + reload +
                           "[ 1000.0] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', "
                           "name=<unknown>, GPU has fallen off the bus.\n");
  ASSERT_NE(has(again, "gpu.xid"), nullptr);

  // What the new load's probe logs just before its banner belongs to it.
  auto [k3, probe] =
      judge(testing::ReadFileOrDie(testing::FixturePath("real-logs/fallen_off_three_line.log")));
  EXPECT_EQ(k3.driver_loads, 1u);
  EXPECT_NE(has(probe, "gpu.lost"), nullptr);
  EXPECT_EQ(has(probe, "driver.reloaded"), nullptr);

  // A new boot in the same input starts the count again (current boot only).
  KernelLogScanOptions o;
  o.current_boot_only = true;
  KernelLogScanner s(o);
  s.ScanText(boot + xid + reload + "[    0.0] Linux version 6.8.0 (buildd@lcy02)\n");
  EXPECT_EQ(s.Finish().driver_loads, 0u);
}

TEST(KmsgRulesTest, XidFindingsCarrySeverityGpuAndEvidence) {
  auto out = RulesOn("dmesg_r535_h100.log");
  const Finding* x48 = FindFinding(out, "gpu.xid", "Xid 48 ");
  ASSERT_NE(x48, nullptr);
  EXPECT_EQ(x48->severity, Severity::kCrit);
  ASSERT_TRUE(x48->gpu.has_value());
  EXPECT_EQ(x48->gpu->uuid, "GPU-4a1e7b52-3b8c-6f9d-2e17-a0c5d3f81b64");
  EXPECT_EQ(x48->gpu->serial, "1654123019876");
  EXPECT_EQ(x48->layer, Layer::kHardware);
  const Finding* x63 = FindFinding(out, "gpu.xid", "Xid 63 ");
  ASSERT_NE(x63, nullptr);
  EXPECT_EQ(x63->severity, Severity::kInfo);
  const Finding* hung = FindFinding(out, "kernel.hung_task");
  ASSERT_NE(hung, nullptr);
  EXPECT_EQ(hung->severity, Severity::kCrit);  // NVIDIA task
  // Escalation: Xid 43 from two processes goes info → warn; threshold 3 leaves it info. An
  // application Xid stays below crit however many processes hit it (its action is restart_app).
  Snapshot snap;
  KernelLogScanner s;
  s.ScanText(
      "[1.0] NVRM: Xid (PCI:0000:3b:00): 43, pid=1, name=a, x\n"
      "[2.0] NVRM: Xid (PCI:0000:3b:00): 43, pid=2, name=b, x\n"
      "[3.0] NVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=a, x\n"
      "[4.0] NVRM: Xid (PCI:0000:3b:00): 13, pid=2, name=b, x\n");
  snap.kernel = s.Finish();
  Thresholds t;
  std::vector<Finding> a;
  KernelRules(snap, t, a);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].severity, Severity::kWarn);
  EXPECT_EQ(a[1].severity, Severity::kWarn);
  EXPECT_EQ(a[1].action, Action::kRestartApp);
  t.Set("gpu.xid", "escalate_distinct_processes", 3);
  std::vector<Finding> b;
  KernelRules(snap, t, b);
  EXPECT_EQ(b[0].severity, Severity::kInfo);
}

TEST(KmsgRulesTest, OtherSignalsAndThresholds) {
  auto out = RulesOn("syslog_r390_k80.log");
  const Finding* aer = FindFinding(out, "pcie.aer");
  ASSERT_NE(aer, nullptr);
  EXPECT_EQ(aer->severity, Severity::kCrit);
  ASSERT_TRUE(aer->gpu.has_value());  // vendor 10de
  EXPECT_EQ(aer->gpu->pci_bus_id, "0000:04:00.0");
  EXPECT_EQ(FindFinding(out, "hardware.mce")->severity, Severity::kCrit);
  EXPECT_EQ(FindFinding(out, "host.oom")->severity, Severity::kWarn);
  EXPECT_EQ(FindFinding(out, "net.link")->severity, Severity::kInfo);  // one down/up at boot
  auto j = RulesOn("journal_short_r550_a100.log");
  EXPECT_EQ(FindFinding(j, "net.link")->severity, Severity::kWarn);  // two downs: a flap
  EXPECT_EQ(FindFinding(j, "host.oom")->severity, Severity::kInfo);  // cgroup, once
  EXPECT_EQ(FindFinding(j, "host.thermal")->severity, Severity::kWarn);
  auto g = RulesOn("journal_short_iso_r560_gh200.log");
  const Finding* init = FindFinding(g, "driver.init_failed");
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init->gpu->uuid, "GPU-1b7c93e0-44d2-a1f6-08e5-6c2d9f3a7b15");
}

TEST(KmsgRulesTest, LostGpuWhenTheCatalogueHasTheEntry) {
  if (FindCatalogueEntry("gpu.lost") == nullptr) {
    GTEST_SKIP() << "gpu.lost is defined by the GPU layer's catalogue section";
  }
  auto out = RulesOn("kmsg_raw_r570_b200.log");
  const Finding* lost = FindFinding(out, "gpu.lost");
  ASSERT_NE(lost, nullptr);
  EXPECT_EQ(lost->gpu->pci_bus_id, "0000:b3:00.0");
}

TEST(KmsgRulesTest, EmptyFactsGiveNoFindings) {
  Snapshot snap;
  std::vector<Finding> out;
  KernelRules(snap, Thresholds{}, out);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace gpudoctor
