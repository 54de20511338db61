// The Xid-storm shortcut (XidRepeatCache, KernelLogScanOptions::repeat_shortcut) gives exactly
// the facts of the full parse: same events, counts, times, process lists, counters.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>

#include "kmsg/log_scanner.h"
#include "kmsg/xid_repeat_cache.h"

namespace gpudoctor {
namespace {

std::string Time(const LogTime& t) {
  return (t.boot_us ? std::to_string(*t.boot_us) : "-") + "/" +
         (t.wall_us ? std::to_string(*t.wall_us) : "-");
}

// Everything the scanner reports, as text: two scans compare equal when this is equal.
std::string Describe(const KernelLogFacts& f) {
  std::string s =
      "examined " + std::to_string(f.lines_examined) + " garbled " +
      std::to_string(f.garbled_lines) + " repaired " + std::to_string(f.repaired_lines) +
      " truncated " + std::to_string(f.truncated_lines) + " before " +
      std::to_string(f.before_since_lines) + " unapplied " +
      std::to_string(f.since_unapplied_lines) + " dropped " + std::to_string(f.dropped_events) +
      " boots " + std::to_string(f.boots_seen) + "\n";
  for (const KernelEvent& e : f.events) {
    s += std::to_string(static_cast<int>(e.kind)) + " " + e.subject + " xid " +
         std::to_string(e.xid) + " n " + std::to_string(e.count) + " " + Time(e.first) + " " +
         Time(e.last) + " rst " + std::to_string(e.reset_required) +
         std::to_string(e.drain_reset_required) + " [" + e.sample + "] procs";
    for (const auto& p : e.processes) s += " " + p;
    s += e.processes_truncated ? " ..." : "";
    s += " ids";
    for (int64_t id : e.ids) s += " " + std::to_string(id);
    s += " nvlink " + e.nvlink_unit + std::to_string(e.nvlink_fatal) + " actions";
    for (const auto& a : e.recovery_actions) s += " " + a;
    s += " link " + std::to_string(e.link_down) + "/" + std::to_string(e.link_up) + "/" +
         std::to_string(e.tx_timeouts) + " nv " + std::to_string(e.nvidia_related) + " memcg " +
         std::to_string(e.cgroup_oom) + " blocked " +
         (e.max_blocked_s ? std::to_string(*e.max_blocked_s) : "-");
    s += "\n";
  }
  return s;
}

// `piece`: about how many bytes ScanText gets at a time. Small pieces put many lines near a
// piece's end, where the shortcut compares byte runs; large ones let it compare fixed blocks.
KernelLogFacts Scan(const std::string& text, bool shortcut, KernelLogScanOptions o = {},
                    size_t piece = 700) {
  o.repeat_shortcut = shortcut;
  KernelLogScanner scanner(o);
  // In pieces cut at line ends, as ScanLogFd hands them over.
  size_t from = 0;
  while (from < text.size()) {
    size_t cut = text.find('\n', std::min(text.size(), from + piece));
    cut = cut == std::string::npos ? text.size() : cut + 1;
    scanner.ScanText(std::string_view(text).substr(from, cut - from));
    from = cut;
  }
  return scanner.Finish();
}

// A storm with near-repeats: other pids (odd ones too), other names and texts, CRLF, NUL, an
// over-long pid, a cut last line, noise, MIG and NVLink forms.
std::string StormText(uint32_t seed, size_t lines) {
  std::mt19937 rng(seed);
  const char* buses[] = {"18", "2a", "3b"};
  const char* tails[] = {
      ", name=python3, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address",
      ", name=python, Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST: No",
      ", name=python, Uncontained: LTC TAG (0x2,0x0). RST: No, D-RST: Yes",
      ", name=<unknown>, Ch 00000013",
      ", name=torchrun, Ch 00000013, intr 00000000.",
      ", name=pt, NETIR_LINK_EVT Fatal XC0 i0 Link 07 (0x00000004 0x00000000 0x0 0x0)",
      ", name=a, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)",
      // Longer than the shortcut's fixed-block compare (192 bytes with the '\n').
      ", name=python3, MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_3 faulted @ 0x7fd2_11c00000. "
      "Fault is of type FAULT_PTE ACCESS_TYPE_VIRT_WRITE. MMU Fault: ENGINE GRAPHICS "
      "GPCCLIENT_T1_4 faulted @ 0x7fd2_11c10000. Fault is of type FAULT_PTE ACCESS_TYPE_VIRT_READ",
  };
  const char* pids[] = {"123",     "99999",       "1",          "0",          "007",
                        "-1",      "'<unknown>'", "1234567890", "4294967296", "12a",
                        "1234567", "12345678",    "123456789",  "0000001",    "9999999"};
  // Stamps of every width and some that only look like stamps: the shortcut reads the common
  // ones 16 bytes at a time and must agree with the full parse on all of them.
  const char* odd_stamps[] = {"[1234567890.123456] ", "[12345678901.000000] ", "[ .123456] ",
                              "[  12.12345] ",        "[12.123456]x",          "[\t12.000000] ",
                              "[ 1 2.000000] ",       "[12.1234567] ",         "[99999.999999] ",
                              "[123456.000001] ",     "[0.000000] ",           "[   -1.000000] "};
  std::string out;
  double t = 1.0;
  for (size_t i = 0; i < lines; ++i) {
    t += (rng() % 1000) / 1e5;
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "[%12.6f] ", t);
    int kind = static_cast<int>(rng() % 100);
    std::string line = rng() % 8 ? stamp : odd_stamps[rng() % 12];
    if (kind < 80) {
      std::string pid = rng() % 4 ? std::to_string(1 + rng() % 99999) : pids[rng() % 15];
      const char* code = rng() % 3 ? "13" : (rng() % 2 ? "95" : "154");
      std::string head = std::string("NVRM: Xid (PCI:0000:") + buses[rng() % 3] + ":00";
      if (rng() % 10 == 0) head += " GPU-I:3";
      if (rng() % 20 == 0) head += " GPU-I:12 GPU-CI:3";  // a head over 48 bytes
      line += head + "): " + code + ", pid=" + pid + tails[rng() % 8];
      if (rng() % 50 == 0) line += "\r";
      if (rng() % 80 == 0) line.insert(line.size() / 2, 1, '\0');
      if (rng() % 90 == 0) line += "\xff";
    } else if (kind < 86) {
      // Messages that repeat byte for byte (SignalMemo) and their neighbours: NIC link changes,
      // bonding, watchdog timeouts, and lines whose meaning depends on the lines before them.
      const char* signals[] = {
          "ixgbe 0000:3b:00.0 enp59s0f0: NIC Link is Up 10 Gbps, Flow Control: RX/TX",
          "ixgbe 0000:3b:00.0 enp59s0f0: NIC Link is Down",
          "mlx5_core 0000:41:00.0 enp65s0f0np0: Link down",
          "bond0: (slave enp59s0f0): link status definitely down, disabling slave",
          "bond0: link status definitely up for interface eno1, 10000 Mbps full duplex",
          "NETDEV WATCHDOG: eth0 (ixgbe): transmit queue 3 timed out",
          "INFO: task python3:4242 blocked for more than 120 seconds.",
          " [<ffffffffc0a1b2c3>] _nv012345rm+0x1a/0x40 [nvidia]",
          "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0",
          "Memory cgroup out of memory: Killed process 4242 (python3) total-vm:1000kB, "
          "anon-rss:900kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:8kB oom_score_adj:0",
          "PCI Interrupt Link [LNKC] enabled at IRQ 11",
          "e1000e 0000:00:1f.6 eno1: NIC Link is Up 1000 Mbps Full Duplex, Flow Control: None",
          "e1000e 0000:00:1f.6 eno1: NIC Link is Up 1000 Mbps Full Duplex, Flow Control: None ",
          "mlx5_core 0000:41:00.0 e\xffth9: Link up",
      };
      line += signals[rng() % 14];
      if (rng() % 40 == 0) line += "\r";
    } else if (kind < 90) {
      line += "usb 1-1.2: new high-speed USB device number 5 using xhci_hcd";
    } else if (kind < 93) {
      line += "Linux version 6.5.0-41-generic (buildd@lcy02-amd64-079)";
    } else if (kind < 96) {
      line += "NVRM: Xid (PCI:0000:18:00): 79, pid=12, name=x, GPU has fallen off the bus.";
    } else {
      line += "NVRM: API mismatch: the client has the version 535.1, but";
    }
    out += line + "\n";
  }
  if (lines % 2) out += "[   99.000000] NVRM: Xid (PCI:0000:18:00): 13, pid=5, name=python3";
  return out;
}

TEST(KmsgRepeatCacheTest, ShortcutGivesTheFactsOfTheFullParse) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    const std::string text = StormText(seed, 400 + seed);
    for (int variant = 0; variant < 4; ++variant) {
      KernelLogScanOptions o;
      o.current_boot_only = variant & 1;
      if (variant & 2) {
        o.boot_wall_us = int64_t{1700000000} * 1000000;
        o.since_wall_us = *o.boot_wall_us + 3000000;
      }
      const std::string full = Describe(Scan(text, false, o));
      const std::string fast = Describe(Scan(text, true, o));
      ASSERT_EQ(full, fast) << "seed " << seed << " variant " << variant;
      ASSERT_EQ(full, Describe(Scan(text, true, o, 64 << 10))) << "seed " << seed;
      o.wide_simd = false;  // the storm loop's SSE2 form, also where the CPU has AVX-512
      ASSERT_EQ(full, Describe(Scan(text, true, o, 64 << 10))) << "seed " << seed;
    }
  }
}

TEST(KmsgRepeatCacheTest, AStormOfRepeatsIsCountedAsTheFullParseCountsIt) {
  std::string text;
  for (int i = 0; i < 1000; ++i) {
    text += "[" + std::to_string(10 + i) +
            ".000000] NVRM: Xid (PCI:0000:3b:00): 95, pid=" + std::to_string(1000 + i) +
            ", name=python, Uncontained: LTC TAG. RST: Yes, D-RST: No\n";
  }
  KernelLogFacts f = Scan(text, true);
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].count, 1000u);
  EXPECT_EQ(f.lines_examined, 1000u);
  EXPECT_EQ(*f.events[0].last.boot_us, int64_t{1009} * 1000000);
  EXPECT_TRUE(f.events[0].reset_required);
  EXPECT_EQ(f.events[0].processes.size(), EventAggregator::kMaxProcesses);
  EXPECT_EQ(f.events[0].processes[0], "python[1000]");
  EXPECT_EQ(Describe(f), Describe(Scan(text, false)));
}

TEST(KmsgRepeatCacheTest, MatchesOnlyTheSameHeadAndTail) {
  const std::string learnt = "NVRM: Xid (PCI:0000:3b:00): 13, pid=42, name=python3, Out Of Range";
  NvrmLine n = ParseNvrmLine(learnt);
  ASSERT_EQ(n.type, NvrmLineType::kXid);
  XidRepeatCache cache;
  cache.Learn(learnt, n.xid);
  ASSERT_FALSE(cache.empty());
  int64_t pid = 0;
  const char* end = nullptr;
  std::string again = "NVRM: Xid (PCI:0000:3b:00): 13, pid=77, name=python3, Out Of Range\nnext";
  const XidLine* x = cache.Match(again, &pid, &end);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(*end, '\n');
  EXPECT_EQ(pid, 77);
  EXPECT_EQ(x->xid, 13);
  EXPECT_EQ(x->process, "python3");
  auto match = [&](std::string_view m) { return cache.Match(m, &pid, &end); };
  EXPECT_EQ(match("NVRM: Xid (PCI:0000:3b:00): 13, pid=77, name=python3, Out Of RangeX"), nullptr);
  EXPECT_EQ(match("NVRM: Xid (PCI:0000:3b:00): 31, pid=77, name=python3, Out Of Range"), nullptr);
  EXPECT_EQ(match("NVRM: Xid (PCI:0000:3b:00): 13, pid=077, name=python3, Out Of Range"), nullptr);
  EXPECT_EQ(match("NVRM: Xid (PCI:0000:3b:00): 13, pid=7\n"), nullptr);
  EXPECT_EQ(match("NVRM: Xid (PCI:0000:3b:00): 13, pid=8, name=python3, Out Of Range\r\n"),
            nullptr);
  EXPECT_NE(match("NVRM: Xid (PCI:0000:3b:00): 13, pid=8, name=python3, Out Of Range"), nullptr);
  // Pids of any plain width (the 8-byte reader and the byte loop) and their values.
  for (std::string p : {"1", "42", "1234567", "12345678", "123456789"}) {
    const std::string m =
        "NVRM: Xid (PCI:0000:3b:00): 13, pid=" + p + ", name=python3, Out Of Range";
    ASSERT_NE(match(m), nullptr) << p;
    EXPECT_EQ(pid, std::stoll(p));
    EXPECT_EQ(end, m.data() + m.size());
  }
  // With room after the line the tail is compared in fixed blocks: the same answers.
  const std::string pad(300, 'x');
  const std::string ok = "NVRM: Xid (PCI:0000:3b:00): 13, pid=5, name=python3, Out Of Range\n";
  ASSERT_NE(match(ok + pad), nullptr);
  EXPECT_EQ(pid, 5);
  const std::string block = ok + pad;
  ASSERT_NE(match(block), nullptr);
  EXPECT_EQ(end, block.data() + ok.size() - 1);
  EXPECT_EQ(match("NVRM: Xid (PCI:0000:3b:00): 13, pid=5, name=python3, Out Of Rangf\n" + pad),
            nullptr);
  EXPECT_EQ(match("NVRM: Xid (PCI:0000:3b:00): 13, pid=5, name=python3, Out Of RangeX\n" + pad),
            nullptr);
  EXPECT_EQ(match("NVRM: Xid (PCI:0000:3b:00): 13, pid=5, name=python3, Out Of Range\r\n" + pad),
            nullptr);
  EXPECT_EQ(match("NVRM: Xid (PCI:0000:3c:00): 13, pid=5, name=python3, Out Of Range\n" + pad),
            nullptr);
  EXPECT_EQ(match("NVRM: Xid (PCI:0000:3b:00): 13, pid=1234567890, name=python3, Out Of Range"),
            nullptr);
  EXPECT_EQ(match("NVRM: Xid (PCI:0000:3b:00): 13, pid=0000001, name=python3, Out Of Range"),
            nullptr);
  EXPECT_EQ(match("NVRM: Xid (PCI:0000:3b:00): 13, pid=12:4567, name=python3, Out Of Range"),
            nullptr);
}

// The aggregator hint the shortcut keeps per cached line ends when entries change slots: a
// table filled with link flaps makes Xids of new GPUs evict entries (the Xid index is rebuilt),
// and a boot marker with current_boot_only empties it. Counts stay those of the full parse.
TEST(KmsgRepeatCacheTest, RepeatsAfterTheEventTableMovesAreCountedRight) {
  std::string text;
  auto xid = [&](int t, const char* bus, int pid) {
    text += "[" + std::to_string(t) + ".000000] NVRM: Xid (PCI:0000:" + bus +
            ":00): 13, pid=" + std::to_string(pid) + ", name=python3, Graphics SM Warp Exception\n";
  };
  for (int i = 0; i < 50; ++i) xid(10 + i, i % 2 ? "18" : "2a", 100 + i);
  for (int i = 0; i < 2100; ++i) {
    text += "[100.000000] mlx5_core 0000:41:00.0 eth" + std::to_string(i) + ": Link down\n";
  }
  const char* buses[] = {"3b", "5d", "9a", "18", "2a", "ab"};
  for (int i = 0; i < 300; ++i) xid(200 + i, buses[i % 6], 500 + i);
  text += "[300.000000] Linux version 6.5.0\n";
  for (int i = 0; i < 300; ++i) xid(400 + i, buses[i % 6], 900 + i);
  for (bool boot_only : {false, true}) {
    KernelLogScanOptions o;
    o.current_boot_only = boot_only;
    const std::string full = Describe(Scan(text, false, o));
    EXPECT_EQ(full, Describe(Scan(text, true, o)));
    EXPECT_EQ(full, Describe(Scan(text, true, o, 64 << 10)));
  }
  KernelLogFacts f = Scan(text, true, {}, 64 << 10);
  EXPECT_GT(f.dropped_events, 0u);  // the table did fill up
}

// A long storm of a few lines (so the storm loop runs for thousands of lines, the entries'
// process lists fill up and are then only counted), with stamps that change shape (9.99 to 10,
// 99.99 to 100, odd widths, a space or letter among the digits) and near-repeats between: the
// storm loops (AVX-512 where the CPU has it, and SSE2) give the facts of the full parse.
std::string LongStormText(uint32_t seed, size_t lines) {
  std::mt19937 rng(seed);
  const char* buses[] = {"18", "2a", "3b"};
  const char* tails[] = {
      ", name=python3, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address",
      ", name=python, Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST: No",
      ", name=pt, NETIR_LINK_EVT Fatal XC0 i0 Link 07 (0x00000004 0x00000000 0x0 0x0)",
  };
  const char* odd_stamps[] = {"[ 1 2.000000] ", "[12.1234567] ",     "[  12.12345] ",
                              "[1a.000000] ",   "[1234567.000000] ", "[   12.000000]x"};
  std::string out;
  double t = 9.0 + (seed % 3) * 89.0;  // crosses 10, or 100
  for (size_t i = 0; i < lines; ++i) {
    t += (rng() % 100) / 1e4;
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, rng() % 2 ? "[%12.6f] " : "[%.6f] ", t);
    std::string line = rng() % 50 ? stamp : odd_stamps[rng() % 6];
    std::string pid = std::to_string(1 + rng() % (rng() % 2 ? 9 : 9999999));
    if (rng() % 100 == 0) pid = rng() % 2 ? "012" : "12345678";
    line += std::string("NVRM: Xid (PCI:0000:") + buses[rng() % 3] +
            ":00): " + (rng() % 2 ? "13" : "95") + ", pid=" + pid + tails[rng() % 3];
    if (rng() % 200 == 0) line += " and more";
    out += line + "\n";
  }
  return out;
}

TEST(KmsgRepeatCacheTest, StormLoopsGiveTheFactsOfTheFullParse) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const std::string text = LongStormText(seed, 6000);
    for (int variant = 0; variant < 3; ++variant) {
      KernelLogScanOptions o;
      if (variant >= 1) o.boot_wall_us = int64_t{1700000000} * 1000000;
      if (variant == 2) o.since_wall_us = *o.boot_wall_us + 40000000;
      const std::string full = Describe(Scan(text, false, o, 64 << 10));
      EXPECT_EQ(full, Describe(Scan(text, true, o, 64 << 10))) << seed << " " << variant;
      o.wide_simd = false;
      EXPECT_EQ(full, Describe(Scan(text, true, o, 64 << 10))) << seed << " " << variant;
      EXPECT_EQ(full, Describe(Scan(text, true, o, 3000))) << seed << " " << variant;
    }
  }
}

// A NIC link line answered from SignalMemo has the effects of a parsed one: it is counted, and
// it ends a hung-task report (a stack frame after it no longer marks that task).
TEST(KmsgRepeatCacheTest, MemoizedLinkLinesKeepTheirEffectOnTheNextLines) {
  const std::string link = "] ixgbe 0000:3b:00.0 enp59s0f0: NIC Link is Down\n";
  const std::string text =
      "[    1.000000" + link + "[    1.100000" + link +
      "[    1.200000] INFO: task python3:42 blocked for more than 120 seconds.\n"
      "[    1.300000" +
      link + "[    1.400000]  [<ffffffffc0a1b2c3>] _nv012345rm+0x1a/0x40 [nvidia]\n";
  for (size_t piece : {size_t{20}, size_t{64} << 10}) {
    KernelLogFacts f = Scan(text, true, {}, piece);
    EXPECT_EQ(Describe(f), Describe(Scan(text, false, {}, piece)));
    ASSERT_EQ(f.events.size(), 2u);
    for (const KernelEvent& e : f.events) {
      if (e.kind == KernelEventKind::kNetLink) {
        EXPECT_EQ(e.count, 3u);
        EXPECT_EQ(e.link_down, 3u);
        EXPECT_EQ(*e.last.boot_us, 1300000);
      } else {
        EXPECT_FALSE(e.nvidia_related);  // the link line came between
      }
    }
  }
}

// A kernel line with nothing after its stamp, once SignalMemo holds anything, must not be
// answered from a slot nothing was learned into (an empty message and a default event: an Xid of
// no GPU). Found by kmsg_scan_fuzz (corpus regress-empty-message-after-link-lines).
TEST(KmsgRepeatCacheTest, AnEmptyMessageIsNotAnXidFromAnEmptyMemoSlot) {
  const std::string text =
      "[  131.479939] internet: link status down for interface eno4, disabling it in 200 ms\n"
      "[  131.499935] internet: link status down for interface eno4, disabling it in 200 ms\n"
      // The host name holds a signal parser's anchor ("oom-kill:"), so the empty message is
      // handed to the signal parsers (as in the fuzzer's input).
      "Jun  5 22:36:51 zoom-kill:-2487ea kernel: [ 4564.303884] \n"
      "[  131.551937] bonding: link status down for interface eno2, disabling it in 200 ms\n";
  for (size_t piece : {size_t{20}, size_t{64} << 10}) {
    KernelLogFacts f = Scan(text, true, {}, piece);
    EXPECT_EQ(Describe(f), Describe(Scan(text, false, {}, piece)));
    for (const KernelEvent& e : f.events) {
      EXPECT_EQ(e.kind, KernelEventKind::kNetLink) << e.sample;
    }
  }
}

}  // namespace
}  // namespace gpudoctor
