// The history store under what a root daemon meets: a lock held by another process (never
// mistaken for corruption), paths that are not ours (refused, never renamed), a corrupt file of
// ours (moved aside), the file deleted or replaced while writing (reopened), wall-clock steps
// (nothing replaced, retention not fooled), planted symlinks and open directories (refused),
// and the daemon's own faults as gpudoctor.* findings. Times are injected (unix_ms and mono_ms
// of each tick); waits poll with a deadline.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <tuple>

#include "rules/thresholds.h"
#include "store/history_sink.h"
#include "store/history_store.h"
#include "store/store_file.h"
#include "store/store_schema.h"
#include "store/write_lock_holder.h"
#include "test_util.h"
#include "watch/daemon_health.h"
#include "watch/finding_lifecycle.h"

namespace gpudoctor {
namespace {

using ::testing::HasSubstr;
using testing::ReadFileOrDie;
using testing::TempDir;

constexpr int64_t kT0 = 1700000000;
constexpr int64_t kMono0 = 5'000'000;  // steady-clock ms of the first tick

std::shared_ptr<TickResult> Tick(int64_t unix_s, int64_t mono_ms, double temp) {
  auto t = std::make_shared<TickResult>();
  t->unix_ms = unix_s * 1000;
  t->mono_ms = mono_ms;
  t->points.push_back({FindMetric("gpudoctor_gpu_temperature_celsius"), 0, {}, temp});
  return t;
}

StoreOptions Fast() {
  StoreOptions o;
  o.max_queued_ticks = 1 << 20;
  o.retry_initial_ms = 20;
  o.retry_max_ms = 200;
  return o;
}

// A record the watch loop writes beside the ticks (notifier outcomes): no monotonic time.
std::shared_ptr<TickResult> EventOnly(int64_t unix_s, const std::string& kind) {
  auto t = std::make_shared<TickResult>();
  t->unix_ms = unix_s * 1000;
  t->events.push_back({t->unix_ms, kind, std::nullopt, "", "", "webhook"});
  return t;
}

std::vector<std::pair<int64_t, double>> Points(const std::string& db, int64_t since,
                                               int64_t until) {
  auto r = HistoryReader::Open(db);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return {};
  SeriesQuery q;
  q.metric = "gpudoctor_gpu_temperature_celsius";
  q.gpu = 0;
  q.since_unix_s = since;
  q.until_unix_s = until;
  q.max_points = 1 << 20;
  auto s = (*r)->QuerySeries(q);
  EXPECT_TRUE(s.ok());
  return s.ok() && !s->empty() ? (*s)[0].points : std::vector<std::pair<int64_t, double>>{};
}

std::vector<HistoryEvent> Events(const std::string& db) {
  auto r = HistoryReader::Open(db);
  if (!r.ok()) return {};
  auto e = (*r)->QueryEvents(0);
  return e.ok() ? *e : std::vector<HistoryEvent>{};
}

int CountAside(const TempDir& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    if (e.path().filename().string().find(".corrupt-") != std::string::npos) ++n;
  }
  return n;
}

void Exec(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  sqlite3_close(h);
}

// Appends ticks (one per call, advancing) until pred holds or 20 s pass.
template <typename Pred>
bool TickUntil(HistoryStore& store, int64_t& unix_s, int64_t& mono_ms, Pred pred) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    store.Append(Tick(unix_s++, mono_ms += 1000, 50));
    store.Flush();
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(StoreReliabilityTest, LockHeldByAnotherProcessIsRetriedNeverMovedAside) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  {
    auto s = HistoryStore::Open(db, Fast());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    for (int i = 0; i < 10; ++i) (*s)->Append(Tick(kT0 + i, kMono0 + i * 1000, 40 + i));
    (*s)->Close();
  }
  // An sqlite3 shell in rollback-journal mode holding an exclusive lock.
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder,
                         "PRAGMA journal_mode=DELETE; BEGIN EXCLUSIVE; "
                         "INSERT INTO meta VALUES('held', 'by a shell');",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(holder);
  ::testing::internal::CaptureStderr();
  auto opened = HistoryStore::Open(db, Fast());
  std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();  // runs without history meanwhile
  HistoryStore& store = **opened;
  EXPECT_FALSE(store.health().writing);
  EXPECT_THAT(store.health().error, HasSubstr(db));
  EXPECT_THAT(err, HasSubstr("retrying"));
  EXPECT_THAT(err, ::testing::Not(HasSubstr("moved aside")));
  EXPECT_EQ(CountAside(dir), 0);
  std::vector<Finding> findings;
  AddHistoryFindings(db, store.health(), findings);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "gpudoctor.history.degraded");  // not host.disk.full
  EXPECT_FALSE(HistoryDegradedReason(store.health()).empty());

  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  int64_t unix_s = kT0 + 100, mono = kMono0 + 100000;
  ASSERT_TRUE(TickUntil(store, unix_s, mono, [&] { return store.health().writing; }));
  store.Append(Tick(unix_s, mono + 1000, 77));
  store.Close();
  auto points = Points(db, kT0, kT0 + 1000);
  ASSERT_GE(points.size(), 11u);
  EXPECT_EQ(points.front(), std::make_pair(kT0, 40.0));  // the old history is intact
  EXPECT_EQ(points.back(), std::make_pair(unix_s, 77.0));
  bool resumed = false;
  for (const auto& e : Events(db)) resumed = resumed || e.kind == "history_resumed";
  EXPECT_TRUE(resumed);
  EXPECT_EQ(CountAside(dir), 0);
}

TEST(StoreReliabilityTest, PathsThatAreNotOursAreRefusedAndLeftUntouched) {
  TempDir dir;
  struct Case {
    std::string name;
    std::string reason;
  };
  dir.Write("config.toml", "[watch]\ninterval_s = 1\n");
  std::string other = dir.path() + "/other.db";
  Exec(other, "CREATE TABLE t(x); INSERT INTO t VALUES(1);");
  std::string marked = dir.path() + "/marked.db";
  Exec(marked, "PRAGMA application_id=1234; CREATE TABLE t(x);");
  std::string newer = dir.path() + "/newer.db";
  Exec(newer, "PRAGMA application_id=" + std::to_string(kStoreApplicationId) +
                  "; PRAGMA user_version=" + std::to_string(kStoreSchemaVersion + 1) +
                  "; CREATE TABLE future(x);");
  dir.MakeFifo("fifo");
  dir.Symlink("/dev/null", "device");
  for (const Case& c : std::vector<Case>{{"config.toml", "not an SQLite database"},
                                         {"other.db", "another application"},
                                         {"marked.db", "application_id 1234"},
                                         {"newer.db", "newer"},
                                         {"fifo", "FIFO"},
                                         {"device", "symbolic link"}}) {
    std::string path = dir.path() + "/" + c.name;
    struct stat before;
    ASSERT_EQ(::lstat(path.c_str(), &before), 0);
    std::string content = S_ISREG(before.st_mode) ? ReadFileOrDie(path) : "";
    auto s = HistoryStore::Open(path, Fast());
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_THAT(s.status().message(), HasSubstr(path));
    EXPECT_THAT(s.status().message(), HasSubstr(c.reason)) << c.name;
    EXPECT_EQ(s.status().message().find('\n'), std::string::npos);
    struct stat after;
    ASSERT_EQ(::lstat(path.c_str(), &after), 0);
    EXPECT_EQ(after.st_ino, before.st_ino) << c.name;
    if (S_ISREG(before.st_mode)) {
      EXPECT_EQ(ReadFileOrDie(path), content) << c.name;
    }
    // The readers (`history`, `ack`, the API) use the same check.
    EXPECT_FALSE(HistoryReader::Open(path).ok()) << c.name;
  }
  EXPECT_EQ(CountAside(dir), 0);
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/config.toml-wal"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/config.toml.lock"));
}

TEST(StoreReliabilityTest, OnlyACorruptFileOfOursIsMovedAside) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  {
    auto s = HistoryStore::Open(db, Fast());
    ASSERT_TRUE(s.ok());
    for (int i = 0; i < 200; ++i) (*s)->Append(Tick(kT0 + i, kMono0 + i * 1000, i));
    (*s)->Close();
  }
  Exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
  // Damage every page after the header page (the header still says: ours).
  std::string bytes = ReadFileOrDie(db);
  ASSERT_GT(bytes.size(), 8192u);
  for (size_t i = 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
  dir.Write("history.db", bytes);
  EXPECT_EQ(InspectStoreFile(db, true).kind, StoreFileKind::kCorrupt);
  ::testing::internal::CaptureStderr();
  auto s = HistoryStore::Open(db, Fast());
  std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_THAT(err, HasSubstr("moved aside"));
  EXPECT_EQ(CountAside(dir), 1);
  (*s)->Append(Tick(kT0 + 500, kMono0 + 500000, 1));
  (*s)->Flush();
  EXPECT_TRUE((*s)->health().writing) << (*s)->health().error;
}

TEST(StoreReliabilityTest, DeletedOrReplacedDatabaseIsReopenedAndReported) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  auto opened = HistoryStore::Open(db, Fast());
  ASSERT_TRUE(opened.ok());
  HistoryStore& store = **opened;
  store.Append(Tick(kT0, kMono0, 1));
  store.Flush();
  ASSERT_EQ(::unlink(db.c_str()), 0);
  store.Append(Tick(kT0 + 1, kMono0 + 1000, 2));
  store.Flush();
  StoreHealth h = store.health();
  EXPECT_TRUE(h.writing) << h.error;
  EXPECT_EQ(h.reopened, 1u);
  EXPECT_EQ(h.reopen_reason, "was deleted");
  EXPECT_THAT(HistoryDegradedReason(h), HasSubstr("was deleted"));
  std::vector<Finding> findings;
  AddHistoryFindings(db, h, findings);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "gpudoctor.history.replaced");
  // The write went into the file now at the path, not into the unlinked one.
  EXPECT_EQ(Points(db, kT0, kT0 + 10), (std::vector<std::pair<int64_t, double>>{{kT0 + 1, 2}}));
  bool event = false;
  for (const auto& e : Events(db)) event = event || e.kind == "history_reopened";
  EXPECT_TRUE(event);

  // Replaced by another gpudoctor database (a restore): adopted.
  std::string restored = dir.path() + "/restored.db";
  {
    TempDir other;
    auto s = HistoryStore::Open(other.path() + "/h.db", Fast());
    ASSERT_TRUE(s.ok());
    (*s)->Append(Tick(kT0 - 100, kMono0, 9));
    (*s)->Close();
    Exec(other.path() + "/h.db", "PRAGMA wal_checkpoint(TRUNCATE)");
    std::filesystem::copy_file(other.path() + "/h.db", restored);
  }
  ASSERT_EQ(::rename(restored.c_str(), db.c_str()), 0);
  store.Append(Tick(kT0 + 2, kMono0 + 2000, 3));
  store.Flush();
  EXPECT_EQ(store.health().reopened, 2u);
  EXPECT_EQ(store.health().reopen_reason, "was replaced by another file");
  EXPECT_EQ(Points(db, kT0 - 200, kT0 + 10).size(), 2u);

  // Replaced by a foreign file: never written, reported.
  dir.Write("foreign.tmp", "not a database\n");
  ASSERT_EQ(::rename((dir.path() + "/foreign.tmp").c_str(), db.c_str()), 0);
  store.Append(Tick(kT0 + 3, kMono0 + 3000, 4));
  store.Flush();
  EXPECT_FALSE(store.health().writing);
  EXPECT_THAT(store.health().error, HasSubstr("not an SQLite database"));
  EXPECT_EQ(ReadFileOrDie(db), "not a database\n");
  store.Close();
}

TEST(StoreReliabilityTest, ClockStepBackKeepsEverySampleBesideTheNewer) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  auto s = HistoryStore::Open(db, Fast());
  ASSERT_TRUE(s.ok());
  int64_t mono = kMono0;
  for (int i = 0; i < 150; ++i) (*s)->Append(Tick(kT0 + i, mono += 1000, 100 + i));
  // The wall clock steps back 60 s; the same seconds come again with other values.
  for (int i = 90; i < 150; ++i) (*s)->Append(Tick(kT0 + i, mono += 1000, 500 + i));
  for (int i = 150; i < 200; ++i) (*s)->Append(Tick(kT0 + i, mono += 1000, 100 + i));
  (*s)->Close();
  auto points = Points(db, kT0, kT0 + 1000);
  ASSERT_EQ(points.size(), 260u);
  for (int i = 90; i < 150; ++i) {
    // Both values of the repeated second are there: the first stored is never replaced.
    EXPECT_NE(std::find(points.begin(), points.end(), std::make_pair(kT0 + i, 100.0 + i)),
              points.end())
        << i;
    EXPECT_NE(std::find(points.begin(), points.end(), std::make_pair(kT0 + i, 500.0 + i)),
              points.end())
        << i;
  }
  EXPECT_TRUE(std::is_sorted(points.begin(), points.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; }));
}

TEST(StoreReliabilityTest, ClockStepForwardThenBackDeletesNothing) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  StoreOptions o = Fast();
  o.raw_retention_s = 3600;
  o.rollup_retention_s = 7 * 86400;
  int64_t mono = kMono0;
  {
    auto s = HistoryStore::Open(db, o);
    ASSERT_TRUE(s.ok());
    for (int i = 0; i < 1200; ++i) {
      auto t = Tick(kT0 + i, mono += 1000, i % 100);
      if (i == 0) t->events.push_back({t->unix_ms, "watch_started", {}, "", "", "boot x"});
      (*s)->Append(t);
    }
    // 40 days forward for two minutes, then back.
    for (int i = 0; i < 120; ++i) (*s)->Append(Tick(kT0 + 40 * 86400 + i, mono += 1000, 1));
    // A record without monotonic time (a notifier outcome) stamped by the stepped clock, in a
    // minute of its own: it must not run retention on that clock.
    (*s)->Append(EventOnly(kT0 + 40 * 86400 + 600, "notify_sent"));
    for (int i = 1200; i < 1300; ++i) (*s)->Append(Tick(kT0 + i, mono += 1000, i % 100));
    (*s)->Close();
  }
  EXPECT_EQ(Points(db, kT0, kT0 + 1300).size(), 1300u);
  EXPECT_EQ(Events(db).size(), 2u);
  // Restarted while the clock is wrong again: the file's newest time bounds retention.
  {
    auto s = HistoryStore::Open(db, o);
    ASSERT_TRUE(s.ok());
    (*s)->Append(EventOnly(kT0 + 80 * 86400, "notify_sent"));  // first, before any tick
    for (int i = 0; i < 700; ++i) (*s)->Append(Tick(kT0 + 80 * 86400 + i, mono += 1000, 2));
    (*s)->Close();
  }
  EXPECT_EQ(Points(db, kT0, kT0 + 1300).size(), 1300u);
  EXPECT_EQ(Events(db).size(), 3u);
}

TEST(StoreReliabilityTest, RetentionStillAgesDataAsTheMonotonicClockAdvances) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  StoreOptions o = Fast();
  o.raw_retention_s = 3600;
  o.rollup_retention_s = 2 * 3600;
  auto s = HistoryStore::Open(db, o);
  ASSERT_TRUE(s.ok());
  // One tick a minute for 4 hours of real (monotonic) time.
  for (int i = 0; i < 240; ++i) (*s)->Append(Tick(kT0 + i * 60, kMono0 + i * 60000, 1));
  (*s)->Close();
  auto points = Points(db, kT0, kT0 + 5 * 3600);
  ASSERT_FALSE(points.empty());
  EXPECT_GT(points.front().first, kT0 + 3600);  // the first hours are gone, rollups too
}

TEST(StoreReliabilityTest, VersionOneFilesAreMigratedKeepingTheirSamples) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  Exec(db, "PRAGMA application_id=" + std::to_string(kStoreApplicationId) +
               "; PRAGMA user_version=1; CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
               "CREATE TABLE series(id INTEGER PRIMARY KEY, metric TEXT NOT NULL, gpu INTEGER "
               "NOT NULL, labels TEXT NOT NULL, counter INTEGER NOT NULL DEFAULT 0, "
               "UNIQUE(metric, gpu, labels));"
               "CREATE TABLE samples_recent(series_id INTEGER NOT NULL, ts_s INTEGER NOT NULL, "
               "value REAL NOT NULL, PRIMARY KEY(series_id, ts_s)) WITHOUT ROWID;"
               "CREATE TABLE samples(series_id INTEGER NOT NULL, minute_s INTEGER NOT NULL, "
               "data BLOB NOT NULL, PRIMARY KEY(series_id, minute_s)) WITHOUT ROWID;"
               "INSERT INTO series VALUES(1, 'gpudoctor_gpu_temperature_celsius', 0, '', 0);"
               "INSERT INTO samples_recent VALUES(1, " +
               std::to_string(kT0) + ", 61.0);");
  auto s = HistoryStore::Open(db, Fast());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  (*s)->Append(Tick(kT0 + 1, kMono0, 62));
  (*s)->Close();
  EXPECT_EQ(Points(db, kT0, kT0 + 10),
            (std::vector<std::pair<int64_t, double>>{{kT0, 61}, {kT0 + 1, 62}}));
  EXPECT_EQ(InspectStoreFile(db, false).user_version, kStoreSchemaVersion);
}

// Version 2 files keep one samples_recent row per point (keyed series first in older ones): on
// open they become one samples_ticks row per (second, seq), every point kept, a clock step's
// second point (seq 1) included, and samples_recent is gone.
TEST(StoreReliabilityTest, VersionTwoRecentSamplesBecomeTickRowsKeepingTheirPoints) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  Exec(db, "PRAGMA application_id=" + std::to_string(kStoreApplicationId) +
               "; PRAGMA user_version=2; CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
               "CREATE TABLE series(id INTEGER PRIMARY KEY, metric TEXT NOT NULL, gpu INTEGER "
               "NOT NULL, labels TEXT NOT NULL, counter INTEGER NOT NULL DEFAULT 0, "
               "UNIQUE(metric, gpu, labels));"
               "CREATE TABLE samples_recent(series_id INTEGER NOT NULL, ts_s INTEGER NOT NULL, "
               "seq INTEGER NOT NULL, value REAL NOT NULL, PRIMARY KEY(series_id, ts_s, seq)) "
               "WITHOUT ROWID;"
               "INSERT INTO series VALUES(1, 'gpudoctor_gpu_temperature_celsius', 0, '', 0);"
               "INSERT INTO samples_recent VALUES(1, " +
               std::to_string(kT0) + ", 0, 61.0);INSERT INTO samples_recent VALUES(1, " +
               std::to_string(kT0 + 1) + ", 0, 63.0);INSERT INTO samples_recent VALUES(1, " +
               std::to_string(kT0 + 1) + ", 1, 64.0);");
  auto s = HistoryStore::Open(db, Fast());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  (*s)->Append(Tick(kT0 + 2, kMono0, 62));
  (*s)->Close();
  EXPECT_EQ(Points(db, kT0, kT0 + 10),
            (std::vector<std::pair<int64_t, double>>{
                {kT0, 61}, {kT0 + 1, 63}, {kT0 + 1, 64}, {kT0 + 2, 62}}));
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(h,
                               "SELECT (SELECT count(*) FROM samples_ticks), (SELECT count(*) "
                               "FROM sqlite_master WHERE name='samples_recent')",
                               -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(st, 0), 4);  // kT0; kT0+1 seq 0; kT0+1 seq 1; the new tick
  EXPECT_EQ(sqlite3_column_int64(st, 1), 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  EXPECT_EQ(InspectStoreFile(db, false).user_version, kStoreSchemaVersion);
}

// Every series of a file the base version wrote (tests/fixtures/store/history_v2.db: `watch
// --ticks 65 --probes cpu,nvml` of the version before tick rows, one GPU: one packed minute with
// its rollups, 17 seconds in samples_recent, findings, events, the ledger) reads the same before
// (read-only: not converted) and after a writer opened it (converted); findings, events and GPUs
// too; and a tick written after the conversion reads back.
TEST(StoreReliabilityTest, BaseVersionFileReadsTheSameAfterConversion) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  std::filesystem::copy_file(std::string(GPUDOCTOR_FIXTURES) + "/store/history_v2.db", db);
  std::filesystem::permissions(
      db, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  ASSERT_EQ(InspectStoreFile(db, false).user_version, 2);
  struct Snapshot {
    std::vector<std::tuple<std::string, int, std::string, std::vector<std::pair<int64_t, double>>>>
        series;
    size_t findings = 0, events = 0, gpus = 0;
  };
  auto read_all = [&](Snapshot* out) {
    auto r = HistoryReader::Open(db);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    auto metrics = (*r)->ListMetrics();
    ASSERT_TRUE(metrics.ok());
    for (const auto& m : *metrics) {
      SeriesQuery q;
      q.metric = m;
      q.since_unix_s = 1;
      q.until_unix_s = 4102444800;  // 2100
      q.max_points = 1 << 20;
      auto s = (*r)->QuerySeries(q);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      for (const auto& one : *s) {
        out->series.emplace_back(one.metric, one.gpu.value_or(-2), one.labels, one.points);
      }
    }
    out->findings = (*r)->QueryFindings({})->size();
    out->events = (*r)->QueryEvents(0)->size();
    out->gpus = (*r)->QueryGpus(100)->size();
  };
  Snapshot before, after;
  read_all(&before);
  ASSERT_EQ(before.series.size(), 70u);
  size_t points = 0;
  for (const auto& s : before.series) points += std::get<3>(s).size();
  EXPECT_GT(points, 70u * 60);  // the packed minute and the raw seconds
  EXPECT_EQ(before.findings, 3u);
  EXPECT_EQ(before.gpus, 1u);
  {
    auto s = HistoryStore::Open(db, Fast());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    (*s)->Flush();
  }
  EXPECT_EQ(InspectStoreFile(db, false).user_version, kStoreSchemaVersion);
  read_all(&after);
  EXPECT_EQ(after.series, before.series);
  EXPECT_EQ(after.findings, before.findings);
  EXPECT_EQ(after.events, before.events);
  EXPECT_EQ(after.gpus, before.gpus);
  // Written on: the newest stored second plus one.
  int64_t newest = 0;
  for (const auto& s : before.series) {
    if (!std::get<3>(s).empty()) newest = std::max(newest, std::get<3>(s).back().first);
  }
  {
    auto s = HistoryStore::Open(db, Fast());
    ASSERT_TRUE(s.ok());
    (*s)->Append(Tick(newest + 1, kMono0, 77.5));
    (*s)->Close();
  }
  auto pts = Points(db, newest - 5, newest + 5);
  ASSERT_FALSE(pts.empty());
  EXPECT_EQ(pts.back(), (std::pair<int64_t, double>{newest + 1, 77.5}));
}

TEST(StoreReliabilityTest, MissingOrSharedDirectoriesAndPlantedLinksAreRefused) {
  TempDir dir;
  // A typo in --db: no directory is created.
  auto missing = HistoryStore::Open(dir.path() + "/typo/history.db", Fast());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("does not exist"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/typo"));
  // A directory others may write into.
  dir.MakeDir("shared");
  ::chmod((dir.path() + "/shared").c_str(), 01777);
  auto shared = HistoryStore::Open(dir.path() + "/shared/history.db", Fast());
  ASSERT_FALSE(shared.ok());
  EXPECT_THAT(shared.status().message(), HasSubstr("writable by group or others"));
  // Planted links beside the database: never followed, the victim never truncated.
  for (const char* companion : {".lock", "-wal", "-shm"}) {
    TempDir d;
    d.Write("victim", "precious\n");
    d.Symlink(d.path() + "/victim", std::string("history.db") + companion);
    auto s = HistoryStore::Open(d.path() + "/history.db", Fast());
    ASSERT_FALSE(s.ok()) << companion;
    EXPECT_THAT(s.status().message(), HasSubstr("symbolic link")) << companion;
    EXPECT_EQ(ReadFileOrDie(d.path() + "/victim"), "precious\n") << companion;
  }
  // What gpudoctor creates is private.
  auto s = HistoryStore::Open(dir.path() + "/history.db", Fast());
  ASSERT_TRUE(s.ok());
  (*s)->Close();
  for (const char* name : {"history.db", "history.db.lock"}) {
    struct stat st;
    ASSERT_EQ(::stat((dir.path() + "/" + name).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 077, 0u) << name;
  }
}

TEST(StoreReliabilityTest, WriteErrorsAreTheDaemonsOwnFindingNeverDiskFull) {
  StoreHealth h;
  h.writing = false;
  h.error = "/var/lib/gpudoctor/history.db: commit: database is locked";
  h.dropped_ticks = 7;
  std::vector<Finding> findings;
  AddHistoryFindings("/var/lib/gpudoctor/history.db", h, findings);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "gpudoctor.history.degraded");
  EXPECT_THAT(findings[0].summary, HasSubstr("database is locked"));
  EXPECT_NE(findings[0].action, Action::kDrainReset);
  for (const auto& f : findings) EXPECT_NE(f.id, "host.disk.full");
}

TEST(ClockStepTest, StepsAgainstTheMonotonicClockAreDetectedAndReported) {
  ClockStepDetector d;
  EXPECT_FALSE(d.Observe(kT0 * 1000, kMono0));
  EXPECT_FALSE(d.Observe(kT0 * 1000 + 1000, kMono0 + 1000));
  EXPECT_FALSE(d.Observe(kT0 * 1000 + 2100, kMono0 + 2000));  // jitter, not a step
  auto back = d.Observe(kT0 * 1000 - 60000, kMono0 + 3000);
  ASSERT_TRUE(back);
  EXPECT_LT(*back, -60000 + 1000 * 4);
  std::vector<Finding> findings;
  d.AddFinding(kMono0 + 4000, findings);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "gpudoctor.clock.step");
  EXPECT_THAT(findings[0].summary, HasSubstr("back"));
  findings.clear();
  d.AddFinding(kMono0 + 3000 + 1000 * 1000, findings);
  EXPECT_TRUE(findings.empty());
  auto forward = d.Observe(kT0 * 1000 + 40LL * 86400 * 1000, kMono0 + 5000);
  ASSERT_TRUE(forward);
  EXPECT_GT(*forward, 39LL * 86400 * 1000);
}

// for_s and resolve_after_s run on the monotonic clock: a 1 h step back does not hold a finding
// unopened, a 1 h step forward does not resolve one at once.
TEST(ClockStepTest, LifecycleTimersIgnoreWallClockSteps) {
  Thresholds th;
  Finding f;
  f.id = "host.disk.full";  // resources: for_s 60, resolve_after_s 60
  f.severity = Severity::kCrit;
  f.subject = "/";
  LifecycleInput in;
  in.fired = {f};
  in.now_ms = kT0 * 1000;
  in.mono_ms = kMono0;
  LifecycleOutput out = StepLifecycle(in, th);
  ASSERT_EQ(out.tracked.size(), 1u);
  EXPECT_EQ(out.tracked[0].state, FindingState::kPending);
  // One hour back on the wall clock, 61 s later on the monotonic one.
  in.tracked = out.tracked;
  in.now_ms = kT0 * 1000 - 3600 * 1000 + 61000;
  in.mono_ms = kMono0 + 61000;
  out = StepLifecycle(in, th);
  ASSERT_EQ(out.tracked.size(), 1u);
  EXPECT_EQ(out.tracked[0].state, FindingState::kOpen);
  // Clear now; the wall clock jumps an hour forward 2 s later: still open (hysteresis).
  in.tracked = out.tracked;
  in.fired.clear();
  in.now_ms += 3600 * 1000 + 2000;
  in.mono_ms += 2000;
  out = StepLifecycle(in, th);
  ASSERT_EQ(out.tracked.size(), 1u);
  EXPECT_EQ(out.tracked[0].state, FindingState::kOpen);
  in.tracked = out.tracked;
  in.now_ms += 61000;
  in.mono_ms += 61000;
  out = StepLifecycle(in, th);
  EXPECT_EQ(out.tracked[0].state, FindingState::kResolved);
}

}  // namespace
}  // namespace gpudoctor

namespace gpudoctor {
namespace {

// SIGTERM with another process holding the write lock: every queued tick would wait out
// busy_timeout (2 s each, minutes for a full queue) and systemd would kill the daemon before the
// notifier spool is written. FlushWithin bounds it and counts what it dropped.
TEST(StoreReliabilityTest, ShutdownFlushIsBoundedWhileAnotherProcessHoldsTheLock) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  auto opened = HistoryStore::Open(db, Fast());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  HistoryStore& store = **opened;
  store.Append(Tick(kT0, kMono0, 40));
  store.Flush();
  ASSERT_TRUE(store.health().writing);
  testing::WriteLockHolder holder(db);
  ASSERT_TRUE(holder.held());
  for (int i = 1; i <= 30; ++i) store.Append(Tick(kT0 + i, kMono0 + i * 1000, 40 + i));
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(store.FlushWithin(std::chrono::milliseconds(300)));
  store.Close();
  double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(took_s, 8.0);  // unbounded, 30 ticks x busy_timeout would take about 60 s
  EXPECT_GE(store.dropped_ticks(), 25u);
  holder.Release();
  auto points = Points(db, kT0, kT0 + 1000);
  ASSERT_GE(points.size(), 1u);
  EXPECT_EQ(points.front(), std::make_pair(kT0, 40.0));  // what was written stays
}

}  // namespace
}  // namespace gpudoctor
