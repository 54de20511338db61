// The points of one series read out of the history file (store/store_schema.h): the recent tick
// rows not packed yet (samples_ticks), the packed minutes (samples), and before the oldest raw
// point the minute averages (rollups). Used by HistoryReader::QuerySeries. Not thread-safe (one
// connection); errors name the file.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "core/status.h"
#include "store/history_store.h"
#include "store/sqlite_db.h"

namespace gpudoctor {

using SeriesPoints = std::vector<std::pair<int64_t, double>>;  // (unix seconds, value)

// The raw points of the series in `out` (its keys: series ids) in [since, until] from the recent
// tick rows (or, `legacy_recent`, a version 2 file's samples_recent), unordered:
// ReadSeriesPoints sorts them (no SQLite sorter holding the blobs inside `watch` while it serves
// the API). A blob that does not decode (a damaged page) is skipped whole.
Status ReadRecentPoints(SqliteDb& db, bool legacy_recent, int64_t since, int64_t until,
                        std::map<int64_t, SeriesPoints>& out);

// The points of series `id` in [since, until] into s.points, in time order: raw points (packed
// minutes and `recent`, ReadRecentPoints') and, before the oldest raw point, minute averages from
// the rollups. More than max_points (>= 1) are averaged into max_points equal time buckets from
// the first point as they are read, in a second pass over the rows: the points themselves are
// held only while there are at most max_points of them (a day of raw points is 1.4 MiB a series;
// the dashboard asks for eight series of a day or a week, `watch` serves them beside its ticks).
// `recent` is sorted in place.
Status ReadSeriesPoints(SqliteDb& db, int64_t id, int64_t since, int64_t until,
                        SeriesPoints& recent, size_t max_points, Series& s);

}  // namespace gpudoctor
