// HistoryStore / HistoryReader: write and read back, packing, rollups and retention, findings,
// events, the GPU ledger, acks, locks and foreign files. Fake tick times; no sleeping.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <thread>
#include <tuple>

#include "store/history_store.h"
#include "store/history_store_internal.h"
#include "store/sample_codec.h"
#include "store/sqlite_db.h"
#include "store/store_schema.h"
#include "store/write_lock_holder.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::ReadFileOrDie;
using testing::TempDir;

constexpr int64_t kT0 = 1700000000;  // a minute boundary: 1700000000 % 60 == 20, see below
constexpr int64_t kMinute0 = kT0 - kT0 % 60;
// The pack block (StoreOptions::pack_block_s, 600 s) kMinute0 lies in (3 minutes into it), and
// the next one: a tick there packs every tick row before it.
constexpr int64_t kBlock0 = kMinute0 - kMinute0 % 600;
constexpr int64_t kNextBlock = kBlock0 + 600;

const MetricInfo* Metric(const char* name) {
  const MetricInfo* m = FindMetric(name);
  EXPECT_NE(m, nullptr) << name;
  return m;
}

std::shared_ptr<TickResult> MakeTick(int64_t unix_s, double temp, double energy) {
  auto t = std::make_shared<TickResult>();
  t->unix_ms = unix_s * 1000;
  for (int gpu = 0; gpu < 2; ++gpu) {
    t->points.push_back({Metric("gpudoctor_gpu_temperature_celsius"), gpu, {}, temp + gpu});
    t->points.push_back({Metric("gpudoctor_gpu_power_watts"), gpu, {}, 312.456 + gpu});
    t->points.push_back(
        {Metric("gpudoctor_gpu_ecc_sbe_volatile_total"), gpu, {}, energy + 0.001 * gpu});
  }
  return t;
}

int64_t CountRows(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
  int64_t n = -1;
  if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

// Tests append faster than any daemon: a queue long enough that nothing is dropped.
StoreOptions BigQueue() {
  StoreOptions o;
  o.max_queued_ticks = 1 << 20;
  return o;
}

std::unique_ptr<HistoryStore> OpenOrDie(const std::string& path, StoreOptions o = BigQueue()) {
  auto s = HistoryStore::Open(path, o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(StoreCodecTest, RoundTripsExactAndLossy) {
  std::vector<std::pair<int, double>> in = {{0, 65},         {1, 65},  {2, 66}, {5, 1e12 + 0.5},
                                            {6, 1e12 + 3.5}, {7, 0.1}, {59, -3}};
  auto exact = DecodeSamples(EncodeSamples(in, false));
  ASSERT_TRUE(exact);
  EXPECT_EQ(*exact, in);
  auto lossy = DecodeSamples(EncodeSamples(in, true));
  ASSERT_TRUE(lossy);
  ASSERT_EQ(lossy->size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ((*lossy)[i].first, in[i].first);
    EXPECT_NEAR((*lossy)[i].second, in[i].second, std::abs(in[i].second) * 1e-6);
  }
  // A constant series costs the bitmap and 2 bits per sample.
  std::vector<std::pair<int, double>> flat;
  for (int i = 0; i < 60; ++i) flat.emplace_back(i, 0);
  EXPECT_EQ(EncodeSamples(flat, false).size(), 8u + 15u);
}

TEST(StoreCodecTest, RejectsMalformedInput) {
  EXPECT_FALSE(DecodeSamples(""));
  EXPECT_FALSE(DecodeSamples(std::string(7, '\0')));
  std::string blob = EncodeSamples({{0, 1.5}, {1, 1e300}}, false);
  for (size_t n = 0; n < blob.size(); ++n) {
    EXPECT_FALSE(DecodeSamples(blob.substr(0, n))) << n;
  }
  std::string bad(8, '\xff');  // slots beyond 59
  EXPECT_FALSE(DecodeSamples(bad));
}

TEST(StoreCodecTest, EncoderGivesEncodeSamplesBytesOneSampleAtATime) {
  // Every tag: 0 (repeat), 1 (float32 exact), 2 (float32 difference), 3 (double).
  std::vector<std::pair<int, double>> in = {{0, 0},        {1, 65},  {2, 65},  {3, 1e12 + 0.5},
                                            {5, 1e12 + 3}, {7, 0.1}, {8, 0.1}, {59, -3}};
  // The bytes of the series-first pack's encoder (base b2e6ba3), exact and lossy.
  const std::string exact_hex =
      "af01000000000008c44e00008242001000a2941a6d42000020409a9999999999b93f000040c0";
  const std::string lossy_hex =
      "af01000000000008445500008242a5d46853a5d46853cdcccc3dcdcccc3d000040c0";
  auto hex = [](const std::string& b) {
    std::string out;
    char buf[3];
    for (unsigned char c : b) {
      std::snprintf(buf, sizeof buf, "%02x", c);
      out += buf;
    }
    return out;
  };
  for (bool lossy : {false, true}) {
    SampleEncoder e(lossy);
    for (const auto& [slot, v] : in) EXPECT_TRUE(e.Add(slot, v)) << slot;
    EXPECT_EQ(e.size(), in.size());
    EXPECT_EQ(hex(e.Finish()), lossy ? lossy_hex : exact_hex);
    EXPECT_EQ(e.Finish(), EncodeSamples(in, lossy));
  }
  // Out of range, repeated or earlier slots are refused and change nothing.
  SampleEncoder e(false);
  EXPECT_TRUE(e.Add(3, 1.5));
  EXPECT_FALSE(e.Add(3, 2.5));
  EXPECT_FALSE(e.Add(2, 2.5));
  EXPECT_FALSE(e.Add(60, 2.5));
  EXPECT_FALSE(e.Add(-1, 2.5));
  EXPECT_EQ(e.size(), 1u);
  EXPECT_EQ(e.Finish(), EncodeSamples({{3, 1.5}}, false));
  // Unsorted input with repeated slots: the first of each slot, in slot order.
  EXPECT_EQ(EncodeSamples({{9, 4}, {2, 1}, {9, 5}, {70, 1}}, false),
            EncodeSamples({{2, 1}, {9, 4}}, false));
  EXPECT_EQ(SampleEncoder(true).Finish(), std::string(8, '\0'));
  // Reused after Reset (the pack keeps its encoders from minute to minute), in either mode, an
  // encoder gives the bytes of a fresh one; FinishInto appends exactly Finish()'s bytes.
  SampleEncoder reused(true);
  for (const auto& [slot, v] : in) reused.Add(slot, v);
  for (bool lossy : {false, true, false}) {
    reused.Reset(lossy);
    EXPECT_EQ(reused.size(), 0u);
    for (const auto& [slot, v] : in) EXPECT_TRUE(reused.Add(slot, v)) << slot;
    EXPECT_EQ(hex(reused.Finish()), lossy ? lossy_hex : exact_hex);
    std::string out = "head";
    reused.FinishInto(&out);
    EXPECT_EQ(out, "head" + EncodeSamples(in, lossy));
  }
}

// The minute pack lists the tick rows to pack without a sorter (≈ 1 MiB at every minute boundary
// of `watch` when points were ordered by series first); it orders the few (ts_s, id) itself.
TEST(StoreTest, MinutePackStepsTheKeyOrderWithoutASort) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  auto store = OpenOrDie(db);
  ASSERT_TRUE(store);
  store->Append(MakeTick(kT0, 60, 1));
  store->Flush();
  store.reset();
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  std::string sql = std::string("EXPLAIN QUERY PLAN ") + kPackSelectSql;
  ASSERT_EQ(sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr), SQLITE_OK);
  std::string plan;
  while (sqlite3_step(st) == SQLITE_ROW) {
    plan += reinterpret_cast<const char*>(sqlite3_column_text(st, 3));
    plan += "\n";
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  EXPECT_THAT(plan, HasSubstr("samples_ticks"));
  EXPECT_THAT(plan, ::testing::Not(HasSubstr("TEMP B-TREE"))) << plan;
}

// Many series over several unpacked minutes, seconds stored twice and three times (clock steps),
// gauges and counters, in a version 2 file (one samples_recent row per point): converted to tick
// rows on open, the pack stores the blobs and rollups that a series-first pack (the one before
// the key-order pack, written out here) gives for the same raw rows, byte for byte.
TEST(StoreTest, MinutePackStoresWhatTheSeriesFirstPackStored) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  {
    auto store = OpenOrDie(db);  // the schema; no tick
    ASSERT_TRUE(store);
  }
  // Raw rows as a version 2 writer stopped before packing leaves them: 46 series, 3 minutes.
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  auto exec = [&](const std::string& sql) {
    ASSERT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  };
  exec("BEGIN");
  exec("PRAGMA user_version=2");
  exec(
      "CREATE TABLE samples_recent(series_id INTEGER NOT NULL, ts_s INTEGER NOT NULL, seq INTEGER "
      "NOT NULL, value REAL NOT NULL, PRIMARY KEY(ts_s, series_id, seq)) WITHOUT ROWID");
  for (int i = 0; i < 46; ++i) {
    exec("INSERT INTO series(metric, gpu, labels, counter) VALUES('gpudoctor_test_" +
         std::to_string(i) + "', " + std::to_string(i % 8) + ", '', " + std::to_string(i % 3 == 0) +
         ")");
  }
  std::mt19937 rng(23);
  int64_t rows = 0;
  for (int64_t ts = kMinute0 - 180; ts < kMinute0 - 1; ++ts) {
    for (int series = 1; series <= 46; ++series) {
      if (rng() % 10 == 0) continue;  // a second without this series
      int copies = rng() % 25 == 0 ? 1 + static_cast<int>(rng() % 3) : 1;
      for (int seq = 0; seq < copies; ++seq) {
        double v = rng() % 4 == 0 ? 42.0 : (rng() % 100000) / 7.0 + (series % 5 == 0 ? 1e12 : 0);
        char buf[160];
        std::snprintf(buf, sizeof buf, "INSERT INTO samples_recent VALUES(%d, %lld, %d, %.17g)",
                      series, static_cast<long long>(ts), seq, v);
        exec(buf);
        ++rows;
      }
    }
  }
  exec("COMMIT");
  // The expected store: the series-first pack of the rows before kMinute0.
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::string> want_blobs;  // series, minute, seq
  std::map<std::pair<int64_t, int64_t>, std::string> want_rollups;          // series, hour
  std::map<std::pair<int64_t, int64_t>, std::vector<RollupMinute>> want_rollup_minutes;
  {
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(h,
                                 "SELECT r.series_id, r.ts_s, r.value, s.counter FROM "
                                 "samples_recent r JOIN series s ON s.id = r.series_id WHERE "
                                 "r.ts_s < ?1 ORDER BY r.series_id, r.ts_s, r.seq",
                                 -1, &st, nullptr),
              SQLITE_OK);
    sqlite3_bind_int64(st, 1, kMinute0);
    int64_t cur_series = -1, cur_minute = 0;
    bool cur_counter = false;
    std::vector<std::pair<int, double>> cur;
    auto flush = [&]() {
      if (cur.empty()) return;
      std::vector<std::vector<std::pair<int, double>>> layers;
      for (const auto& sample : cur) {
        size_t layer = 0;
        while (layer < layers.size() && !layers[layer].empty() &&
               layers[layer].back().first >= sample.first) {
          ++layer;
        }
        if (layer == layers.size()) layers.emplace_back();
        layers[layer].push_back(sample);
      }
      for (size_t l = 0; l < layers.size(); ++l) {
        want_blobs[{cur_series, cur_minute, static_cast<int64_t>(l)}] =
            EncodeSamples(layers[l], !cur_counter);
      }
      double mn = INFINITY, mx = -INFINITY, sum = 0;
      for (const auto& [slot, v] : cur) {
        mn = std::min(mn, v);
        mx = std::max(mx, v);
        sum += v;
      }
      // One pack holds all three minutes: each series' hour is encoded once, from the
      // minutes' exact figures (a pack per minute merged each into the blob the minutes before
      // came back from, rounded to float32).
      int64_t hour = cur_minute - cur_minute % 3600;
      want_rollup_minutes[{cur_series, hour}].push_back({static_cast<int>((cur_minute - hour) / 60),
                                                         mn, sum / static_cast<double>(cur.size()),
                                                         mx, static_cast<int64_t>(cur.size())});
      cur.clear();
    };
    int64_t seen = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
      int64_t series = sqlite3_column_int64(st, 0);
      int64_t ts = sqlite3_column_int64(st, 1);
      int64_t minute = ts - ts % 60;
      if (series != cur_series || minute != cur_minute) {
        flush();
        cur_series = series;
        cur_minute = minute;
        cur_counter = sqlite3_column_int64(st, 3) != 0;
      }
      cur.emplace_back(static_cast<int>(ts - minute), sqlite3_column_double(st, 2));
      ++seen;
    }
    flush();
    sqlite3_finalize(st);
    EXPECT_EQ(seen, rows);
    for (const auto& [key, minutes] : want_rollup_minutes)
      want_rollups[key] = EncodeRollups(minutes);
  }
  sqlite3_close(h);
  {
    auto store = OpenOrDie(db);
    ASSERT_TRUE(store);
    store->Append(MakeTick(kNextBlock + 1, 60, 1));  // a new block: everything before is packed
    store->Flush();
    EXPECT_EQ(store->write_error(), "");
  }
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM samples_ticks WHERE ts_s < " +
                              std::to_string(kNextBlock)),
            0);
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM sqlite_master WHERE name='samples_recent'"), 0);
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::string> got_blobs;
  std::map<std::pair<int64_t, int64_t>, std::string> got_rollups;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(
      sqlite3_prepare_v2(h, "SELECT series_id, minute_s, seq, data FROM samples", -1, &st, nullptr),
      SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW) {
    got_blobs[{sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
               sqlite3_column_int64(st, 2)}] =
        std::string(static_cast<const char*>(sqlite3_column_blob(st, 3)),
                    static_cast<size_t>(sqlite3_column_bytes(st, 3)));
  }
  sqlite3_finalize(st);
  ASSERT_EQ(sqlite3_prepare_v2(h, "SELECT series_id, hour_s, data FROM rollups", -1, &st, nullptr),
            SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW) {
    got_rollups[{sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1)}] =
        std::string(static_cast<const char*>(sqlite3_column_blob(st, 2)),
                    static_cast<size_t>(sqlite3_column_bytes(st, 2)));
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  EXPECT_GT(want_blobs.size(), 46u * 3);  // more than one layer somewhere
  EXPECT_TRUE(got_blobs == want_blobs) << got_blobs.size() << " blobs, want " << want_blobs.size();
  EXPECT_EQ(want_rollups.size(), 46u);  // and none for the new tick's series (not packed)
  EXPECT_TRUE(got_rollups == want_rollups)
      << got_rollups.size() << " rollups, want " << want_rollups.size();
}

// `watch` reads the open episodes every 5 s (acknowledgements and silences from other processes):
// through findings_open, not a scan of 30 days of resolved episodes (21.7 ms at 20,000 of them).
// A file written before the index gets it at its next write-open.
TEST(StoreTest, OpenFindingsAreReadThroughTheirIndex) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  {
    auto store = OpenOrDie(db);
    ASSERT_TRUE(store);
    store->Append(MakeTick(kMinute0, 60, 1));
    store->Flush();
  }
  auto with_raw = [&](const std::function<void(sqlite3*)>& fn) {
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    fn(h);
    sqlite3_close(h);
  };
  with_raw([](sqlite3* h) {
    ASSERT_EQ(sqlite3_exec(h, "BEGIN", nullptr, nullptr, nullptr), SQLITE_OK);
    for (int i = 0; i < 3002; ++i) {
      std::string state = i < 3000 ? "resolved" : "open";
      std::string sql =
          "INSERT INTO findings(key, first_seen_ms, id, severity, layer, state, "
          "last_seen_ms, resolved_ms) VALUES('gpu.util.low|" +
          std::to_string(i % 8) + "', " + std::to_string(1000 + i) +
          ", 'gpu.util.low', 'info', 'resources', '" + state + "', 1, " +
          (i < 3000 ? "2000" : "0") + ")";
      ASSERT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    }
    ASSERT_EQ(sqlite3_exec(h, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  });
  auto plan = [&] {
    std::string detail;
    with_raw([&](sqlite3* h) {
      std::string sql = "EXPLAIN QUERY PLAN SELECT key" + FindingsQueryTail(true);
      sqlite3_stmt* st = nullptr;
      ASSERT_EQ(sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr), SQLITE_OK);
      while (sqlite3_step(st) == SQLITE_ROW) {
        detail += reinterpret_cast<const char*>(sqlite3_column_text(st, 3));
        detail += "; ";
      }
      sqlite3_finalize(st);
    });
    return detail;
  };
  EXPECT_THAT(plan(), HasSubstr("USING INDEX findings_open")) << plan();
  auto reader = HistoryReader::Open(db);
  ASSERT_TRUE(reader.ok());
  auto open = (*reader)->QueryFindings({0, true});
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(open->size(), 2u);
  auto all = (*reader)->QueryFindings({0, false});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3002u);

  // A file from before the index: it is added at the next write-open.
  with_raw([](sqlite3* h) {
    ASSERT_EQ(sqlite3_exec(h, "DROP INDEX findings_open", nullptr, nullptr, nullptr), SQLITE_OK);
  });
  EXPECT_THAT(plan(), Not(HasSubstr("findings_open")));
  { auto store = OpenOrDie(db); }
  EXPECT_THAT(plan(), HasSubstr("USING INDEX findings_open"));
}

TEST(StoreTest, WritesAndReadsBackAcrossMinutePacking) {
  TempDir dir;
  dir.MakeDir("sub");  // the store never creates its directory
  std::string db = dir.path() + "/sub/history.db";
  auto store = OpenOrDie(db);
  ASSERT_TRUE(store);
  // A whole block and 50 s of the next: the block's ten minutes are packed, the rest is raw.
  const int64_t start = kBlock0, ticks = 650;
  for (int64_t t = start; t < start + ticks; ++t) {
    store->Append(MakeTick(t, 60 + (t % 7), 1e12 + static_cast<double>(t - start) * 3.25));
  }
  store->Flush();
  EXPECT_EQ(store->write_error(), "");
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM samples"), 10 * 6);
  // The next block's 50 s: one row per tick, holding its 6 points.
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM samples_ticks"), 50);

  auto reader = HistoryReader::Open(db);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  SeriesQuery q;
  q.metric = "gpudoctor_gpu_temperature_celsius";
  q.gpu = 1;
  q.since_unix_s = start;
  q.until_unix_s = start + ticks + 50;
  auto series = (*reader)->QuerySeries(q);
  ASSERT_TRUE(series.ok()) << series.status().ToString();
  ASSERT_EQ(series->size(), 1u);
  const auto& pts = (*series)[0].points;
  ASSERT_EQ(pts.size(), static_cast<size_t>(ticks));
  for (size_t i = 0; i < pts.size(); ++i) {
    int64_t t = start + static_cast<int64_t>(i);
    EXPECT_EQ(pts[i].first, t);
    EXPECT_EQ(pts[i].second, 61 + (t % 7));
  }
  // Counters come back exactly, gauges to float precision.
  q.metric = "gpudoctor_gpu_ecc_sbe_volatile_total";
  q.gpu = 0;
  auto counters = (*reader)->QuerySeries(q);
  ASSERT_TRUE(counters.ok());
  for (const auto& [t, v] : (*counters)[0].points) {
    EXPECT_EQ(v, 1e12 + static_cast<double>(t - start) * 3.25) << t;
  }
  q.metric = "gpudoctor_gpu_power_watts";
  auto power = (*reader)->QuerySeries(q);
  ASSERT_TRUE(power.ok());
  for (const auto& [t, v] : (*power)[0].points) EXPECT_NEAR(v, 312.456, 1e-4);
  // No GPU given: every GPU's series.
  q.gpu.reset();
  EXPECT_EQ((*reader)->QuerySeries(q)->size(), 2u);

  auto metrics = (*reader)->ListMetrics();
  ASSERT_TRUE(metrics.ok());
  EXPECT_THAT(*metrics, ::testing::ElementsAre("gpudoctor_gpu_ecc_sbe_volatile_total",
                                               "gpudoctor_gpu_power_watts",
                                               "gpudoctor_gpu_temperature_celsius"));
}

// Raw ticks stay tick rows until a tick enters the next pack block (StoreOptions::pack_block_s,
// 10 minutes by default); then the block's minutes are packed, each series' rows and rollup
// written together. A block of one minute packs every minute; a block that is not a multiple of
// 60 dividing 3600 is refused when the store opens.
TEST(StoreTest, TicksArePackedABlockAtATime) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  auto store = OpenOrDie(db);
  ASSERT_TRUE(store);
  for (int64_t t = kBlock0 + 5; t < kNextBlock; ++t) store->Append(MakeTick(t, 60, 1));
  store->Flush();
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM samples"), 0);  // nine minutes and more: raw
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM rollups"), 0);
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM samples_ticks"), 595);
  store->Append(MakeTick(kNextBlock, 61, 2));
  store->Flush();
  EXPECT_EQ(store->write_error(), "");
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM samples"), 10 * 6);
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM samples_ticks"), 1);
  // One rollup row per series for the hour, holding the block's ten minutes.
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM rollups"), 6);
  EXPECT_EQ(CountRows(db, "SELECT count(DISTINCT minute_s) FROM samples"), 10);
  store.reset();
  {
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(h, "SELECT data FROM rollups", -1, &st, nullptr), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
      auto minutes =
          DecodeRollups(std::string_view(static_cast<const char*>(sqlite3_column_blob(st, 0)),
                                         static_cast<size_t>(sqlite3_column_bytes(st, 0))));
      ASSERT_TRUE(minutes.has_value());
      ASSERT_EQ(minutes->size(), 10u);
      int64_t points = 0;
      for (const auto& m : *minutes) points += m.count;
      EXPECT_EQ(points, 595);
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
  }

  StoreOptions per_minute = BigQueue();
  per_minute.pack_block_s = 60;
  std::string db2 = dir.path() + "/per-minute.db";
  store = OpenOrDie(db2, per_minute);
  ASSERT_TRUE(store);
  for (int64_t t = kMinute0; t < kMinute0 + 150; ++t) store->Append(MakeTick(t, 60, 1));
  store->Flush();
  EXPECT_EQ(CountRows(db2, "SELECT count(*) FROM samples"), 2 * 6);
  EXPECT_EQ(CountRows(db2, "SELECT count(*) FROM samples_ticks"), 30);
  store.reset();

  for (int64_t bad : {0, 59, 90, 420, 7200}) {
    StoreOptions o = BigQueue();
    o.pack_block_s = bad;
    auto refused = HistoryStore::Open(dir.path() + "/refused.db", o);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_THAT(refused.status().message(), HasSubstr("pack block of " + std::to_string(bad)));
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/refused.db"));
}

// One samples_ticks row per tick whatever the number of series; labelled series, a series that
// comes and goes, a point order that changes and a second stored twice (the clock stepped back)
// all read back exactly (the raw minute: doubles bit for bit).
TEST(StoreTest, OneRowPerTickKeepsEveryPointExactly) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  auto store = OpenOrDie(db);
  ASSERT_TRUE(store);
  const MetricInfo* temp = Metric("gpudoctor_gpu_temperature_celsius");
  const MetricInfo* mount = Metric("gpudoctor_host_filesystem_available_bytes");
  std::map<std::pair<int, std::string>, std::vector<std::pair<int64_t, double>>> want;
  auto tick_at = [&](int64_t ts, int i) {
    auto t = std::make_shared<TickResult>();
    t->unix_ms = ts * 1000 + 250;
    for (int gpu = 0; gpu < 8; ++gpu) {
      t->points.push_back({temp, gpu, {}, 40 + gpu + i * 0.1});
    }
    for (const char* m : {"/", "/data"}) {
      if (i % 3 == 2 && std::string(m) == "/data") continue;  // comes and goes
      t->points.push_back({mount, -1, {{"mount", m}}, 1e12 / 3 + i});
    }
    if (i % 2 == 1) std::reverse(t->points.begin(), t->points.end());
    t->points.push_back({temp, 9, {}, std::nan("")});  // not finite: not stored
    for (const auto& p : t->points) {
      if (!std::isfinite(p.value)) continue;
      want[{p.gpu, p.labels.empty() ? "" : p.labels[0].second}].emplace_back(ts, p.value);
    }
    return t;
  };
  int i = 0;
  for (int64_t ts = kMinute0 + 1; ts < kMinute0 + 11; ++ts) store->Append(tick_at(ts, i++));
  store->Append(tick_at(kMinute0 + 5, i++));  // the clock stepped back 6 s
  store->Flush();
  EXPECT_EQ(store->write_error(), "");
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM samples_ticks"), 11);
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM series"), 10);
  auto reader = HistoryReader::Open(db);
  ASSERT_TRUE(reader.ok());
  for (auto& [key, points] : want) std::sort(points.begin(), points.end());
  for (const auto& [key, points] : want) {
    SeriesQuery q;
    q.metric = key.first >= 0 ? "gpudoctor_gpu_temperature_celsius"
                              : "gpudoctor_host_filesystem_available_bytes";
    q.gpu = key.first;
    if (!key.second.empty()) q.labels = LabelsKey({{"mount", key.second}});
    q.since_unix_s = kMinute0;
    q.until_unix_s = kMinute0 + 59;
    auto got = (*reader)->QuerySeries(q);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got->size(), 1u) << key.first << key.second;
    EXPECT_EQ((*got)[0].points, points) << key.first << key.second;
  }
  // All of them at once (one read of the tick rows for every series).
  SeriesQuery all;
  all.metric = "gpudoctor_gpu_temperature_celsius";
  all.since_unix_s = kMinute0;
  all.until_unix_s = kMinute0 + 59;
  auto every = (*reader)->QuerySeries(all);
  ASSERT_TRUE(every.ok());
  ASSERT_EQ(every->size(), 8u);
  for (const auto& s : *every)
    EXPECT_EQ(s.points, want[std::make_pair(*s.gpu, std::string())]) << *s.gpu;
  store.reset();
  // Packed in the next block, the second stored twice stays twice.
  const auto want3 = want[std::make_pair(3, std::string())];
  store = OpenOrDie(db);
  store->Append(tick_at(kNextBlock + 1, 0));
  store->Flush();
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM samples_ticks"), 1);
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM samples WHERE seq = 1"), 10);
  auto packed = HistoryReader::Open(db);
  ASSERT_TRUE(packed.ok());
  SeriesQuery q;
  q.metric = "gpudoctor_gpu_temperature_celsius";
  q.gpu = 3;
  q.since_unix_s = kMinute0;
  q.until_unix_s = kMinute0 + 59;
  auto got = (*packed)->QuerySeries(q);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ((*got)[0].points.size(), want3.size());
  for (size_t k = 0; k < want3.size(); ++k) {
    EXPECT_EQ((*got)[0].points[k].first, want3[k].first);
    EXPECT_FLOAT_EQ((*got)[0].points[k].second, want3[k].second);  // gauges: float32
  }
}

// A store at `db` keeping raw ticks raw_s seconds and minute rollups rollup_s seconds.
std::unique_ptr<HistoryStore> OpenWithRetention(const std::string& db, int64_t raw_s,
                                                int64_t rollup_s) {
  StoreOptions o = BigQueue();
  o.raw_retention_s = raw_s;
  o.rollup_retention_s = rollup_s;
  return OpenOrDie(db, o);
}

TEST(StoreTest, OldDataIsServedFromMinuteRollupsAfterRawRetention) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  auto store = OpenWithRetention(db, 3600, 3 * 3600);
  ASSERT_TRUE(store);
  // Five hours at one tick per 10 s; the temperature is the minute number, plus 0..5 within it.
  for (int64_t t = kMinute0; t < kMinute0 + 5 * 3600; t += 10) {
    int64_t minute = (t - kMinute0) / 60;
    store->Append(MakeTick(t, static_cast<double>(minute) + ((t - kMinute0) % 60) / 10, 0));
  }
  store->Flush();
  ASSERT_EQ(store->write_error(), "");
  store->Close();
  int64_t end = kMinute0 + 5 * 3600;
  // Raw minutes older than an hour (plus the 10-minute retention cadence) are gone.
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM samples WHERE minute_s < " +
                              std::to_string(end - 3600 - 660)),
            0);
  // Rollup hours older than three hours are gone; the rest is there.
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM rollups WHERE hour_s < " +
                              std::to_string(end - 3 * 3600 - 4200)),
            0);
  EXPECT_GT(CountRows(db, "SELECT count(*) FROM rollups"), 0);

  auto reader = HistoryReader::Open(db);
  ASSERT_TRUE(reader.ok());
  SeriesQuery q;
  q.metric = "gpudoctor_gpu_temperature_celsius";
  q.gpu = 0;
  q.since_unix_s = end - 2 * 3600;
  q.until_unix_s = end;
  q.max_points = 100000;
  auto s = (*reader)->QuerySeries(q);
  ASSERT_TRUE(s.ok());
  const auto& pts = (*s)[0].points;
  ASSERT_FALSE(pts.empty());
  // The first hour of the window comes from rollups: one point per minute, the minute's mean.
  EXPECT_EQ(pts[0].first, q.since_unix_s);
  EXPECT_EQ(pts[1].first - pts[0].first, 60);
  int64_t minute = (pts[0].first - kMinute0) / 60;
  EXPECT_NEAR(pts[0].second, minute + 2.5, 1e-4);
  // The last hour is raw: one point per 10 s.
  EXPECT_EQ(pts.back().first, end - 10);
  EXPECT_EQ(pts.back().first - pts[pts.size() - 2].first, 10);
  // Timestamps strictly increase.
  for (size_t i = 1; i < pts.size(); ++i) ASSERT_LT(pts[i - 1].first, pts[i].first);

  // Downsampling bounds the number of points.
  q.max_points = 50;
  auto ds = (*reader)->QuerySeries(q);
  ASSERT_TRUE(ds.ok());
  EXPECT_LE((*ds)[0].points.size(), 50u);
  EXPECT_GE((*ds)[0].points.size(), 40u);
}

// The averaging QuerySeries did before it bucketed points as it read them: the full-resolution
// points into max_points equal buckets from the first point.
std::vector<std::pair<int64_t, double>> ReferenceDownsample(
    const std::vector<std::pair<int64_t, double>>& points, int max_points, int64_t since,
    int64_t until) {
  if (static_cast<int>(points.size()) <= max_points) return points;
  int64_t start = std::max(since, points.front().first);
  int64_t width = (std::max<int64_t>(1, until - start + 1) + max_points - 1) / max_points;
  std::vector<std::pair<int64_t, double>> out;
  int64_t bucket = -1;
  double sum = 0;
  int n = 0;
  for (const auto& [t, v] : points) {
    int64_t b = (t - start) / width;
    if (b != bucket && n > 0) {
      out.emplace_back(start + bucket * width, sum / n);
      sum = 0;
      n = 0;
    }
    bucket = b;
    sum += v;
    ++n;
  }
  if (n > 0) out.emplace_back(start + bucket * width, sum / n);
  return out;
}

TEST(StoreTest, DownsampledSeriesAreTheMeansOfTheFullResolutionPoints) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  auto store = OpenWithRetention(db, 3600, 6 * 3600);
  ASSERT_TRUE(store);
  // Five hours and five minutes at one tick per 5 s, left open: rollups before the last hour,
  // packed minutes after, and the last block's ticks not packed yet.
  const int64_t end = kMinute0 + 5 * 3600 + 300;
  for (int64_t t = kMinute0; t < end; t += 5) {
    store->Append(MakeTick(t, std::sin(static_cast<double>(t) / 700.0) * 40 + 50, 0));
  }
  store->Flush();
  ASSERT_EQ(store->write_error(), "");
  ASSERT_GT(CountRows(db, "SELECT count(*) FROM samples_ticks"), 0);
  auto reader = HistoryReader::Open(db);
  ASSERT_TRUE(reader.ok());
  for (int64_t back : {int64_t{240}, int64_t{1800}, int64_t{2 * 3600}, int64_t{6 * 3600}}) {
    SeriesQuery q;
    q.metric = "gpudoctor_gpu_temperature_celsius";
    q.gpu = 0;
    q.since_unix_s = end - back;
    q.until_unix_s = end;
    q.max_points = 1 << 20;
    auto full = (*reader)->QuerySeries(q);
    ASSERT_TRUE(full.ok());
    ASSERT_EQ(full->size(), 1u);
    const auto& all = (*full)[0].points;
    ASSERT_GT(all.size(), 40u) << back;
    for (int max_points : {1, 7, 40, 333, 2000, 100000}) {
      q.max_points = max_points;
      auto ds = (*reader)->QuerySeries(q);
      ASSERT_TRUE(ds.ok());
      auto want = ReferenceDownsample(all, max_points, q.since_unix_s, end);
      const auto& got = (*ds)[0].points;
      ASSERT_EQ(got.size(), want.size()) << back << " s back, " << max_points << " points";
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i].first, want[i].first) << back << " s back, point " << i;
        ASSERT_NEAR(got[i].second, want[i].second, 1e-9) << back << " s back, point " << i;
      }
    }
  }
  store->Close();
}

TrackedFinding MakeTracked(const std::string& id, int gpu, const std::string& serial) {
  TrackedFinding t;
  t.last.id = id;
  t.last.layer = Layer::kHardware;
  t.last.severity = Severity::kCrit;
  t.last.summary = "double-bit ECC errors";
  t.last.Add("dbe_count", int64_t{3}).Add("ratio", 0.5).Add("note", "x").AddBool("on", true);
  t.last.next_steps = {"drain", "reset"};
  GpuRef g;
  g.index = gpu;
  g.serial = serial;
  g.pci_bus_id = "0000:3b:00.0";
  g.uuid = "GPU-1";
  t.last.gpu = g;
  t.key = id + "|serial=" + serial + "|";
  t.state = FindingState::kOpen;
  t.first_seen_ms = kT0 * 1000;
  t.opened_ms = kT0 * 1000;
  t.last_seen_ms = kT0 * 1000;
  return t;
}

TEST(StoreTest, FindingsEventsLedgerAndAcks) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  auto store = OpenOrDie(db);
  ASSERT_TRUE(store);
  auto tick = MakeTick(kT0, 50, 0);
  tick->findings.push_back(MakeTracked("gpu.ecc.dbe", 3, "SN3"));
  tick->events.push_back({kT0 * 1000, "xid", 3, "SN3", "0000:3b:00.0", "Xid 48"});
  GpuFacts g;
  g.index = 3;
  g.serial = "SN3";
  g.uuid = "GPU-1";
  g.pci_bus_id = "0000:3b:00.0";
  g.name = "NVIDIA H100";
  tick->report.snapshot.gpu.gpus.push_back(g);
  store->Append(tick);
  store->Flush();
  ASSERT_EQ(store->write_error(), "");
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM gpus WHERE serial='SN3' AND model='NVIDIA H100'"),
            1);

  // `gpudoctor ack` from another connection while the daemon holds the store. Each write that
  // marked something rewrites the marks file `watch` looks at (watch/ack_poll.h).
  const std::string marks = OperatorMarksPath(db);
  EXPECT_FALSE(std::filesystem::exists(marks));
  // Links planted at both names (the marks file and the one written beside it): replaced or
  // removed, their targets never written.
  dir.Write("victim1", "precious\n");
  dir.Write("victim2", "precious\n");
  dir.Symlink(dir.path() + "/victim1", "history.db-acks");
  dir.Symlink(dir.path() + "/victim2", "history.db-acks.tmp");
  auto acked = AckFindings(db, "gpu.ecc.dbe", 3, (kT0 + 5) * 1000, "RMA filed");
  ASSERT_TRUE(acked.ok()) << acked.status().ToString();
  EXPECT_EQ(*acked, 1);
  EXPECT_EQ(testing::ReadFileOrDie(marks), std::to_string((kT0 + 5) * 1000) + "\n");
  EXPECT_FALSE(AckFindings(db, "gpu.ecc.dbe", 4, kT0 * 1000, "").ok());
  EXPECT_EQ(testing::ReadFileOrDie(marks), std::to_string((kT0 + 5) * 1000) + "\n");
  auto silenced =
      SilenceFindings(db, "gpu.ecc.dbe", std::nullopt, (kT0 + 7200) * 1000, (kT0 + 6) * 1000);
  ASSERT_TRUE(silenced.ok());
  EXPECT_EQ(testing::ReadFileOrDie(marks), std::to_string((kT0 + 6) * 1000) + "\n");
  EXPECT_FALSE(std::filesystem::exists(marks + ".tmp"));
  EXPECT_EQ(testing::ReadFileOrDie(dir.path() + "/victim1"), "precious\n");
  EXPECT_EQ(testing::ReadFileOrDie(dir.path() + "/victim2"), "precious\n");
  struct stat st {};
  ASSERT_EQ(::lstat(marks.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 077, 0u);

  // The daemon's next tick (which does not know of the ack yet) does not undo it.
  auto tick2 = MakeTick(kT0 + 10, 50, 0);
  auto resolved = MakeTracked("gpu.ecc.dbe", 3, "SN3");
  resolved.state = FindingState::kResolved;
  resolved.resolved_ms = (kT0 + 10) * 1000;
  resolved.resolution = "cleared_by_reboot";
  resolved.reboots_during = 1;
  tick2->findings.push_back(resolved);
  store->Append(tick2);
  store->Flush();
  EXPECT_EQ(store->write_error(), "");
  store->Close();

  auto reader = HistoryReader::Open(db);
  ASSERT_TRUE(reader.ok());
  auto findings = (*reader)->QueryFindings({});
  ASSERT_TRUE(findings.ok());
  ASSERT_EQ(findings->size(), 1u);
  const TrackedFinding& f = (*findings)[0];
  EXPECT_EQ(f.state, FindingState::kResolved);
  EXPECT_EQ(f.resolution, "cleared_by_reboot");
  EXPECT_EQ(f.reboots_during, 1);
  EXPECT_TRUE(f.acked);
  EXPECT_EQ(f.ack_note, "RMA filed");
  EXPECT_EQ(f.silenced_until_ms, (kT0 + 7200) * 1000);
  ASSERT_TRUE(f.last.gpu);
  EXPECT_EQ(f.last.gpu->index, 3);
  EXPECT_EQ(f.last.gpu->serial, "SN3");
  ASSERT_EQ(f.last.evidence.size(), 4u);
  EXPECT_EQ(std::get<int64_t>(f.last.evidence[0].value), 3);
  EXPECT_EQ(std::get<double>(f.last.evidence[1].value), 0.5);
  EXPECT_EQ(std::get<std::string>(f.last.evidence[2].value), "x");
  EXPECT_EQ(std::get<bool>(f.last.evidence[3].value), true);
  EXPECT_EQ(f.last.next_steps, (std::vector<std::string>{"drain", "reset"}));
  auto open_only = (*reader)->QueryFindings({0, true});
  ASSERT_TRUE(open_only.ok());
  EXPECT_TRUE(open_only->empty());

  auto events = (*reader)->QueryEvents(0);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 3u);  // xid, ack, silence
  EXPECT_EQ((*events)[0].kind, "xid");
  EXPECT_EQ((*events)[0].gpu_index, 3);
  EXPECT_EQ((*events)[1].kind, "ack");
  EXPECT_THAT((*events)[1].detail, HasSubstr("RMA filed"));
  EXPECT_EQ((*events)[2].kind, "silence");
  // The newest two only, still oldest first.
  auto newest = (*reader)->QueryEvents(0, 2);
  ASSERT_TRUE(newest.ok());
  ASSERT_EQ(newest->size(), 2u);
  EXPECT_EQ((*newest)[0].kind, "ack");
  EXPECT_EQ((*newest)[1].kind, "silence");

  auto j = TrackedFindingToJson(f);
  EXPECT_EQ(j["state"], "resolved");
  EXPECT_EQ(j["finding"]["id"], "gpu.ecc.dbe");
  EXPECT_EQ(j["duration_s"], 10);
  EXPECT_EQ(HistoryEventToJson((*events)[0])["gpu"], 3);
}

// The one finding the history file at `db` holds (a default TrackedFinding, and a failure, when
// it holds none or several).
TrackedFinding OnlyStoredFinding(const std::string& db) {
  auto reader = HistoryReader::Open(db);
  EXPECT_TRUE(reader.ok());
  if (!reader.ok()) return {};
  auto findings = (*reader)->QueryFindings({0, true});
  EXPECT_TRUE(findings.ok());
  EXPECT_EQ(findings->size(), 1u);
  return findings->empty() ? TrackedFinding{} : findings->front();
}

// watch's acknowledgement poll through `reader`: the one open finding's acknowledgement columns
// alone (a default TrackedFinding, and a failure, when the query fails or finds none or several).
TrackedFinding OnlyFindingsAck(HistoryReader& reader) {
  FindingsQuery acks{0, true};
  acks.acks_only = true;
  auto found = reader.QueryFindings(acks);
  EXPECT_TRUE(found.ok());
  if (!found.ok()) return {};
  EXPECT_EQ(found->size(), 1u);
  return found->empty() ? TrackedFinding{} : found->front();
}

// An open finding is rewritten every tick and its evidence JSON kept from the tick before while
// it is unchanged: what is stored is always the tick's own evidence and steps, including a
// change back to an earlier value, a NaN, and a finding that leaves and comes back.
TEST(StoreTest, OpenFindingRewrittenEachTickStoresThatTicksEvidence) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  auto store = OpenOrDie(db);
  ASSERT_TRUE(store);
  auto stored = [&] {
    store->Flush();
    EXPECT_EQ(store->write_error(), "");
    return OnlyStoredFinding(db);
  };
  auto write = [&](int64_t t, int64_t dbe, double ratio, std::vector<std::string> steps,
                   bool with_finding = true) {
    auto tick = MakeTick(t, 50, 0);
    if (with_finding) {
      TrackedFinding f = MakeTracked("gpu.ecc.dbe", 3, "SN3");
      f.last.evidence[0].value = dbe;
      f.last.evidence[1].value = ratio;
      f.last.next_steps = std::move(steps);
      f.last_seen_ms = t * 1000;
      tick->findings.push_back(f);
    }
    store->Append(tick);
  };
  write(kT0, 3, 0.5, {"drain"});
  write(kT0 + 1, 3, 0.5, {"drain"});
  TrackedFinding f = stored();
  EXPECT_EQ(std::get<int64_t>(f.last.evidence[0].value), 3);
  EXPECT_EQ(f.last_seen_ms, kT0 * 1000);  // unchanged: last_seen_ms kept back (next test)
  write(kT0 + 2, 4, 0.5, {"drain"});
  f = stored();
  EXPECT_EQ(std::get<int64_t>(f.last.evidence[0].value), 4);
  EXPECT_EQ(f.last_seen_ms, (kT0 + 2) * 1000);  // a changed row is written whole
  write(kT0 + 3, 3, 0.5, {"drain"});            // back to the first tick's value
  EXPECT_EQ(std::get<int64_t>(stored().last.evidence[0].value), 3);
  write(kT0 + 4, 3, 0.5, {"drain", "reset"});
  EXPECT_EQ(stored().last.next_steps, (std::vector<std::string>{"drain", "reset"}));
  write(kT0 + 5, 3, std::nan(""), {"drain", "reset"});
  write(kT0 + 6, 3, std::nan(""), {"drain", "reset"});
  write(kT0 + 7, 3, 0.25, {"drain", "reset"});
  EXPECT_EQ(std::get<double>(stored().last.evidence[1].value), 0.25);
  write(kT0 + 8, 9, 0.25, {}, /*with_finding=*/false);  // a tick without it
  write(kT0 + 9, 5, 0.25, {"drain"});
  f = stored();
  EXPECT_EQ(std::get<int64_t>(f.last.evidence[0].value), 5);
  EXPECT_EQ(f.last.next_steps, (std::vector<std::string>{"drain"}));

  // `watch`'s ack merge reads the acknowledgement only.
  ASSERT_TRUE(AckFindings(db, "gpu.ecc.dbe", 3, (kT0 + 10) * 1000, "RMA filed").ok());
  auto reader = HistoryReader::Open(db);
  ASSERT_TRUE(reader.ok());
  TrackedFinding acked = OnlyFindingsAck(**reader);
  EXPECT_EQ(acked.key, f.key);
  EXPECT_TRUE(acked.acked);
  EXPECT_EQ(acked.acked_ms, (kT0 + 10) * 1000);
  EXPECT_EQ(acked.ack_note, "RMA filed");
  EXPECT_TRUE(acked.last.evidence.empty());
  store->Close();
}

// A reader asked the same findings query again (watch's acknowledgement poll, every few ticks)
// reuses the compiled statement: it sees what other connections wrote in between, and holds no
// read snapshot between queries, so a checkpoint can empty the WAL.
TEST(StoreTest, RepeatedFindingsQuerySeesNewAcksAndHoldsNoSnapshotBetween) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  auto store = OpenOrDie(db);
  ASSERT_TRUE(store);
  auto tick = MakeTick(kT0, 50, 0);
  tick->findings.push_back(MakeTracked("gpu.ecc.dbe", 3, "SN3"));
  store->Append(tick);
  store->Flush();
  ASSERT_EQ(store->write_error(), "");
  auto reader = HistoryReader::Open(db);
  ASSERT_TRUE(reader.ok());
  EXPECT_FALSE(OnlyFindingsAck(**reader).acked);
  // A checkpoint from another connection empties the WAL only if no reader holds a snapshot.
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "SELECT count(*) FROM findings", nullptr, nullptr, nullptr),
            SQLITE_OK);  // reads the header: the connection knows the file is in WAL mode
  int log_frames = -1, checkpointed = -1;
  EXPECT_EQ(sqlite3_wal_checkpoint_v2(other, nullptr, SQLITE_CHECKPOINT_TRUNCATE, &log_frames,
                                      &checkpointed),
            SQLITE_OK)
      << sqlite3_errmsg(other);
  EXPECT_EQ(log_frames, 0);
  sqlite3_close(other);
  ASSERT_TRUE(AckFindings(db, "gpu.ecc.dbe", 3, (kT0 + 10) * 1000, "RMA filed").ok());
  TrackedFinding after = OnlyFindingsAck(**reader);
  EXPECT_TRUE(after.acked);
  EXPECT_EQ(after.ack_note, "RMA filed");
  // Another query on the same reader, then the first again: each answers its own columns.
  auto whole = (*reader)->QueryFindings(FindingsQuery{0, true});
  ASSERT_TRUE(whole.ok());
  ASSERT_EQ(whole->size(), 1u);
  EXPECT_EQ((*whole)[0].last.id, "gpu.ecc.dbe");
  TrackedFinding again = OnlyFindingsAck(**reader);
  EXPECT_TRUE(again.acked);
  EXPECT_TRUE(again.last.id.empty());
  store->Close();
}

// An open finding seen again unchanged has only its last_seen_ms written, every
// kFindingSeenEveryMs of tick time (its whole row rewrote the table's and both indexes' pages
// every tick); any other change is written at once, whole; closing the store writes the newest
// last_seen_ms that was kept back.
// A store whose quiet ticks wait `commit_interval_ms` to be committed (a minute: never, within a
// test) or `commit_max_ticks` of them.
std::unique_ptr<HistoryStore> OpenBatching(const std::string& db, int commit_interval_ms = 60'000,
                                           int commit_max_ticks = 10) {
  StoreOptions o = BigQueue();
  o.commit_interval_ms = commit_interval_ms;
  o.commit_max_ticks = commit_max_ticks;
  return OpenOrDie(db, o);
}

// Polls `pred` every 20 ms for up to `timeout_s`.
bool Eventually(const std::function<bool()>& pred, double timeout_s) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// Quiet ticks wait for the commit interval (here a minute: never, in this test); a tick with a
// transition, a record of events, a reader's CommitQueued and Close each commit what is queued
// at once, the quiet ticks before them included.
TEST(StoreTest, QuietTicksWaitForTheCommitIntervalAndTransitionsEventsReadersAndCloseDoNot) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  auto store = OpenBatching(db);
  ASSERT_TRUE(store);
  auto ticks = [&] { return CountRows(db, "SELECT count(*) FROM samples_ticks"); };
  auto events = [&] { return CountRows(db, "SELECT count(*) FROM events"); };
  store->Append(MakeTick(kT0, 50, 0));
  store->Append(MakeTick(kT0 + 1, 51, 0));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(ticks(), 0);
  EXPECT_TRUE(store->CommitQueued(std::chrono::seconds(10)));
  EXPECT_EQ(ticks(), 2);

  store->Append(MakeTick(kT0 + 2, 52, 0));
  auto opened = MakeTick(kT0 + 3, 53, 0);
  opened->transitions.push_back({TransitionKind::kOpened, MakeTracked("gpu.ecc.dbe", 0, "SN0")});
  store->Append(opened);
  EXPECT_TRUE(Eventually([&] { return ticks() == 4; }, 10)) << ticks();

  store->Append(MakeTick(kT0 + 4, 54, 0));
  HistoryEvent e;
  e.unix_ms = (kT0 + 4) * 1000;
  e.kind = "notify_sent";
  store->AppendEvents({e}, 0, 0);
  EXPECT_TRUE(Eventually([&] { return ticks() == 5 && events() == 1; }, 10))
      << ticks() << " ticks, " << events() << " events";

  store->Append(MakeTick(kT0 + 5, 55, 0));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(ticks(), 5);
  store->Close();
  EXPECT_EQ(ticks(), 6);
  EXPECT_EQ(store->dropped_ticks(), 0u);
}

// A quiet tick is committed once it has waited the commit interval, with no one asking.
TEST(StoreTest, QuietTickIsCommittedAfterTheCommitInterval) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  auto store = OpenBatching(db, 1500);
  ASSERT_TRUE(store);
  auto ticks = [&] { return CountRows(db, "SELECT count(*) FROM samples_ticks"); };
  auto appended = std::chrono::steady_clock::now();
  store->Append(MakeTick(kT0, 50, 0));
  EXPECT_EQ(ticks(), 0);
  EXPECT_TRUE(Eventually([&] { return ticks() == 1; }, 10));
  EXPECT_GE(std::chrono::steady_clock::now() - appended, std::chrono::milliseconds(1500));
}

// Short intervals: once commit_max_ticks quiet ticks are queued they are committed, whatever
// the interval; one fewer waits.
TEST(StoreTest, QuietTicksAreCommittedOnceCommitMaxTicksAreQueued) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  auto store = OpenBatching(db, 60'000, 4);
  ASSERT_TRUE(store);
  auto ticks = [&] { return CountRows(db, "SELECT count(*) FROM samples_ticks"); };
  for (int i = 0; i < 3; ++i) store->Append(MakeTick(kT0 + i, 50, 0));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(ticks(), 0);
  store->Append(MakeTick(kT0 + 3, 50, 0));
  EXPECT_TRUE(Eventually([&] { return ticks() == 4; }, 10)) << ticks();
}

// A batch whose transaction fails (another process holds the write lock past the busy timeout)
// is rolled back whole; its ticks are then written one by one, and every one is kept once the
// lock is released.
TEST(StoreTest, BatchThatFailsIsWrittenAgainTickByTick) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  auto store = OpenBatching(db);
  ASSERT_TRUE(store);
  store->Append(MakeTick(kT0, 50, 0));
  store->Flush();
  testing::WriteLockHolder holder(db);
  ASSERT_TRUE(holder.held());
  for (int i = 1; i <= 5; ++i) store->Append(MakeTick(kT0 + i, 50 + i, 0));
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(kBusyTimeoutMs + 700));
    holder.Release();
  });
  store->Flush();  // the batch waits out the busy timeout, fails, and goes tick by tick
  release.join();
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM samples_ticks"), 6);
  EXPECT_EQ(store->dropped_ticks(), 0u);
  EXPECT_EQ(store->write_error(), "");
}

TEST(StoreTest, UnchangedFindingHasItsLastSeenWrittenTenSecondsApartAndAtClose) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  auto store = OpenOrDie(db);
  ASSERT_TRUE(store);
  auto write = [&](int64_t t, Severity severity, int64_t driver_loaded_s = 0) {
    auto tick = MakeTick(t, 50, 0);
    TrackedFinding f = MakeTracked("gpu.ecc.dbe", 3, "SN3");
    f.last.severity = severity;
    f.last_seen_ms = t * 1000;
    tick->findings.push_back(f);
    if (driver_loaded_s > 0) {
      tick->report.snapshot.kernel.last_driver_load.wall_us = driver_loaded_s * 1000000;
    }
    store->Append(tick);
  };
  auto last_seen_s = [&] {
    store->Flush();
    return OnlyStoredFinding(db).last_seen_ms / 1000;
  };
  ASSERT_EQ(StoreWriter::kFindingSeenEveryMs, 10'000);
  write(kT0, Severity::kCrit);
  EXPECT_EQ(last_seen_s(), kT0);
  for (int64_t t = 1; t < 10; ++t) write(kT0 + t, Severity::kCrit);
  EXPECT_EQ(last_seen_s(), kT0);  // kept back
  write(kT0 + 10, Severity::kCrit);
  EXPECT_EQ(last_seen_s(), kT0 + 10);
  write(kT0 + 11, Severity::kCrit);
  EXPECT_EQ(last_seen_s(), kT0 + 10);
  write(kT0 + 12, Severity::kWarn);  // a change: the whole row, at once
  store->Flush();
  TrackedFinding f = OnlyStoredFinding(db);
  EXPECT_EQ(f.last.severity, Severity::kWarn);
  EXPECT_EQ(f.last_seen_ms / 1000, kT0 + 12);
  write(kT0 + 13, Severity::kWarn);
  EXPECT_EQ(last_seen_s(), kT0 + 12);
  // A driver loaded after the last written sighting: written at once (a restart after a crash
  // judges cleared_by_driver_reload against it).
  write(kT0 + 14, Severity::kWarn, /*driver_loaded_s=*/kT0 + 13);
  EXPECT_EQ(last_seen_s(), kT0 + 14);
  write(kT0 + 15, Severity::kWarn, kT0 + 13);
  EXPECT_EQ(last_seen_s(), kT0 + 14);  // that load is older than what is written: kept back
  // A record of events alone (as `watch` queues its last deliveries before closing) leaves the
  // kept-back sighting to the close.
  HistoryEvent e;
  e.unix_ms = (kT0 + 15) * 1000;
  e.kind = "notify";
  store->AppendEvents({e}, 0, 0);
  store->Close();
  EXPECT_EQ(OnlyStoredFinding(db).last_seen_ms / 1000, kT0 + 15);  // written at close
}

// The GPU ledger is written when a GPU is new or changed and otherwise once a minute; closing
// the store writes the newest last_seen_s that was kept back.
TEST(StoreTest, GpuLedgerIsWrittenOnChangeAMinuteApartAndAtClose) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  auto store = OpenOrDie(db);
  ASSERT_TRUE(store);
  auto tick_with = [&](int64_t t, int index, const std::string& model) {
    auto tick = MakeTick(t, 50, 0);
    GpuFacts g;
    g.index = index;
    g.serial = "SN3";
    g.uuid = "GPU-1";
    g.pci_bus_id = "0000:3b:00.0";
    g.name = model;
    tick->report.snapshot.gpu.gpus.push_back(g);
    store->Append(tick);
    store->Flush();
    EXPECT_EQ(store->write_error(), "");
  };
  auto last_seen = [&] { return CountRows(db, "SELECT max(last_seen_s) FROM gpus"); };
  tick_with(kT0, 3, "NVIDIA H100");
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM gpus WHERE gpu_index=3"), 1);
  EXPECT_EQ(last_seen(), kT0);
  tick_with(kT0 + 1, 3, "NVIDIA H100");
  tick_with(kT0 + 59, 3, "NVIDIA H100");
  EXPECT_EQ(last_seen(), kT0);  // kept back
  tick_with(kT0 + 60, 3, "NVIDIA H100");
  EXPECT_EQ(last_seen(), kT0 + 60);
  tick_with(kT0 + 61, 5, "NVIDIA H100");  // a new index is written at once
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM gpus WHERE gpu_index=5"), 1);
  EXPECT_EQ(last_seen(), kT0 + 61);
  tick_with(kT0 + 62, 5, "NVIDIA H100 80GB HBM3");  // so is a new model name
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM gpus WHERE model='NVIDIA H100 80GB HBM3'"), 1);
  tick_with(kT0 + 90, 5, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(last_seen(), kT0 + 62);
  store->Close();
  EXPECT_EQ(last_seen(), kT0 + 90);
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM gpus"), 1);
  EXPECT_EQ(CountRows(db, "SELECT first_seen_s FROM gpus"), kT0);
}

TEST(StoreTest, SecondWriterIsRefusedNamingFileAndPid) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  auto first = OpenOrDie(db);
  ASSERT_TRUE(first);
  auto second = HistoryStore::Open(db, {});
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.status().message(), HasSubstr(db));
  EXPECT_THAT(second.status().message(), HasSubstr("pid " + std::to_string(getpid())));
  first->Close();
  first.reset();
  EXPECT_TRUE(HistoryStore::Open(db, {}).ok());
}

// What is not ours is refused and left alone (store_reliability_test.cc has every kind and the
// corrupt file of ours, the only one moved aside).
TEST(StoreTest, ForeignFilesAreRefusedNeverMovedAside) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  dir.Write("history.db", std::string(8192, 'x'));
  auto store = HistoryStore::Open(db, {});
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr(db));
  EXPECT_THAT(store.status().message(), HasSubstr("not an SQLite database"));
  EXPECT_EQ(ReadFileOrDie(db), std::string(8192, 'x'));
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().filename().string().find("history.db.corrupt-"), std::string::npos);
  }
  // Another application's SQLite database.
  std::string other = dir.path() + "/other.db";
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(other.c_str(), &h), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(h, "CREATE TABLE t(x); INSERT INTO t VALUES(1);", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(h);
  auto s2 = HistoryStore::Open(other, {});
  ASSERT_FALSE(s2.ok());
  EXPECT_THAT(s2.status().message(), HasSubstr("another application"));
  EXPECT_EQ(CountRows(other, "SELECT count(*) FROM t"), 1);
  // The reader refuses foreign files too.
  dir.Write("foreign.db", "hello");
  auto r = HistoryReader::Open(dir.path() + "/foreign.db");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("foreign.db"));
}

TEST(StoreTest, BadPathsAreErrorsNamingThePath) {
  TempDir dir;
  dir.MakeDir("adir");
  auto is_dir = HistoryStore::Open(dir.path() + "/adir", {});
  ASSERT_FALSE(is_dir.ok());
  EXPECT_THAT(is_dir.status().message(), HasSubstr("adir"));
  dir.Write("afile", "x");
  auto under_file = HistoryStore::Open(dir.path() + "/afile/history.db", {});
  ASSERT_FALSE(under_file.ok());
  EXPECT_THAT(under_file.status().message(), HasSubstr("afile"));
  auto missing = HistoryReader::Open(dir.path() + "/none.db");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  if (geteuid() != 0) {
    dir.MakeDir("ro");
    ::chmod((dir.path() + "/ro").c_str(), 0555);
    auto ro = HistoryStore::Open(dir.path() + "/ro/history.db", {});
    ASSERT_FALSE(ro.ok());
    EXPECT_THAT(ro.status().message(), HasSubstr("not writable"));
  }
}

TEST(StoreTest, FullQueueDropsOldestTicksWithoutBlocking) {
  TempDir dir;
  StoreOptions o;
  o.max_queued_ticks = 2;
  auto store = OpenOrDie(dir.path() + "/history.db", o);
  ASSERT_TRUE(store);
  for (int i = 0; i < 500; ++i) store->Append(MakeTick(kT0 + i, 1, 1));
  store->Flush();
  store->Close();
  store->Close();  // idempotent
  auto reader = HistoryReader::Open(dir.path() + "/history.db");
  ASSERT_TRUE(reader.ok());
  SeriesQuery q;
  q.metric = "gpudoctor_gpu_temperature_celsius";
  q.gpu = 0;
  q.since_unix_s = kT0;
  q.until_unix_s = kT0 + 1000;
  auto s = (*reader)->QuerySeries(q);
  ASSERT_TRUE(s.ok());
  // Whatever was dropped is counted; the newest tick is always written.
  EXPECT_EQ((*s)[0].points.size() + store->dropped_ticks(), 500u);
  EXPECT_EQ((*s)[0].points.back().first, kT0 + 499);
}

}  // namespace
}  // namespace gpudoctor
