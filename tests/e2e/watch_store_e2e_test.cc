// `gpudoctor watch` and its history path end to end: a --db that is not ours is refused with
// exit 3 and one line and left untouched; a --db in a missing directory creates nothing; a
// database locked by another process (an sqlite3 shell) is not moved aside: watch runs without
// history and says so.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "test_util.h"

namespace gpudoctor {
namespace {

using testing::RunGpudoctor;
using testing::TempDir;

int Lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

bool AnyAside(const TempDir& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    if (e.path().filename().string().find(".corrupt-") != std::string::npos) return true;
  }
  return false;
}

TEST(WatchStoreE2eTest, ForeignDbIsRefusedWithExit3AndOneLine) {
  TempDir dir;
  const std::string toml = "[watch]\ninterval_s = 1\n";
  dir.Write("gpudoctor.toml", toml);
  auto r = RunGpudoctor({"watch", "--ticks", "1", "--listen", "off", "--probes", "cpu", "--db",
                         dir.path() + "/gpudoctor.toml"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(dir.path() + "/gpudoctor.toml"), std::string::npos) << r.err;
  EXPECT_EQ(testing::ReadFileOrDie(dir.path() + "/gpudoctor.toml"), toml);
  EXPECT_FALSE(AnyAside(dir));
  // `history` refuses it with the same check.
  auto h = RunGpudoctor({"history", "--db", dir.path() + "/gpudoctor.toml", "--events"});
  EXPECT_EQ(h.exit_code, 3) << h.err;
  EXPECT_NE(h.err.find("not an SQLite database"), std::string::npos) << h.err;
}

TEST(WatchStoreE2eTest, DbInAMissingDirectoryIsRefusedAndNothingCreated) {
  TempDir dir;
  auto r = RunGpudoctor({"watch", "--ticks", "1", "--listen", "off", "--probes", "cpu", "--db",
                         dir.path() + "/typo/history.db"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/typo"));
}

TEST(WatchStoreE2eTest, LockedDbRunsWithoutHistoryAndKeepsTheFile) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  auto first = RunGpudoctor({"watch", "--ticks", "2", "--interval", "0.2", "--listen", "off",
                             "--probes", "cpu", "--db", db});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder,
                         "PRAGMA journal_mode=DELETE; BEGIN EXCLUSIVE; "
                         "INSERT INTO meta VALUES('held', 'x');",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(holder);
  auto r = RunGpudoctor({"watch", "--ticks", "3", "--interval", "0.2", "--listen", "off",
                         "--probes", "cpu", "--db", db});
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("running without history"), std::string::npos) << r.err;
  EXPECT_FALSE(AnyAside(dir)) << r.err;
  auto h = RunGpudoctor({"history", "--db", db, "--events", "--json"});
  EXPECT_EQ(h.exit_code, 0) << h.err;
  EXPECT_NE(h.out.find("watch_started"), std::string::npos) << h.out;  // the first run's history
}

}  // namespace
}  // namespace gpudoctor
