// History store durability: kill -9 in the middle of writes (50 times), a full disk (a small
// tmpfs), both with PRAGMA integrity_check and reads afterwards.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "store/history_store.h"
#include "store/synthetic_tick.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

std::string IntegrityCheck(const std::string& db) {
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    sqlite3_close(h);
    return "cannot open";
  }
  sqlite3_stmt* st = nullptr;
  std::string out = "prepare failed";
  if (sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, nullptr) == SQLITE_OK) {
    out.clear();
    while (sqlite3_step(st) == SQLITE_ROW) {
      out += reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    }
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return out;
}

// Distinct stored tick times of one GPU-0 series in [from, to].
size_t StoredTicks(const std::string& db, int64_t from, int64_t to) {
  auto r = HistoryReader::Open(db);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return 0;
  SeriesQuery q;
  q.metric = "gpudoctor_gpu_temperature_celsius";
  q.gpu = 0;
  q.since_unix_s = from;
  q.until_unix_s = to;
  q.max_points = 1 << 30;
  auto s = (*r)->QuerySeries(q);
  EXPECT_TRUE(s.ok());
  return s.ok() && !s->empty() ? (*s)[0].points.size() : 0;
}

int64_t ReadProgress(const std::string& path) {
  std::ifstream in(path);
  int64_t v = -1;
  in >> v;
  return v;
}

TEST(StoreDurabilityTest, KillNineMidWriteFiftyTimesLosesAtMostTheLastTick) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  std::string progress = dir.path() + "/progress";
  constexpr int64_t kT0 = 1700000000;
  constexpr int kRounds = 50;
  int64_t start = kT0;
  int rounds_with_progress = 0;
  for (int round = 0; round < kRounds; ++round) {
    std::filesystem::remove(progress);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::string s = std::to_string(start);
      execl(GPUDOCTOR_STORE_TICK_WRITER, "store_tick_writer", db.c_str(), s.c_str(),
            progress.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    // Every fifth round kills while the store opens (lock, checks, schema); the others once
    // ticks are being written, at a different point of the write cycle each round.
    if (round % 5 != 0) {
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (!std::filesystem::exists(progress) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds((round * 37) % 97));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "writer exited by itself, status " << status;

    // Killed before the file was created: nothing to check yet.
    if (std::filesystem::exists(db)) {
      ASSERT_EQ(IntegrityCheck(db), "ok") << "round " << round;
    }
    int64_t last = ReadProgress(progress);
    if (last >= start) {
      ++rounds_with_progress;
      // Everything reported committed is there; at most the tick in flight is lost.
      size_t stored = StoredTicks(db, start, last + 1000);
      EXPECT_GE(stored, static_cast<size_t>(last - start + 1)) << "round " << round;
      EXPECT_LE(stored, static_cast<size_t>(last - start + 2)) << "round " << round;
      start = last + 2;
    } else {
      start += 1000;
    }
  }
  EXPECT_GE(rounds_with_progress, kRounds * 4 / 5);
  // The file is still ours and opens cleanly: nothing moved aside.
  ::testing::internal::CaptureStderr();
  auto store = HistoryStore::Open(db, {});
  std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(err, "");
}

// Mounts a small tmpfs (needs root / CAP_SYS_ADMIN); unmounted when the object dies.
class SmallTmpfs {
 public:
  explicit SmallTmpfs(const std::string& dir, const char* size) : dir_(dir) {
    std::filesystem::create_directories(dir_);
    // mode=0700: the store refuses a directory others may write into (tmpfs defaults to 1777).
    std::string opts = std::string("size=") + size + ",mode=0700";
    if (mount("tmpfs", dir_.c_str(), "tmpfs", 0, opts.c_str()) == 0) {
      mounted_ = true;
    } else {
      error_ = std::strerror(errno);
    }
  }
  ~SmallTmpfs() {
    if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

 private:
  std::string dir_, error_;
  bool mounted_ = false;
};

// Writes one file until the filesystem at `dir` is full; returns its path (remove it to free).
std::string FillFilesystem(const std::string& dir) {
  std::string filler = dir + "/filler";
  std::ofstream f(filler, std::ios::binary);
  std::string block(64 * 1024, 'x');
  while (f.write(block.data(), block.size())) {
  }
  return filler;
}

TEST(StoreDurabilityTest, DiskFullDropsTicksNamesTheDatabaseAndRecovers) {
  TempDir dir;
  std::string mnt = dir.path() + "/small";
  SmallTmpfs fs(mnt, "32m");
  if (!fs.mounted()) {
    GTEST_SKIP() << "cannot mount a tmpfs at " << mnt << " (" << fs.error()
                 << "); run as root with CAP_SYS_ADMIN to test a full disk";
  }
  std::string db = mnt + "/history.db";
  StoreOptions o;
  o.max_queued_ticks = 1 << 20;
  auto store = HistoryStore::Open(db, o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  int64_t t = 1700000000;
  for (int i = 0; i < 5; ++i) (*store)->Append(testing::SyntheticTick(t++));
  (*store)->Flush();
  ASSERT_EQ((*store)->write_error(), "");

  // Fill the filesystem.
  std::string filler = FillFilesystem(mnt);
  // Keep appending: the store never blocks, and a write fails naming the database.
  std::string err;
  int64_t full_from = t;
  for (int i = 0; i < 2000 && err.empty(); ++i) {
    (*store)->Append(testing::SyntheticTick(t++));
    (*store)->Flush();
    err = (*store)->write_error();
  }
  ASSERT_FALSE(err.empty()) << "the disk never filled up";
  EXPECT_THAT(err, HasSubstr(db));
  EXPECT_THAT(err, HasSubstr("full"));
  EXPECT_GT((*store)->dropped_ticks(), 0u);
  for (int i = 0; i < 20; ++i) (*store)->Append(testing::SyntheticTick(t++));
  (*store)->Flush();
  EXPECT_FALSE((*store)->write_error().empty());

  // Space returns: writing resumes by itself.
  std::filesystem::remove(filler);
  int64_t resumed_at = t;
  (*store)->Append(testing::SyntheticTick(t++));
  (*store)->Flush();
  EXPECT_EQ((*store)->write_error(), "");
  for (int i = 0; i < 70; ++i) (*store)->Append(testing::SyntheticTick(t++));
  (*store)->Flush();
  EXPECT_EQ((*store)->write_error(), "");
  (*store)->Close();
  EXPECT_EQ(IntegrityCheck(db), "ok");
  EXPECT_EQ(StoredTicks(db, resumed_at, t), 71u);
  EXPECT_GE(StoredTicks(db, 1700000000, full_from), 5u);
}

// Disk full when watch starts: the healthy file is kept (never taken for corruption, never
// replaced by an empty one), watch runs without history, and writing resumes when space returns.
TEST(StoreDurabilityTest, DiskFullAtOpenKeepsTheFileAndResumes) {
  TempDir dir;
  std::string mnt = dir.path() + "/small";
  SmallTmpfs fs(mnt, "16m");
  if (!fs.mounted()) {
    GTEST_SKIP() << "cannot mount a tmpfs at " << mnt << " (" << fs.error()
                 << "); run as root with CAP_SYS_ADMIN to test a full disk";
  }
  std::string db = mnt + "/history.db";
  StoreOptions o;
  o.max_queued_ticks = 1 << 20;
  o.retry_initial_ms = 20;
  o.retry_max_ms = 100;
  int64_t t = 1700000000;
  {
    auto store = HistoryStore::Open(db, o);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    for (int i = 0; i < 10; ++i) (*store)->Append(testing::SyntheticTick(t++));
    (*store)->Close();
  }
  std::string filler = FillFilesystem(mnt);
  ::testing::internal::CaptureStderr();
  auto store = HistoryStore::Open(db, o);
  std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_THAT(err, ::testing::Not(HasSubstr("moved aside")));
  for (int i = 0; i < 50; ++i) (*store)->Append(testing::SyntheticTick(t++));
  (*store)->Flush();
  int aside = 0;
  for (const auto& e : std::filesystem::directory_iterator(mnt)) {
    aside += e.path().filename().string().find("corrupt") != std::string::npos;
  }
  EXPECT_EQ(aside, 0);
  std::filesystem::remove(filler);
  int64_t resumed_at = t;
  bool writing = false;
  for (int i = 0; i < 200 && !writing; ++i) {
    (*store)->Append(testing::SyntheticTick(t++));
    (*store)->Flush();
    writing = (*store)->write_error().empty() && (*store)->health().writing;
    if (!writing) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(writing) << (*store)->write_error();
  for (int i = 0; i < 5; ++i) (*store)->Append(testing::SyntheticTick(t++));
  (*store)->Close();
  EXPECT_EQ(IntegrityCheck(db), "ok");
  EXPECT_EQ(StoredTicks(db, 1700000000, 1700000009), 10u);  // the old history is intact
  EXPECT_GE(StoredTicks(db, resumed_at, t), 5u);
}

}  // namespace
}  // namespace gpudoctor
