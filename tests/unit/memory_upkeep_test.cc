// Memory upkeep of `watch` (src/watch/memory_upkeep.h): the heap is given back and the read-only
// segments are advised, and code runs on afterwards (paged-out code faults back in).
#include "watch/memory_upkeep.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

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

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

TEST(MemoryUpkeepTest, ReadOnlySegmentsAreAdvisedAndCodeStillRuns) {
  {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void* p = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    const int rc = madvise(p, page, MADV_PAGEOUT);
    const int err = errno;
    munmap(p, page);
    if (rc != 0 && err == EINVAL) GTEST_SKIP() << "kernel without MADV_PAGEOUT (before 5.4)";
  }
  const size_t advised = PageOutCode();
  // At least the test binary's own code (MADV_PAGEOUT exists since Linux 5.4).
  EXPECT_GT(advised, size_t{1} << 20);
  std::string s = "still ";
  s += std::to_string(42);
  EXPECT_EQ(s, "still 42");
  for (unsigned long long tick = 1; tick <= 3600; ++tick) MemoryUpkeepAfterTick(tick);
  EXPECT_GT(PageOutCode(), size_t{0});
}

}  // namespace
}  // namespace gpudoctor
