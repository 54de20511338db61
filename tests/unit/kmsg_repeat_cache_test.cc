// The Xid-storm shortcut (XidRepeatCache, KernelLogScanOptions::repeat_shortcut) gives exactly
// the facts of the full parse: same events, counts, times, process lists, counters.
#include <gtest/gtest.h>

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
    s += "\n";
  }
  return s;
}

KernelLogFacts Scan(const std::string& text, bool shortcut, KernelLogScanOptions o = {}) {
  o.repeat_shortcut = shortcut;
  KernelLogScanner scanner(o);
  // In pieces cut at line ends, as ScanLogFd hands them over.
  size_t from = 0;
  while (from < text.size()) {
    size_t cut = text.find('\n', std::min(text.size(), from + 700));
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
  };
  const char* pids[] = {"123", "99999",       "1",          "0",          "007",
                        "-1",  "'<unknown>'", "1234567890", "4294967296", "12a"};
  std::string out;
  double t = 1.0;
  for (size_t i = 0; i < lines; ++i) {
    t += (rng() % 1000) / 1e5;
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "[%12.6f] ", t);
    int kind = static_cast<int>(rng() % 100);
    std::string line = stamp;
    if (kind < 80) {
      std::string pid = rng() % 4 ? std::to_string(1 + rng() % 99999) : pids[rng() % 10];
      const char* code = rng() % 3 ? "13" : (rng() % 2 ? "95" : "154");
      std::string head = std::string("NVRM: Xid (PCI:0000:") + buses[rng() % 3] + ":00";
      if (rng() % 10 == 0) head += " GPU-I:3";
      line += head + "): " + code + ", pid=" + pid + tails[rng() % 7];
      if (rng() % 50 == 0) line += "\r";
      if (rng() % 80 == 0) line.insert(line.size() / 2, 1, '\0');
      if (rng() % 90 == 0) line += "\xff";
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
}

}  // namespace
}  // namespace gpudoctor
