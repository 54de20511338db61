// A regular file of kLargeInputBytes or more is read in 1 MiB pieces into the scanner's huge
// page (MappedPages, with the Xid repeat cache's table); a pipe or a small file in 128 KiB
// pieces on the heap. Both give the same facts, the 128 KiB line limit included.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "kmsg/log_scanner.h"
#include "kmsg/mapped_pages.h"
#include "kmsg/xid_repeat_cache.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

constexpr size_t kMaxKept = KernelLogScanner::kReadBufferBytes;  // the line limit

std::string Time(const LogTime& t) {
  return (t.boot_us ? std::to_string(*t.boot_us) : "-") + "/" +
         (t.wall_us ? std::to_string(*t.wall_us) : "-");
}

// What the scanner reports, as text: two scans compare equal when this is equal.
std::string Describe(const KernelLogFacts& f) {
  std::string s = "bytes " + std::to_string(f.bytes_scanned) + " examined " +
                  std::to_string(f.lines_examined) + " garbled " + std::to_string(f.garbled_lines) +
                  " repaired " + std::to_string(f.repaired_lines) + " truncated " +
                  std::to_string(f.truncated_lines) + " dropped " +
                  std::to_string(f.dropped_events) + " boots " + std::to_string(f.boots_seen) +
                  " stopped " + std::to_string(f.stopped_at_deadline) + "\n";
  for (const KernelEvent& e : f.events) {
    s += std::to_string(static_cast<int>(e.kind)) + " " + e.subject + " xid " +
         std::to_string(e.xid) + " n " + std::to_string(e.count) + " " + Time(e.first) + " " +
         Time(e.last) + " [" + e.sample + "] procs";
    for (const auto& p : e.processes) s += " " + p;
    s += " link " + std::to_string(e.link_down) + "/" + std::to_string(e.link_up) + "\n";
  }
  return s;
}

std::string StormLine(int i) {
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "[%6d.%06d] ", 100 + i / 1000, i % 1000000);
  return std::string(stamp) +
         "NVRM: Xid (PCI:0000:3b:00): 13, pid=" + std::to_string(4000 + i % 97) +
         ", name=python3, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range\n";
}

// ~3.5 MiB: an Xid storm with link lines, and lines without any keyword of 128 KiB - 1 (kept),
// 128 KiB, 128 KiB + 1 and 300 KiB (each dropped and counted), one of them across the first
// 1 MiB piece's end, one right at the start; a NUL run; a last line without its '\n'.
std::string LargeLog(bool long_last_line) {
  std::string text = std::string(kMaxKept, 'a') + "\n";  // dropped: the file's first line
  int i = 0;
  auto storm = [&](size_t until) {
    while (text.size() < until) {
      text += StormLine(i++);
      if (i % 500 == 0) text += "[  200.000001] mlx5_core 0000:41:00.0 ibp65s0: Link down\n";
    }
  };
  storm((1 << 20) - 1000);
  text += std::string(kMaxKept + 1, 'b') + "\n";  // across the 1 MiB boundary: dropped
  storm(3 << 19);
  text += std::string(kMaxKept - 1, 'c') + "\n";  // kept (no keyword: no event)
  text += std::string(kMaxKept, 'd') + "\n";      // dropped
  storm(2 << 20);
  text += std::string(300 << 10, 'e') + "\n";  // dropped
  text += std::string(4096, '\0');             // a NUL run ends lines too
  text += StormLine(i++);
  storm(7 << 19);
  text += long_last_line ? std::string(kMaxKept + 7, 'f') : StormLine(i).substr(0, 90);
  return text;
}

KernelLogFacts ScanFile(const std::string& path) {
  auto r = ScanLogPath(path, {});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(*r) : KernelLogFacts{};
}

// The same bytes through a pipe, written in odd pieces: ScanLogFd's 128 KiB heap buffer.
KernelLogFacts ScanPipe(const std::string& text) {
  int pipefd[2];
  EXPECT_EQ(::pipe(pipefd), 0);
  std::thread writer([&text, fd = pipefd[1]] {
    for (size_t at = 0; at < text.size();) {
      ssize_t w = ::write(fd, text.data() + at, std::min<size_t>(77777, text.size() - at));
      if (w <= 0) break;
      at += static_cast<size_t>(w);
    }
    ::close(fd);
  });
  KernelLogScanner scanner;
  EXPECT_TRUE(ScanLogFd(pipefd[0], scanner).ok());
  writer.join();
  ::close(pipefd[0]);
  KernelLogFacts f = scanner.Finish();
  f.source.clear();
  return f;
}

TEST(KmsgLargeInputTest, FileInMiBPiecesGivesThePipesFactsAndLineLimit) {
  testing::TempDir dir;
  for (bool long_last : {false, true}) {
    const std::string text = LargeLog(long_last);
    ASSERT_GE(text.size(), kLargeInputBytes);
    dir.Write("large.log", text);
    const std::string path = dir.path() + "/large.log";
    KernelLogFacts file = ScanFile(path);
    KernelLogFacts pipe = ScanPipe(text);
    EXPECT_EQ(Describe(file), Describe(pipe)) << "long last line: " << long_last;
    // The first line, the ones of 128 KiB + 1, 128 KiB and 300 KiB, and a long last line.
    EXPECT_EQ(file.truncated_lines, long_last ? 5u : 4u);
    EXPECT_EQ(file.bytes_scanned, text.size());
    ASSERT_FALSE(file.events.empty());
    uint64_t xids = 0;
    for (const KernelEvent& e : file.events) xids += e.xid == 13 ? e.count : 0;
    EXPECT_GT(xids, 20000u);
  }
}

TEST(KmsgLargeInputTest, SmallFileGivesTheSameFactsAsItsLargeCopy) {
  // Below kLargeInputBytes the heap buffer reads it; a copy padded with noise past the limit
  // goes through the huge page: the same events.
  testing::TempDir dir;
  std::string text;
  for (int i = 0; i < 2000; ++i) text += StormLine(i);
  dir.Write("small.log", text);
  std::string padded = text;
  while (padded.size() < kLargeInputBytes + 4096) padded += "[  300.000000] usb 1-1: noise\n";
  dir.Write("padded.log", padded);
  KernelLogFacts small = ScanFile(dir.path() + "/small.log");
  KernelLogFacts large = ScanFile(dir.path() + "/padded.log");
  ASSERT_EQ(small.events.size(), 1u);
  ASSERT_EQ(large.events.size(), 1u);
  EXPECT_EQ(small.events[0].count, 2000u);
  EXPECT_EQ(large.events[0].count, 2000u);
  EXPECT_EQ(small.events[0].processes, large.events[0].processes);
  EXPECT_EQ(small.lines_examined, large.lines_examined);
}

TEST(KmsgLargeInputTest, LargeInputBufferIsStableAndHoldsTheRepeatTable) {
  KernelLogScanner scanner;
  char* a = scanner.LargeInputBuffer();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(scanner.LargeInputBuffer(), a);
  // Writable over its whole length, and the scan still answers repeats from the table that
  // now lives in the same region.
  std::fill(a, a + KernelLogScanner::kLargeReadBytes, 'x');
  std::string text;
  for (int i = 0; i < 300; ++i) text += StormLine(i);
  scanner.ScanText(text);
  KernelLogFacts f = scanner.Finish();
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].count, 300u);
}

TEST(MappedPagesTest, HugeIsWholeAlignedHugePagesAndMovesOwnership) {
  constexpr size_t kHuge = MappedPages::kHugePageBytes;
  MappedPages s(kHuge + 1, MappedPages::Kind::kHuge);
  ASSERT_NE(s.data(), nullptr);
  EXPECT_EQ(s.size(), 2 * kHuge);  // rounded up to whole huge pages
  EXPECT_EQ(reinterpret_cast<uintptr_t>(s.data()) % kHuge, 0u);
  EXPECT_EQ(s.data()[kHuge], 0);  // zero-filled until written
  s.data()[0] = 1;
  s.data()[s.size() - 1] = 2;
  MappedPages moved(std::move(s));
  EXPECT_EQ(s.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state
  EXPECT_EQ(s.size(), 0u);       // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(moved.data()[2 * kHuge - 1], 2);
  MappedPages assigned(1, MappedPages::Kind::kSmall);
  assigned = std::move(moved);
  EXPECT_EQ(assigned.data()[0], 1);
  EXPECT_EQ(assigned.size(), 2 * kHuge);
}

TEST(MappedPagesTest, SmallIsTheSizeAskedAndTouchesOnlyWhatIsWritten) {
  constexpr size_t kBytes = (size_t{4} << 20) + 100;
  MappedPages s(kBytes, MappedPages::Kind::kSmall);
  ASSERT_NE(s.data(), nullptr);
  EXPECT_EQ(s.size(), kBytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(s.data()) % 4096, 0u);
  s.data()[kBytes - 1] = 7;  // the last byte, past a page boundary of its own
  EXPECT_EQ(s.data()[kBytes - 1], 7);
  // Resident: the one page written, never a huge page of it (mincore counts 4 KiB pages).
  std::vector<unsigned char> resident((kBytes + 4095) / 4096);
  ASSERT_EQ(mincore(s.data(), kBytes, resident.data()), 0);
  EXPECT_EQ(std::count_if(resident.begin(), resident.end(), [](unsigned char r) { return r & 1; }),
            1);
  EXPECT_EQ(MappedPages(0, MappedPages::Kind::kSmall).data(), nullptr);
}

TEST(XidRepeatCacheStorageTest, TableInGivenStorageAnswersAsOnTheHeap) {
  const std::string line =
      "NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python3, Graphics SM Warp Exception on "
      "(GPC 0, TPC 1, SM 0): Out Of Range Address";
  const std::string repeat =
      "NVRM: Xid (PCI:0000:3b:00): 13, pid=77, name=python3, Graphics SM Warp Exception on "
      "(GPC 0, TPC 1, SM 0): Out Of Range Address\n" +
      std::string(300, ' ');
  XidLine parsed = ParseNvrmLine(line).xid;
  ASSERT_TRUE(parsed.pid.has_value());
  MappedPages scratch(MappedPages::kHugePageBytes, MappedPages::Kind::kHuge);
  ASSERT_NE(scratch.data(), nullptr);
  XidRepeatCache heap, given;
  given.UseStorage(scratch.data());
  heap.Learn(line, parsed);
  given.Learn(line, parsed);
  EXPECT_EQ(static_cast<const void*>(given.slots()), static_cast<const void*>(scratch.data()));
  for (XidRepeatCache* c : {&heap, &given}) {
    int64_t pid = 0;
    const char* end = nullptr;
    const XidLine* x = c->Match(repeat, &pid, &end);
    ASSERT_NE(x, nullptr);
    EXPECT_EQ(pid, 77);
    EXPECT_EQ(x->xid, 13);
    EXPECT_EQ(*end, '\n');
  }
}

}  // namespace
}  // namespace gpudoctor
