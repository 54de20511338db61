#include "parsers/meminfo.h"

#include <gtest/gtest.h>

#include "parsers/vmstat.h"

namespace gpudoctor {
namespace {

constexpr char kMeminfo[] =
    "MemTotal:       16318480 kB\n"
    "MemFree:         1203456 kB\n"
    "MemAvailable:    8123456 kB\n"
    "Shmem:            123456 kB\n"
    "SwapTotal:       2097148 kB\n"
    "SwapFree:        1048576 kB\n"
    "HugePages_Total:       0\n"
    "Hugepagesize:       2048 kB\n";

TEST(MeminfoTest, ParsesKbIntoBytes) {
  auto m = ParseMeminfo(kMeminfo);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->total_bytes, 16318480ull * 1024);
  EXPECT_EQ(m->available_bytes, 8123456ull * 1024);
  EXPECT_EQ(m->free_bytes, 1203456ull * 1024);
  EXPECT_EQ(m->shmem_bytes, 123456ull * 1024);
  EXPECT_EQ(m->swap_total_bytes, 2097148ull * 1024);
  EXPECT_EQ(m->swap_free_bytes, 1048576ull * 1024);
}

TEST(MeminfoTest, OldKernelWithoutMemAvailableLeavesItAbsent) {
  auto m = ParseMeminfo("MemTotal: 1000 kB\nMemFree: 500 kB\n");
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(m->available_bytes.has_value());
  EXPECT_FALSE(m->swap_total_bytes.has_value());
}

TEST(MeminfoTest, RejectsMissingTotalAndGarbage) {
  EXPECT_FALSE(ParseMeminfo("").ok());
  EXPECT_FALSE(ParseMeminfo("MemFree: 500 kB\n").ok());
  EXPECT_FALSE(ParseMeminfo("MemTotal: 0 kB\n").ok());
  auto bad = ParseMeminfo("MemTotal: 12x4 kB\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("MemTotal"), std::string::npos);
  EXPECT_FALSE(ParseMeminfo("MemTotal: 1000 MB\n").ok());        // unknown unit
  EXPECT_FALSE(ParseMeminfo("MemTotal: 1000 kB extra\n").ok());  // trailing field
  EXPECT_FALSE(ParseMeminfo("MemTotal: -5 kB\n").ok());          // negative
  EXPECT_TRUE(ParseMeminfo("MemTotal:       16318").ok());       // truncated line: unitless count
}

TEST(MeminfoTest, RejectsAbsurdNumbers) {
  // 2^64 / 1024 + 1 kB overflows bytes.
  EXPECT_FALSE(ParseMeminfo("MemTotal: 18014398509481985 kB\n").ok());
  EXPECT_FALSE(ParseMeminfo("MemTotal: 99999999999999999999999 kB\n").ok());
  EXPECT_FALSE(ParseMeminfo("MemTotal: 100 kB\nMemAvailable: 200 kB\n").ok());
  EXPECT_FALSE(ParseMeminfo("MemTotal: 100 kB\nSwapTotal: 10 kB\nSwapFree: 20 kB\n").ok());
}

TEST(VmstatTest, ParsesSwapAndOomCounters) {
  auto c = ParseVmstat("nr_free_pages 5\npswpin 120\npswpout 340\noom_kill 2\npgfault 9\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->pswpin, 120u);
  EXPECT_EQ(c->pswpout, 340u);
  EXPECT_EQ(c->oom_kill, 2u);
}

TEST(VmstatTest, OldKernelWithoutOomKill) {
  auto c = ParseVmstat("pswpin 1\npswpout 2\n");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->oom_kill.has_value());
}

TEST(VmstatTest, RejectsGarbageAndEmpty) {
  EXPECT_FALSE(ParseVmstat("").ok());
  EXPECT_FALSE(ParseVmstat("nr_free_pages 5\n").ok());
  EXPECT_FALSE(ParseVmstat("pswpin abc\n").ok());
  EXPECT_FALSE(ParseVmstat("pswpin -1\n").ok());
  EXPECT_FALSE(ParseVmstat("pswpin 1 2\n").ok());
  // A truncated last line without its value is ignored, not misread.
  auto c = ParseVmstat("pswpin 7\npswpout");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->pswpout.has_value());
}

TEST(VmstatTest, MatchesWholeNamesOnlyAnywhereInTheFile) {
  // Names that begin like a used counter are other counters; CRLF and leading blanks are read
  // as before; a used counter's garbage is an error wherever it sits among ~190 lines.
  std::string text;
  for (int i = 0; i < 100; ++i) text += "nr_" + std::to_string(i) + " " + std::to_string(i) + "\n";
  text += "pswpin_extra x\r\n oom_kill_total y\n  pswpin\t 11\r\npswpout 12\n";
  for (int i = 0; i < 90; ++i) text += "pg_" + std::to_string(i) + " 1\n";
  text += "oom_kill 3";
  auto c = ParseVmstat(text);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->pswpin, 11u);
  EXPECT_EQ(c->pswpout, 12u);
  EXPECT_EQ(c->oom_kill, 3u);
  auto bad = ParseVmstat(text + "\npswpout 1x\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 196: pswpout"), std::string::npos)
      << bad.status().ToString();
}

TEST(VmstatTest, CounterRate) {
  EXPECT_DOUBLE_EQ(*CounterRate(100, 400, 0.5), 600.0);
  EXPECT_DOUBLE_EQ(*CounterRate(100, 100, 0.5), 0.0);
  EXPECT_FALSE(CounterRate(400, 100, 0.5));  // went backwards
  EXPECT_FALSE(CounterRate(std::nullopt, 100, 0.5));
  EXPECT_FALSE(CounterRate(1, 2, 0.0));
  EXPECT_FALSE(CounterRate(1, 2, -1.0));
}

}  // namespace
}  // namespace gpudoctor
