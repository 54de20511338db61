// KeptTaskStats (probes/kept_task_stats.h): the processes probe's stat descriptors kept from scan
// to scan under watch, on the live procfs: a kept descriptor reads its task's current line, fails
// once the task is gone (so a reused number is opened afresh), unread ones close after a full scan,
// the cap holds, and nothing is kept outside procfs.
#include "probes/kept_task_stats.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "test_util.h"

namespace gpudoctor {
namespace {

// A child that sleeps until killed; reaped by Reap().
struct Child {
  Child() {
    pid = fork();
    if (pid == 0) {
      for (;;) pause();
    }
  }
  void Reap() {
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    pid = -1;
  }
  ~Child() { Reap(); }
  pid_t pid = -1;
};

int OpenDir(const std::string& path) {
  return open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

TEST(KeptTaskStatsTest, KeptDescriptorReadsTheTaskUntilItIsGone) {
  Child child;
  ASSERT_GT(child.pid, 0);
  int proc = OpenDir("/proc");
  ASSERT_GE(proc, 0);
  KeptTaskStats kept;
  ASSERT_GT(kept.cap(), 0u);
  kept.StartScan(proc);
  const std::string dir = std::to_string(child.pid);
  int fd = openat(proc, (dir + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(kept.Keep(dir, fd));
  EXPECT_EQ(kept.Find(dir), fd);
  char buf[4096];
  for (int i = 0; i < 2; ++i) {  // read again from offset 0: the whole line each time
    ssize_t n = pread(fd, buf, sizeof buf, 0);
    ASSERT_GT(n, 0);
    EXPECT_EQ(std::string(buf, static_cast<size_t>(n)).rfind(dir + " (", 0), 0u);
  }
  child.Reap();  // gone: the kept descriptor no longer reads a line
  errno = 0;
  EXPECT_LE(pread(fd, buf, sizeof buf, 0), 0);
  kept.Drop(dir);
  EXPECT_EQ(kept.Find(dir), -1);
  EXPECT_EQ(kept.size(), 0u);
  close(proc);
}

TEST(KeptTaskStatsTest, UnreadDescriptorsCloseAfterAFullScanAndTheCapHolds) {
  int proc = OpenDir("/proc");
  ASSERT_GE(proc, 0);
  KeptTaskStats kept;
  kept.StartScan(proc);
  size_t taken = 0;
  for (size_t i = 0; i < kept.cap() + 5; ++i) {
    int fd = openat(proc, "self/stat", O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    if (kept.Keep("key" + std::to_string(i), fd)) {
      ++taken;
    } else {
      close(fd);
    }
  }
  EXPECT_EQ(taken, kept.cap());
  EXPECT_EQ(kept.size(), kept.cap());

  kept.StartScan(proc);  // the next scan reads only key0
  EXPECT_GE(kept.Find("key0"), 0);
  kept.CloseUnread();
  EXPECT_EQ(kept.size(), 1u);
  EXPECT_GE(kept.Find("key0"), 0);
  EXPECT_EQ(kept.Find("key1"), -1);
  close(proc);
}

TEST(KeptTaskStatsTest, NothingIsKeptOutsideProcfs) {
  testing::TempDir dir;
  dir.Write("1/stat", "1 (init) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0\n");
  int root = OpenDir(dir.path());
  ASSERT_GE(root, 0);
  KeptTaskStats kept;
  kept.StartScan(root);
  int fd = openat(root, "1/stat", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_FALSE(kept.Keep("1", fd));  // a fixture file may be replaced: opened afresh each scan
  close(fd);
  EXPECT_EQ(kept.size(), 0u);
  close(root);
}

}  // namespace
}  // namespace gpudoctor
