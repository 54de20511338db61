#include "core/replace_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "test_util.h"

namespace gpudoctor {
namespace {

using testing::ReadFileOrDie;
using testing::TempDir;

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

TEST(ReplaceFileTest, NewContentsANewInodeAndTheModeAsked) {
  TempDir dir;
  const std::string path = dir.path() + "/state";
  dir.Write("state", "old contents, longer than the new\n");
  struct stat before;
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  ReplaceFileOptions o;
  o.mode = 0640;
  o.sync_data = true;
  o.sync_directory = true;
  ASSERT_TRUE(ReplaceFileContents(AT_FDCWD, path, "new\n", o).ok());
  EXPECT_EQ(ReadFileOrDie(path), "new\n");
  struct stat after;
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_NE(after.st_ino, before.st_ino);  // what a watcher comparing identities needs
  EXPECT_EQ(after.st_mode & 0777, 0640u & ~static_cast<unsigned>(::umask(::umask(0))));
  EXPECT_FALSE(Exists(path + ".tmp"));
}

TEST(ReplaceFileTest, LinksPlantedAtEitherNameAreReplacedNeverWrittenThrough) {
  TempDir dir;
  dir.Write("victim", "precious\n");
  const std::string victim = dir.path() + "/victim";
  dir.Symlink(victim, "state.tmp");  // a planted temporary
  dir.Symlink(victim, "state");      // and a planted file
  ASSERT_TRUE(ReplaceFileContents(AT_FDCWD, dir.path() + "/state", "mine\n").ok());
  EXPECT_EQ(ReadFileOrDie(victim), "precious\n");
  struct stat st;
  ASSERT_EQ(::lstat((dir.path() + "/state").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(ReadFileOrDie(dir.path() + "/state"), "mine\n");
}

TEST(ReplaceFileTest, AFailureNamesTheStepAndKeepsTheOldContents) {
  TempDir dir;
  dir.Write("state", "old\n");
  // The rename cannot replace a directory with a file: the old name stays as it was and the
  // temporary is removed.
  dir.MakeDir("busy");
  Status s = ReplaceFileContents(AT_FDCWD, dir.path() + "/busy", "new\n");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("rename " + dir.path() + "/busy.tmp to " + dir.path() + "/busy"),
            std::string::npos)
      << s.message();
  EXPECT_FALSE(Exists(dir.path() + "/busy.tmp"));
  // A directory that does not exist: the create step is named.
  s = ReplaceFileContents(AT_FDCWD, dir.path() + "/none/state", "x");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("create " + dir.path() + "/none/state.tmp: ", 0), 0u) << s.message();
  EXPECT_EQ(ReadFileOrDie(dir.path() + "/state"), "old\n");
}

TEST(ReplaceFileTest, RelativeToAnOpenDirectoryWithItsOwnSuffix) {
  TempDir dir;
  int dfd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dfd, 0);
  ReplaceFileOptions o;
  o.tmp_suffix = ".tmp.42";
  o.sync_directory = true;
  EXPECT_TRUE(ReplaceFileContents(dfd, "cache", "a\n", o).ok());
  EXPECT_TRUE(ReplaceFileContents(dfd, "cache", "b\n", o).ok());
  ::close(dfd);
  EXPECT_EQ(ReadFileOrDie(dir.path() + "/cache"), "b\n");
  EXPECT_FALSE(Exists(dir.path() + "/cache.tmp.42"));
}

}  // namespace
}  // namespace gpudoctor
