// Reading the points of series out of the history file (series_points.h).
#include "store/series_points.h"

#include <algorithm>
#include <limits>

#include "store/history_store_internal.h"
#include "store/sample_codec.h"
#include "store/tick_codec.h"

namespace gpudoctor {
namespace {

// Every point of the packed minutes of series `id` that may fall in [since, until] (a minute's
// row starts up to 59 s before `since`), in row order, to `visit(t, v)`.
template <typename Visit>
Status ForEachPacked(SqliteDb& db, int64_t id, int64_t since, int64_t until, Visit&& visit) {
  auto packed = db.Prepare(
      "SELECT minute_s, data FROM samples WHERE series_id=? AND minute_s>=? AND minute_s<=? "
      "ORDER BY minute_s");
  if (!packed.ok()) return packed.status();
  packed->Bind(1, id).Bind(2, since - 59).Bind(3, until);
  int rc;
  while ((rc = packed->Step()) == SQLITE_ROW) {
    int64_t minute = packed->Int(0);
    if (auto d = DecodeSamples(packed->Blob(1))) {
      for (const auto& [slot, v] : *d) visit(minute + slot, v);
    }
  }
  if (rc != SQLITE_DONE) return db.Error("read samples");
  return Status::Ok();
}

// The rollups' minute averages of series `id` in [since, until] that end by `raw_start` (the
// oldest raw point), in row order, to `visit(t, avg)`.
template <typename Visit>
Status ForEachRollup(SqliteDb& db, int64_t id, int64_t since, int64_t until, int64_t raw_start,
                     Visit&& visit) {
  if (since >= raw_start) return Status::Ok();
  auto roll = db.Prepare(
      "SELECT hour_s, data FROM rollups WHERE series_id=? AND hour_s>=? AND hour_s<=? ORDER BY "
      "hour_s");
  if (!roll.ok()) return roll.status();
  roll->Bind(1, id).Bind(2, since - 3599).Bind(3, std::min(until, raw_start));
  int rc;
  while ((rc = roll->Step()) == SQLITE_ROW) {
    int64_t hour = roll->Int(0);
    if (auto d = DecodeRollups(roll->Blob(1))) {
      for (const auto& m : *d) {
        int64_t t = hour + m.minute * 60;
        if (t >= since && t + 60 <= raw_start && t <= until) visit(t, m.avg);
      }
    }
  }
  if (rc != SQLITE_DONE) return db.Error("read rollups");
  return Status::Ok();
}

}  // namespace

Status ReadRecentPoints(SqliteDb& db, bool legacy_recent, int64_t since, int64_t until,
                        std::map<int64_t, SeriesPoints>& out) {
  if (out.empty()) return Status::Ok();
  int rc;
  if (legacy_recent) {
    auto recent = db.Prepare(
        "SELECT ts_s, value FROM samples_recent WHERE series_id=? AND ts_s>=? AND ts_s<=? "
        "ORDER BY ts_s");
    if (!recent.ok()) return recent.status();
    for (auto& [id, points] : out) {
      recent->Reset();
      recent->Bind(1, id).Bind(2, since).Bind(3, until);
      while ((rc = recent->Step()) == SQLITE_ROW) {
        points.emplace_back(recent->Int(0), recent->Double(1));
      }
      if (rc != SQLITE_DONE) return db.Error("read recent samples");
    }
    return Status::Ok();
  }
  auto ticks = db.Prepare("SELECT ts_s, data FROM samples_ticks WHERE ts_s>=? AND ts_s<=?");
  if (!ticks.ok()) return ticks.status();
  ticks->Bind(1, since).Bind(2, until);
  std::vector<std::pair<int64_t, double>> row;
  while ((rc = ticks->Step()) == SQLITE_ROW) {
    const int64_t ts = ticks->Int(0);
    const auto* data = static_cast<const char*>(sqlite3_column_blob(ticks->get(), 1));
    const int size = sqlite3_column_bytes(ticks->get(), 1);
    row.clear();
    const bool whole =
        ForEachTickPoint(std::string_view(data == nullptr ? "" : data, data == nullptr ? 0 : size),
                         [&](int64_t id, double v) { row.emplace_back(id, v); });
    if (!whole) continue;
    for (const auto& [id, v] : row) {
      if (auto it = out.find(id); it != out.end()) it->second.emplace_back(ts, v);
    }
  }
  if (rc != SQLITE_DONE) return db.Error("read recent samples");
  return Status::Ok();
}

Status ReadSeriesPoints(SqliteDb& db, int64_t id, int64_t since, int64_t until,
                        SeriesPoints& recent, size_t max_points, Series& s) {
  std::sort(recent.begin(), recent.end());  // newer than every packed minute
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  // Pass 1: the oldest raw point, how many points there are, and the points while few.
  std::vector<std::pair<int64_t, double>> raw, older;
  bool keep = true;
  size_t count = 0;
  auto take = [&](std::vector<std::pair<int64_t, double>>& into, int64_t t, double v) {
    ++count;
    if (!keep) return;
    if (count > max_points) {
      keep = false;
      std::vector<std::pair<int64_t, double>>().swap(raw);
      std::vector<std::pair<int64_t, double>>().swap(older);
      return;
    }
    into.emplace_back(t, v);
  };
  int64_t raw_start = kNone;
  int64_t first_raw = kNone;  // the oldest raw point in [since, until]
  auto raw_point = [&](int64_t t, double v) {
    raw_start = std::min(raw_start, t);
    if (t < since || t > until) return;
    first_raw = std::min(first_raw, t);
    take(raw, t, v);
  };
  if (Status e = ForEachPacked(db, id, since, until, raw_point); !e.ok()) return e;
  for (const auto& [t, v] : recent) raw_point(t, v);
  if (raw_start == kNone) raw_start = until + 1;
  int64_t first_older = kNone;  // the first rollup minute read
  Status e = ForEachRollup(db, id, since, until, raw_start, [&](int64_t t, double avg) {
    if (first_older == kNone) first_older = t;
    take(older, t, avg);
  });
  if (!e.ok()) return e;
  if (keep) {
    std::sort(raw.begin(), raw.end());
    older.insert(older.end(), raw.begin(), raw.end());
    s.points = std::move(older);
    return Status::Ok();
  }
  // Pass 2: equal buckets from the first point (the first rollup minute, else the oldest raw
  // point) to `until`, each the mean of its points, summed in time order as before.
  const int64_t start = std::max(since, first_older != kNone ? first_older : first_raw);
  const int64_t span = std::max<int64_t>(1, until - start + 1);
  const auto n_buckets = static_cast<int64_t>(max_points);
  const int64_t width = (span + n_buckets - 1) / n_buckets;
  std::vector<std::pair<double, int64_t>> buckets(max_points, {0.0, 0});
  auto add = [&](int64_t t, double v) {
    int64_t b = std::clamp<int64_t>((t - start) / width, 0, n_buckets - 1);
    buckets[b].first += v;
    ++buckets[b].second;
  };
  e = ForEachRollup(db, id, since, until, raw_start, add);
  if (!e.ok()) return e;
  auto raw_in_range = [&](int64_t t, double v) {
    if (t >= since && t <= until) add(t, v);
  };
  if (e = ForEachPacked(db, id, since, until, raw_in_range); !e.ok()) return e;
  for (const auto& [t, v] : recent) raw_in_range(t, v);
  s.points.clear();
  for (int64_t b = 0; b < n_buckets; ++b) {
    const auto& [sum, n] = buckets[b];
    if (n > 0) s.points.emplace_back(start + b * width, sum / static_cast<double>(n));
  }
  return Status::Ok();
}

}  // namespace gpudoctor
