// Reading outside input: files users name (regular files only, size limits, deadlines), HTTP
// answers from outside servers (total deadline, body cap) and text that reaches the terminal.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bad_server.h"
#include "core/http_get.h"
#include "core/input_file.h"
#include "core/root_fs.h"
#include "core/strings.h"
#include "core/terminal_text.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using testing::BadServer;
using ::testing::HasSubstr;
using testing::TempDir;

TimePoint In(double s) {
  return SteadyClock::now() +
         std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(s));
}

TEST(ReadInputFileTest, RefusesAFifoAtOnceNamingIt) {
  TempDir dir;
  dir.MakeFifo("reports.json");
  auto start = SteadyClock::now();
  auto r = ReadInputFile(dir.path() + "/reports.json", 1 << 20, In(5));
  EXPECT_LT(std::chrono::duration<double>(SteadyClock::now() - start).count(), 1.0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr(dir.path() + "/reports.json: is a FIFO"));
  EXPECT_THAT(r.status().message(), HasSubstr("not a regular file"));
}

// A path others control (a job's log directory) may be a symlink swapped to a device or FIFO:
// root must not even open it (opening /dev/watchdog starts its countdown). inotify reports every
// open of the FIFO; a pinned O_PATH look is not an open.
TEST(OpenRegularFileTest, NeverOpensWhatIsNotARegularFile) {
  TempDir dir;
  dir.MakeFifo("fifo");
  dir.Symlink(dir.path() + "/fifo", "train.log");
  const int watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(inotify_add_watch(watch, (dir.path() + "/fifo").c_str(), IN_OPEN), 0);
  struct stat st {};
  errno = 0;
  EXPECT_EQ(OpenRegularFile(dir.path() + "/train.log", &st), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  char events[4096];
  EXPECT_EQ(::read(watch, events, sizeof events), -1);  // no IN_OPEN
  EXPECT_EQ(errno, EAGAIN);
  // The same check opens the FIFO for a plain open(2), which is what the watch sees.
  int plain = ::open((dir.path() + "/train.log").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(plain, 0);
  ::close(plain);
  EXPECT_GT(::read(watch, events, sizeof events), 0);
  ::close(watch);
  EXPECT_EQ(OpenRegularFile("/dev/null", &st), -1);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  errno = 0;
  EXPECT_EQ(OpenRegularFile(dir.path() + "/none", &st), -1);
  EXPECT_EQ(errno, ENOENT);
  // A regular file, through a symlink too: opened for reading, its own inode.
  dir.Write("ok.log", "step 1\n");
  dir.Symlink(dir.path() + "/ok.log", "latest.log");
  int fd = OpenRegularFile(dir.path() + "/latest.log", &st);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_size, 7);
  char buf[16];
  EXPECT_EQ(::read(fd, buf, sizeof buf), 7);
  EXPECT_EQ(::fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
  ::close(fd);
}

TEST(ReadInputFileTest, RefusesDevicesAndDirectories) {
  auto zero = ReadInputFile("/dev/zero", 1 << 20, In(5));
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(zero.status().message(), HasSubstr("a character device"));
  TempDir dir;
  auto d = ReadInputFile(dir.path(), 1 << 20, In(5));
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr("a directory"));
}

TEST(ReadInputFileTest, ReadsARegularFileAndRefusesOneOverTheLimit) {
  TempDir dir;
  dir.Write("ok.json", "{\"a\":1}");
  auto r = ReadInputFile(dir.path() + "/ok.json", 7, In(5));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, "{\"a\":1}");
  auto big = ReadInputFile(dir.path() + "/ok.json", 6, In(5));
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big.status().message(), HasSubstr("larger than 6 B"));
  dir.Symlink(dir.path() + "/ok.json", "link.json");  // a link to a regular file is fine
  EXPECT_TRUE(ReadInputFile(dir.path() + "/link.json", 100, In(5)).ok());
  auto missing = ReadInputFile(dir.path() + "/none.json", 100, In(5));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

// A regular file is read straight into the string by its size (no 64 KiB stack buffer); files
// whose size says nothing of their content still read whole: procfs says 0 bytes, sysfs 4096.
TEST(ReadInputFileTest, ReadsWholeFilesWhateverTheirStatSizeSays) {
  TempDir dir;
  std::string big;
  for (int i = 0; big.size() < 300000; ++i) big += "line " + std::to_string(i) + "\n";
  dir.Write("big.toml", big);
  auto r = ReadInputFile(dir.path() + "/big.toml", big.size(), In(5));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, big);
  // A limit one byte under the file's size refuses it (a limit of exactly its size read it).
  auto over = ReadInputFile(dir.path() + "/big.toml", big.size() - 1, In(5));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kInvalidArgument);
  dir.Write("empty.toml", "");
  auto empty = ReadInputFile(dir.path() + "/empty.toml", 10, In(5));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");
  // stat says 0 bytes: the content comes anyway.
  auto status = ReadInputFile("/proc/self/status", 1 << 20, In(5));
  ASSERT_TRUE(status.ok()) << status.status().message();
  EXPECT_THAT(*status, HasSubstr("Name:"));
  // stat says 4096 bytes, the content is a line.
  const std::string sysfs_file = "/sys/kernel/mm/transparent_hugepage/enabled";
  if (RootFs::Exists(sysfs_file)) {
    auto thp = ReadInputFile(sysfs_file, 1 << 20, In(5));
    ASSERT_TRUE(thp.ok()) << thp.status().message();
    EXPECT_THAT(*thp, HasSubstr("["));
    EXPECT_EQ(thp->find('\0'), std::string::npos);
    EXPECT_EQ(thp->back(), '\n');
  }
}

TEST(ReadInputFileTest, RequireRegularFileForLibrariesThatOpenThemselves) {
  TempDir dir;
  dir.MakeFifo("history.db");
  dir.Write("real.db", "x");
  Status fifo = RequireRegularFile(dir.path() + "/history.db");
  EXPECT_EQ(fifo.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(fifo.message(), HasSubstr("a FIFO"));
  EXPECT_TRUE(RequireRegularFile(dir.path() + "/real.db").ok());
  EXPECT_EQ(RequireRegularFile(dir.path() + "/none.db").code(), StatusCode::kNotFound);
}

TEST(HttpGetTest, ATricklingServerCannotHoldTheCallerPastTheDeadline) {
  BadServer server(BadServer::Mode::kTrickle, "", std::chrono::milliseconds(50));
  HttpGetRequest req;
  req.url = server.url() + "/api/v1/status";
  req.deadline = In(1.0);
  auto start = SteadyClock::now();
  auto r = HttpGet(req);
  double took = std::chrono::duration<double>(SteadyClock::now() - start).count();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kTimeout) << r.status().message();
  EXPECT_THAT(r.status().message(), HasSubstr("deadline"));
  EXPECT_GT(took, 0.8);
  EXPECT_LT(took, 2.5);
}

TEST(HttpGetTest, AnEndlessAnswerIsAbortedAtTheCap) {
  BadServer server(BadServer::Mode::kEndless);
  HttpGetRequest req;
  req.url = server.url() + "/";
  req.deadline = In(20);
  req.max_body_bytes = 4u << 20;
  auto r = HttpGet(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().message();
  EXPECT_THAT(r.status().message(), HasSubstr("larger than 4 MiB"));
  // What was buffered stays near the cap (the kernel's socket buffers hold the rest).
  EXPECT_LT(server.bytes_sent(), size_t{64} << 20);
}

TEST(HttpGetTest, ADeclaredLengthOverTheCapFailsAndASmallAnswerPasses) {
  BadServer big(BadServer::Mode::kFixed, std::string(2000, 'x'));
  HttpGetRequest req;
  req.url = big.url() + "/";
  req.deadline = In(5);
  req.max_body_bytes = 1000;
  auto r = HttpGet(req);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("larger than"));
  req.max_body_bytes = 2000;
  auto ok = HttpGet(req);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body.size(), 2000u);
}

TEST(TerminalSafeTest, ControlsBecomeVisibleEscapes) {
  EXPECT_EQ(TerminalSafe("node-1"), "node-1");
  EXPECT_EQ(TerminalSafe("a\x1b]0;pwned\x07"
                         "b"),
            "a\\x1b]0;pwned\\x07b");
  EXPECT_EQ(TerminalSafe("x\ny\rz\t"), "x\\ny\\rz\\t");
  EXPECT_EQ(TerminalSafe("\x7f"), "\\x7f");
  EXPECT_EQ(TerminalSafe("\xc2\x9b"
                         "31m"),
            "\\u{009b}31m");  // C1 CSI
  EXPECT_EQ(TerminalSafe("ab\xe2\x80\xae"
                         "cd"),
            "ab\\u{202e}cd");                                  // right-to-left override
  EXPECT_EQ(TerminalSafe("\xe2\x80\xa8"), "\\u{2028}");        // line separator
  EXPECT_EQ(TerminalSafe("\xff"), "\\xff");                    // not UTF-8
  EXPECT_EQ(TerminalSafe("\xe0\x80\x9b"), "\\xe0\\x80\\x9b");  // overlong ESC
  EXPECT_EQ(TerminalSafe("GPU temp 88 °C → ok"), "GPU temp 88 °C → ok");
  EXPECT_EQ(TerminalSafe(std::string(100, 'a'), 10), std::string(10, 'a') + "...");
}

TEST(TerminalSafeTest, TerminalTextKeepsOnlyItsOwnNewlines) {
  TerminalText t;
  t.Line("node evil\nFAKE LINE");
  t.Blank();
  t.Line("ok");
  EXPECT_EQ(t.str(), "node evil\\nFAKE LINE\n\nok\n");
}

}  // namespace
}  // namespace gpudoctor
