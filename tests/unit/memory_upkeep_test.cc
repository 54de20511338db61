// Memory upkeep of `watch` (src/watch/memory_upkeep.h): the heap is given back, the read-only
// segments' pages leave the resident set, and code runs on afterwards (released code faults back
// in).
#include "watch/memory_upkeep.h"

#include <gtest/gtest.h>
#include <link.h>
#include <malloc.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/root_fs.h"

namespace gpudoctor {
namespace {

TEST(MemoryUpkeepTest, FreedHeapIsGivenBack) {
  {
    std::vector<std::unique_ptr<char[]>> blocks;
    for (int i = 0; i < 256; ++i) {  // 16 MiB in 64 KiB blocks: the heap, not mmap'd chunks
      blocks.emplace_back(new char[64 << 10]);
      blocks.back()[0] = static_cast<char>(i);
    }
  }
  EXPECT_TRUE(TrimHeap());
}

// Resident kB of this process's mapping that contains `addr` (/proc/self/smaps "Rss:").
long RssKbOfMappingAt(const void* addr) {
  auto smaps = RootFs().ReadProc("self/smaps", 64 << 20);
  if (!smaps.ok()) return -1;
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  std::istringstream in(*smaps);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 &&
        line.find(' ') != std::string::npos && line.find(':') > line.find(' ')) {
      inside = a >= lo && a < hi;
      continue;
    }
    long kb = 0;
    if (inside && std::sscanf(line.c_str(), "Rss: %ld kB", &kb) == 1) return kb;
  }
  return -1;
}

TEST(MemoryUpkeepTest, ReleasedCodeLeavesTheResidentSetAndStillRuns) {
  const void* code = reinterpret_cast<const void*>(&RssKbOfMappingAt);
  const long before = RssKbOfMappingAt(code);
  ASSERT_GT(before, 64) << "the test binary's code should be resident while it runs";
  // At least the test binary's own code segment.
  EXPECT_GT(ReleaseCode(), size_t{1} << 20);
  // Reading smaps runs code again (fault-around maps 64 KiB a fault), but far less than before.
  const long after = RssKbOfMappingAt(code);
  EXPECT_GE(after, 0);
  EXPECT_LT(after, before / 2) << "before " << before << " kB, after " << after << " kB";
  std::string s = "still ";
  s += std::to_string(42);
  EXPECT_EQ(s, "still 42");
  for (unsigned long long tick = 0; tick <= kReleaseCodeEveryTicks; ++tick)
    MemoryUpkeepAfterTick(tick);
  EXPECT_GT(ReleaseCode(), size_t{0});
}

}  // namespace
}  // namespace gpudoctor
