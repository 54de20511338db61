// The fleet cache files' framing (fleet/index_file.h): a file written and read back whole; one
// another program truncates while it is mapped does not end the process (SIGBUS is caught, the
// mapping reads as zeros and says it is no longer intact; its readers then drop what they read),
// and a SIGBUS that is not about a mapped index file keeps its usual end.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <string>

#include "fleet/index_file.h"
#include "test_util.h"

namespace gpudoctor::fleet {
namespace {

constexpr IndexFileKind kKind{"GDTESTFILE", 7, "test index"};

TimePoint Later() { return SteadyClock::now() + std::chrono::seconds(20); }

TEST(FleetIndexFileTest, WrittenFileReadsBackWhole) {
  gpudoctor::testing::TempDir d;
  const std::string path = d.path() + "/x.idx";
  const std::string payload(100000, 'p');
  ASSERT_TRUE(WriteIndexFile(path, kKind, payload).ok());
  std::string why;
  auto text = ReadIndexFile(path, kKind, Later(), &why);
  ASSERT_TRUE(text.has_value()) << why;
  EXPECT_EQ(text->payload(), payload);
  EXPECT_TRUE(text->intact());
}

TEST(FleetIndexFileTest, FileTruncatedUnderTheMappingReadsAsZerosNotSigbus) {
  gpudoctor::testing::TempDir d;
  const std::string path = d.path() + "/x.idx";
  const std::string payload(1 << 20, 'p');  // 256 pages
  ASSERT_TRUE(WriteIndexFile(path, kKind, payload).ok());
  std::string why;
  auto text = ReadIndexFile(path, kKind, Later(), &why);
  ASSERT_TRUE(text.has_value()) << why;
  ASSERT_TRUE(text->intact());
  // Another program cuts the file short while it is mapped: every page beyond the new end
  // would raise SIGBUS when read.
  ASSERT_EQ(::truncate(path.c_str(), 100), 0);
  std::string_view p = text->payload();
  size_t ps = 0;
  for (size_t i = 0; i < p.size(); i += 4096) ps += p[i] == 'p';
  EXPECT_FALSE(text->intact());
  EXPECT_LT(ps, 2u);  // at most the first page still shows the old bytes, the rest zeros
  // Another mapping afterwards is guarded again (its own flag).
  ASSERT_TRUE(WriteIndexFile(path, kKind, payload).ok());
  auto again = ReadIndexFile(path, kKind, Later(), &why);
  ASSERT_TRUE(again.has_value()) << why;
  EXPECT_TRUE(again->intact());
  EXPECT_EQ(again->payload(), payload);
}

// Maps an index file (the handler installed), then raises SIGBUS outside of it.
void MapThenRaiseSigbus() {
  gpudoctor::testing::TempDir d;
  const std::string path = d.path() + "/x.idx";
  if (!WriteIndexFile(path, kKind, std::string(4096, 'p')).ok()) std::_Exit(3);
  std::string why;
  auto text = ReadIndexFile(path, kKind, Later(), &why);
  if (!text) std::_Exit(4);
  struct rlimit no_core = {0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);  // no core file to write
  ::raise(SIGBUS);
  std::_Exit(0);
}

TEST(FleetIndexFileTest, SigbusOutsideEveryIndexMappingStillEndsTheProcess) {
  // The guard takes only faults inside mapped index files; another SIGBUS keeps its action.
  // "threadsafe": the child starts afresh (a forked copy would inherit the parent's idle
  // worker pool without its threads).
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(MapThenRaiseSigbus(), ::testing::KilledBySignal(SIGBUS), "");
}

}  // namespace
}  // namespace gpudoctor::fleet
