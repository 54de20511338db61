// The reports walk (fleet/report_walk.h): files in name order, depth first, with the stat of
// each report file taken on several workers; the fingerprint moves when any report file is
// rewritten in place (same size, directory untouched), added or removed, and only then.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "fleet/report_walk.h"
#include "test_util.h"

namespace gpudoctor::fleet {
namespace {

constexpr auto kStall = std::chrono::seconds(20);

ReportWalk Walk(const std::string& dir, bool paths = true) {
  auto w = WalkReports(dir, paths, kStall);
  EXPECT_TRUE(w.ok()) << w.status().message();
  return w.ok() ? std::move(*w) : ReportWalk{};
}

// Moves the mtime of `path` one second on (a later write at a coarse clock tick).
void Touch(const std::string& path) {
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  times[1].tv_sec += 1;
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

TEST(FleetWalkTest, ManyFilesInNameOrderWithTheirStatOnWorkers) {
  testing::TempDir d;
  // More files than one worker takes, so several stat them; written out of order.
  constexpr int kFiles = 5000;
  for (int i = kFiles - 1; i >= 0; --i) {
    char name[32];
    std::snprintf(name, sizeof name, "n%05d.json", i);
    d.Write(name, std::string(static_cast<size_t>(i % 7 + 1), 'x'));
  }
  d.Write("notes.txt", "not a report");
  d.Write("sub/a.json", "{}");
  d.Write("z.json.bak", "not a report");
  ReportWalk w = Walk(d.path());
  ASSERT_EQ(w.file_count, static_cast<size_t>(kFiles) + 1);
  ASSERT_EQ(w.files.size(), w.info.size());
  EXPECT_EQ(w.files[0], d.path() + "/n00000.json");
  EXPECT_EQ(w.files[kFiles - 1], d.path() + "/n04999.json");
  EXPECT_EQ(w.files[kFiles], d.path() + "/sub/a.json");  // "n..." < "notes.txt" < "sub"
  for (int i = 0; i < kFiles; ++i) {
    ASSERT_TRUE(w.info[i].has_value()) << i;
    EXPECT_EQ(w.info[i]->size_bytes, static_cast<uint64_t>(i % 7 + 1)) << i;
    EXPECT_GT(w.info[i]->mtime_unix_ns, 0);
  }
  EXPECT_TRUE(w.problems.empty());
  // Without paths: the same stats and fingerprint.
  ReportWalk bare = Walk(d.path(), false);
  EXPECT_TRUE(bare.files.empty());
  EXPECT_EQ(bare.file_count, w.file_count);
  EXPECT_EQ(bare.fingerprint, w.fingerprint);
}

TEST(FleetWalkTest, FingerprintMovesOnEveryChangeToAReportFileOnly) {
  testing::TempDir d;
  for (int i = 0; i < 1500; ++i) d.Write("r" + std::to_string(i) + ".json", "{\"a\": 1}");
  d.Write("deep/er/x.json", "{}");
  const uint64_t base = Walk(d.path(), false).fingerprint;
  EXPECT_EQ(Walk(d.path(), false).fingerprint, base);
  // A file that is not a report changes nothing.
  d.Write("readme.txt", "hello");
  EXPECT_EQ(Walk(d.path(), false).fingerprint, base);
  // Rewritten in place, same size: the directory's mtime does not move, the file's does.
  const std::string victim = d.path() + "/r777.json";
  {
    std::FILE* f = std::fopen(victim.c_str(), "r+");
    ASSERT_NE(f, nullptr);
    std::fputs("{\"a\": 2}", f);
    std::fclose(f);
  }
  Touch(victim);
  const uint64_t rewritten = Walk(d.path(), false).fingerprint;
  EXPECT_NE(rewritten, base);
  // A report in a subdirectory rewritten.
  Touch(d.path() + "/deep/er/x.json");
  const uint64_t deep = Walk(d.path(), false).fingerprint;
  EXPECT_NE(deep, rewritten);
  // Added, renamed, removed.
  d.Write("new.json", "{}");
  const uint64_t added = Walk(d.path(), false).fingerprint;
  EXPECT_NE(added, deep);
  std::filesystem::rename(d.path() + "/new.json", d.path() + "/new2.json");
  const uint64_t renamed = Walk(d.path(), false).fingerprint;
  EXPECT_NE(renamed, added);
  std::filesystem::remove(d.path() + "/new2.json");
  EXPECT_EQ(Walk(d.path(), false).fingerprint, deep);
}

TEST(FleetWalkTest, DirectoryStampsMoveWithTheirDirectoriesOnly) {
  testing::TempDir d;
  for (int i = 0; i < 30; ++i) {
    d.Write("s" + std::to_string(i % 7) + "/r" + std::to_string(i) + ".json", "{}");
  }
  d.Write("top.json", "{}");
  d.Symlink(d.path() + "/s1/r1.json", "link.json");
  ReportWalk sorted = Walk(d.path(), true);
  ReportWalk quick = Walk(d.path(), false);
  // The top, 7 subdirectories, the link: in any walk order the same fingerprint and stamps.
  EXPECT_EQ(sorted.stamp_paths.size(), 9u);
  EXPECT_EQ(quick.fingerprint, sorted.fingerprint);
  EXPECT_EQ(quick.stamp_hash, sorted.stamp_hash);
  auto again = StampHash(d.path(), sorted.stamp_paths);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, sorted.stamp_hash);
  // A report rewritten in place: its file's mtime moves, no stamp does (the documented limit
  // of trusting directory mtimes); the fingerprint does.
  Touch(d.path() + "/s3/r3.json");
  EXPECT_EQ(*StampHash(d.path(), sorted.stamp_paths), sorted.stamp_hash);
  EXPECT_NE(Walk(d.path(), false).fingerprint, sorted.fingerprint);
  // The link's target rewritten: its stamp moves.
  Touch(d.path() + "/s1/r1.json");
  const uint64_t linked = *StampHash(d.path(), sorted.stamp_paths);
  EXPECT_NE(linked, sorted.stamp_hash);
  // A file added in a subdirectory: that directory's stamp moves.
  d.Write("s5/new.json", "{}");
  Touch(d.path() + "/s5");  // as a later clock tick would (this test runs within one)
  const uint64_t added = *StampHash(d.path(), sorted.stamp_paths);
  EXPECT_NE(added, linked);
  // A subdirectory removed: its stamp is gone (and its parent's moved).
  std::filesystem::remove_all(d.path() + "/s6");
  EXPECT_NE(*StampHash(d.path(), sorted.stamp_paths), added);
  EXPECT_FALSE(StampHash(d.path() + "/missing", sorted.stamp_paths).ok());
}

TEST(FleetWalkTest, SkippedDirectoriesAndOddFilesAreListed) {
  testing::TempDir d;
  d.Write("a.json", "{}");
  std::string deep = "d1/d2/d3/d4/d5/d6/d7/d8/d9";
  d.Write(deep + "/too-deep.json", "{}");
  d.Write("d1/ok.json", "{}");
  d.MakeDir("real");
  d.Symlink(d.path() + "/real", "loop");
  d.Symlink(d.path() + "/a.json", "link.json");
  d.MakeFifo("pipe.json");
  ReportWalk w = Walk(d.path());
  ASSERT_EQ(w.files.size(), 4u);
  EXPECT_EQ(w.files[0], d.path() + "/a.json");
  EXPECT_EQ(w.files[1], d.path() + "/d1/ok.json");
  EXPECT_EQ(w.files[2], d.path() + "/link.json");
  EXPECT_EQ(w.files[3], d.path() + "/pipe.json");
  ASSERT_TRUE(w.info[2].has_value());  // a link to a file: the file's stat
  EXPECT_EQ(w.info[2]->size_bytes, 2u);
  EXPECT_FALSE(w.info[3].has_value());  // a FIFO: listed, never stat-ed as a report
  std::string problems;
  for (const auto& p : w.problems) problems += p.source + ": " + p.message + "\n";
  EXPECT_NE(problems.find("/d1/d2/d3/d4/d5/d6/d7/d8/d9: directory more than 8 levels deep"),
            std::string::npos)
      << problems;
  EXPECT_NE(problems.find("/loop: symbolic link to a directory: not followed"), std::string::npos)
      << problems;
  EXPECT_FALSE(WalkReports(d.path() + "/missing", true, kStall).ok());
}

}  // namespace
}  // namespace gpudoctor::fleet
