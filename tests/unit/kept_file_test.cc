// KeptFile (core/kept_file.h): one descriptor re-read from offset 0 gives the file's current
// content, for procfs files the kernel regenerates and for a file rewritten in place; errors
// name the path; keep = false holds no descriptor between reads.
#include "core/kept_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "core/root_fs.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

TEST(KeptFileTest, ProcfsFileReadAgainGivesFreshContent) {
  // This process's own I/O counters: every read of the file counts in rchar.
  KeptFile io(RootFs().ProcPath("self/io"));
  std::string first, second;
  ASSERT_TRUE(io.Read(&first).ok());
  EXPECT_TRUE(io.is_open());
  ASSERT_TRUE(io.Read(&second).ok());
  ASSERT_NE(first.find("rchar:"), std::string::npos) << first;
  EXPECT_NE(first, second);  // rchar grew by the first read
}

TEST(KeptFileTest, FileRewrittenInPlaceIsReadAnewAndShorterContentIsNotPadded) {
  testing::TempDir dir;
  dir.Write("attr", "1234567890\n");
  KeptFile f(dir.path() + "/attr");
  std::string text;
  ASSERT_TRUE(f.Read(&text).ok());
  EXPECT_EQ(text, "1234567890\n");
  int fd = ::open((dir.path() + "/attr").c_str(), O_WRONLY | O_TRUNC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "7\n", 2), 2);
  ::close(fd);
  ASSERT_TRUE(f.Read(&text).ok());
  EXPECT_EQ(text, "7\n");
  ASSERT_TRUE(f.Read(&text, 1).ok());  // max_bytes bounds the read
  EXPECT_EQ(text, "7");
}

TEST(KeptFileTest, RegularFileReplacedByRenameIsReadFromThePath) {
  // A fixture tree (--path.procfs) is replaced file by file with rename between samples: a kept
  // descriptor would read the old file for ever, so only procfs and sysfs files are kept.
  testing::TempDir dir;
  dir.Write("stat", "cpu  1 0 0 0\n");
  KeptFile f(dir.path() + "/stat");
  std::string text;
  ASSERT_TRUE(f.Read(&text).ok());
  EXPECT_FALSE(f.is_open());
  dir.Write("stat.new", "cpu  2 0 0 0\n");
  ASSERT_EQ(::rename((dir.path() + "/stat.new").c_str(), (dir.path() + "/stat").c_str()), 0);
  ASSERT_TRUE(f.Read(&text).ok());
  EXPECT_EQ(text, "cpu  2 0 0 0\n");
}

TEST(KeptFileTest, MissingFileIsNotFoundNamingThePathAndIsOpenedOnceItExists) {
  testing::TempDir dir;
  KeptFile f(dir.path() + "/later");
  std::string text = "stale";
  Status s = f.Read(&text);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find(dir.path() + "/later"), std::string::npos) << s.message();
  EXPECT_FALSE(f.is_open());
  dir.Write("later", "x");
  ASSERT_TRUE(f.Read(&text).ok());
  EXPECT_EQ(text, "x");
}

TEST(KeptFileTest, NotKeptHoldsNoDescriptorBetweenReads) {
  testing::TempDir dir;
  dir.Write("a", "one");
  KeptFile f(dir.path() + "/a", /*keep=*/false);
  std::string text;
  ASSERT_TRUE(f.Read(&text).ok());
  EXPECT_EQ(text, "one");
  EXPECT_FALSE(f.is_open());
  KeptFile moved = std::move(f);
  ASSERT_TRUE(moved.Read(&text).ok());
  EXPECT_EQ(text, "one");
}

}  // namespace
}  // namespace gpudoctor
