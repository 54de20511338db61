// The history store's write path: one transaction per tick, minute packing, rollups, retention.
// Nothing stored is ever replaced: a second point at an occupied second (the wall clock stepped
// back) gets the next seq, a minute packed again a further blob, a rollup minute is merged.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "core/json_text.h"
#include "store/history_store_internal.h"
#include "store/sample_codec.h"
#include "store/tick_codec.h"

namespace gpudoctor {
namespace {

int64_t FloorTo(int64_t t, int64_t step) {
  int64_t r = t % step;
  return r < 0 ? t - r - step : t - r;
}

}  // namespace

std::string EncodeRollups(const std::vector<RollupMinute>& minutes) {
  std::vector<std::pair<int, double>> mn, avg, mx, count;
  for (const auto& m : minutes) {
    mn.emplace_back(m.minute, m.min);
    avg.emplace_back(m.minute, m.avg);
    mx.emplace_back(m.minute, m.max);
    count.emplace_back(m.minute, static_cast<double>(m.count));
  }
  return EncodeSamples(mn, true) + EncodeSamples(avg, true) + EncodeSamples(mx, true) +
         EncodeSamples(count, false);
}

std::optional<std::vector<RollupMinute>> DecodeRollups(std::string_view blob) {
  std::vector<std::pair<int, double>> streams[4];
  for (auto& s : streams) {
    size_t used = 0;
    auto d = DecodeSamples(blob, &used);
    if (!d) return std::nullopt;
    s = std::move(*d);
    blob.remove_prefix(used);
  }
  size_t n = streams[0].size();
  for (const auto& s : streams) {
    if (s.size() != n) return std::nullopt;
  }
  std::vector<RollupMinute> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i].minute = streams[0][i].first;
    out[i].min = streams[0][i].second;
    out[i].avg = streams[1][i].second;
    out[i].max = streams[2][i].second;
    out[i].count = static_cast<int64_t>(streams[3][i].second);
  }
  return out;
}

std::string EvidenceToDbJson(const std::vector<EvidenceItem>& evidence) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& e : evidence) {
    nlohmann::json v;
    std::visit([&](const auto& x) { v = x; }, e.value);
    j.push_back({e.name, v});
  }
  return JsonText(j);
}

std::vector<EvidenceItem> EvidenceFromDbJson(const std::string& text) {
  std::vector<EvidenceItem> out;
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& e : j) {
    if (!e.is_array() || e.size() != 2 || !e[0].is_string()) continue;
    EvidenceItem item{e[0].get<std::string>(), int64_t{0}};
    const auto& v = e[1];
    if (v.is_boolean()) {
      item.value = v.get<bool>();
    } else if (v.is_number_integer()) {
      item.value = v.get<int64_t>();
    } else if (v.is_number()) {
      item.value = v.get<double>();
    } else if (v.is_string()) {
      item.value = v.get<std::string>();
    }
    out.push_back(std::move(item));
  }
  return out;
}

std::string StepsToDbJson(const std::vector<std::string>& steps) {
  return JsonText(nlohmann::json(steps));
}

std::vector<std::string> StepsFromDbJson(const std::string& text) {
  std::vector<std::string> out;
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& s : j) {
    if (s.is_string()) out.push_back(s.get<std::string>());
  }
  return out;
}

Status StoreWriter::CheckOptions(const StoreOptions& options) {
  if (options.pack_block_s < 60 || options.pack_block_s % 60 != 0 ||
      3600 % options.pack_block_s != 0) {
    return InvalidArgument("history pack block of " + std::to_string(options.pack_block_s) +
                           " s: not a multiple of 60 that divides 3600");
  }
  return Status::Ok();
}

Result<std::unique_ptr<StoreWriter>> StoreWriter::Create(std::unique_ptr<SqliteDb> db,
                                                         const StoreOptions& options) {
  std::unique_ptr<StoreWriter> w(new StoreWriter(std::move(db), options));
  if (Status s = w->Prepare(); !s.ok()) return s;
  // Where retention's clock stood when the file was last written (it never jumped); files
  // without one: the newest sample.
  auto clock = w->db_->QueryInt("SELECT value FROM meta WHERE key='retention_clock_ms'");
  if (clock.ok()) {
    w->newest_at_open_s_ = *clock / 1000;
  } else if (clock.status().code() == StatusCode::kNotFound) {
    auto newest = w->db_->QueryInt(
        "SELECT coalesce(max(t), 0) FROM (SELECT max(ts_s) AS t FROM samples_ticks UNION ALL "
        "SELECT max(minute_s) + 59 FROM samples)");
    if (!newest.ok()) return newest.status();
    w->newest_at_open_s_ = *newest;
  } else {
    return clock.status();
  }
  return w;
}

Status StoreWriter::Prepare() {
  struct {
    SqliteStmt* stmt;
    const char* sql;
  } stmts[] = {
      {&begin_, "BEGIN IMMEDIATE"},
      {&commit_, "COMMIT"},
      {&rollback_, "ROLLBACK"},
      {&series_insert_,
       "INSERT OR IGNORE INTO series(metric, gpu, labels, counter) VALUES(?, ?, ?, ?)"},
      {&series_select_, "SELECT id, counter FROM series WHERE metric=? AND gpu=? AND labels=?"},
      {&tick_insert_, "INSERT INTO samples_ticks(ts_s, data) VALUES(?, ?)"},
      {&recent_select_, kPackSelectSql},
      {&tick_blob_select_, "SELECT data FROM samples_ticks WHERE id = ?"},
      {&recent_delete_, "DELETE FROM samples_ticks WHERE ts_s < ?"},
      {&packed_insert_,
       "INSERT INTO samples SELECT ?1, ?2, coalesce(max(seq) + 1, 0), ?3 FROM samples WHERE "
       "series_id=?1 AND minute_s=?2"},
      {&rollup_select_, "SELECT data FROM rollups WHERE series_id=? AND hour_s=?"},
      {&rollup_upsert_, "INSERT OR REPLACE INTO rollups VALUES(?, ?, ?)"},
      {&finding_upsert_,
       "INSERT INTO findings(key, first_seen_ms, id, severity, layer, gpu_index, gpu_serial, "
       "gpu_bus_id, gpu_uuid, gpu_name, subject, summary, evidence_json, next_steps_json, state, "
       "opened_ms, last_seen_ms, resolved_ms, resolution, reboots, episodes_after_reboot, "
       "escalated, acked, acked_ms, ack_note, silenced_until_ms, action) VALUES(?1, ?2, ?3, ?4, "
       "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, "
       "?24, ?25, ?26, ?27) ON CONFLICT(key, first_seen_ms) DO UPDATE SET severity=?4, layer=?5, "
       "action=?27, "
       "gpu_index=?6, gpu_serial=?7, gpu_bus_id=?8, gpu_uuid=?9, gpu_name=?10, summary=?12, "
       "evidence_json=?13, next_steps_json=?14, state=?15, opened_ms=?16, last_seen_ms=?17, "
       "resolved_ms=?18, resolution=?19, reboots=?20, episodes_after_reboot=?21, escalated=?22, "
       // Operator writes from other processes win over the daemon's older view.
       "acked=max(acked, ?23), acked_ms=CASE WHEN acked_ms > ?24 THEN acked_ms ELSE ?24 END, "
       "ack_note=CASE WHEN ?25 <> '' THEN ?25 ELSE ack_note END, "
       "silenced_until_ms=max(silenced_until_ms, ?26)"},
      // last_seen_ms alone: no indexed column, so only the table's page is written.
      {&finding_seen_update_,
       "UPDATE findings SET last_seen_ms=max(last_seen_ms, ?3) WHERE key=?1 AND first_seen_ms=?2"},
      {&event_insert_,
       "INSERT INTO events(unix_ms, kind, gpu_index, serial, pci_bus_id, detail) VALUES(?, ?, ?, "
       "?, ?, ?)"},
      {&gpu_upsert_,
       "INSERT INTO gpus VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?6) ON CONFLICT(serial, uuid, pci_bus_id) "
       "DO UPDATE SET gpu_index=?4, model=?5, last_seen_s=max(last_seen_s, ?6)"},
  };
  for (auto& s : stmts) {
    auto p = db_->Prepare(s.sql);
    if (!p.ok()) return p.status();
    *s.stmt = std::move(*p);
  }
  return Status::Ok();
}

Result<int64_t> StoreWriter::SeriesId(const MetricPoint& p) {
  if (p.labels.empty()) {
    if (auto it = unlabeled_ids_.find({p.info, p.gpu}); it != unlabeled_ids_.end()) {
      return it->second;
    }
  }
  auto key = std::make_tuple(std::string(p.info->name), p.gpu, LabelsKey(p.labels));
  if (auto it = series_ids_.find(key); it != series_ids_.end()) {
    if (p.labels.empty()) unlabeled_ids_[{p.info, p.gpu}] = it->second;
    return it->second;
  }
  bool counter = p.info->type == MetricType::kCounter;
  series_insert_.Reset();
  series_insert_.Bind(1, std::get<0>(key)).Bind(2, int64_t{p.gpu}).Bind(3, std::get<2>(key));
  series_insert_.Bind(4, int64_t{counter ? 1 : 0});
  if (series_insert_.Step() != SQLITE_DONE) return db_->Error("insert series");
  series_select_.Reset();
  series_select_.Bind(1, std::get<0>(key)).Bind(2, int64_t{p.gpu}).Bind(3, std::get<2>(key));
  if (series_select_.Step() != SQLITE_ROW) return db_->Error("select series");
  int64_t id = series_select_.Int(0);
  series_counter_[id] = series_select_.Int(1) != 0;
  series_select_.Reset();  // no statement may keep a read snapshot open between ticks
  series_ids_[key] = id;
  if (p.labels.empty()) unlabeled_ids_[{p.info, p.gpu}] = id;
  return id;
}

Result<int64_t> StoreWriter::CachedSeriesId(size_t i, const MetricPoint& p) {
  if (i < shape_.size()) {
    const ShapeEntry& e = shape_[i];
    if (e.info == p.info && e.gpu == p.gpu && e.labels == p.labels) return e.id;
  }
  auto id = SeriesId(p);
  if (!id.ok()) return id;
  if (i >= shape_.size()) shape_.resize(i + 1);
  shape_[i] = ShapeEntry{p.info, p.gpu, p.labels, *id};
  return id;
}

void StoreWriter::ForgetSeries() {
  series_ids_.clear();
  unlabeled_ids_.clear();
  series_counter_.clear();
  shape_.clear();
}

Status StoreWriter::AddRollups(int64_t series_id, int64_t hour_s,
                               const std::vector<RollupMinute>& packed) {
  std::vector<RollupMinute> minutes;
  rollup_select_.Reset();
  rollup_select_.Bind(1, series_id).Bind(2, hour_s);
  int rc = rollup_select_.Step();
  if (rc == SQLITE_ROW) {
    if (auto d = DecodeRollups(rollup_select_.Blob(0))) minutes = std::move(*d);
  } else if (rc != SQLITE_DONE) {
    return db_->Error("read rollup");
  }
  rollup_select_.Reset();
  for (const RollupMinute& add : packed) {
    auto it = std::find_if(minutes.begin(), minutes.end(),
                           [&](const RollupMinute& r) { return r.minute == add.minute; });
    if (it == minutes.end()) {
      minutes.push_back(add);
    } else {  // the minute was packed before (clock step back): merge, never replace
      int64_t n = it->count + add.count;
      it->avg = n > 0 ? (it->avg * it->count + add.avg * add.count) / n : add.avg;
      it->min = std::min(it->min, add.min);
      it->max = std::max(it->max, add.max);
      it->count = n;
    }
  }
  std::sort(minutes.begin(), minutes.end(),
            [](const RollupMinute& a, const RollupMinute& b) { return a.minute < b.minute; });
  rollup_upsert_.Reset();
  rollup_upsert_.Bind(1, series_id).Bind(2, hour_s).BindBlob(3, EncodeRollups(minutes));
  if (rollup_upsert_.Step() != SQLITE_DONE) return db_->Error("write rollup");
  return Status::Ok();
}

// Packs every raw point older than `before_s` into per-minute blobs with their rollups.
//
// The tick rows are read in (ts_s, id) order: by second, and at one second (the wall clock
// stepped back) in the order they were written. Each series of the minute being read has an
// accumulator: one SampleEncoder per layer (layer k holds the (k+1)-th point at each second: a
// clock step back stores more than one) and the rollup's min, max, sum and count. A series sees
// its points in the order the per-point pack of version 2 saw them ((ts_s, seq)), so blobs and
// rollups are the same. When the minute changes its accumulators become finished blobs and
// rollup minutes, kept until every row is read; then they are written series by series (each
// series' minutes in order, its layers as seq 0, 1, ...), with one rollup read and write per
// series and hour. Series-major, because `samples` and `rollups` are keyed by series first:
// the pack of a block of minutes dirties each series' last page once, where minute by minute
// (the order the rows come in) it touched every series' page once per minute and, with more
// series than the page cache holds, spilled and re-read each of them. A tick blob that does not
// decode (a damaged page) is skipped whole.
Status StoreWriter::PackBefore(int64_t before_s) {
  // One series' accumulator: its encoders live for the whole pack (reset, not rebuilt, minute
  // after minute); `now` is the minute being read, reset to {} when it is finished.
  struct SeriesMinute {
    int64_t series = 0;
    std::vector<SampleEncoder> layers;  // the first now.used hold this minute's points
    struct {
      size_t used = 0;  // layers in use
      int last_slot = -1;
      size_t repeat = 0;  // points at last_slot before this one
      double mn = INFINITY, mx = -INFINITY, sum = 0;
      int64_t count = 0;  // 0: no point in this minute yet
    } now;
  };
  // A finished minute of one series: its layers' blobs (in `blobs`) and its rollup.
  struct Packed {
    int64_t series = 0, minute = 0;
    size_t first_blob = 0, blob_count = 0;  // indexes into blob_ends
    RollupMinute rollup;
  };
  std::vector<Packed> packed;
  std::string blobs;              // every finished layer's bytes, back to back
  std::vector<size_t> blob_ends;  // end offset of each layer's bytes in `blobs`
  // One accumulator per series, kept for the whole pack (reset when its minute is finished).
  // Ticks list their series in the same order tick after tick, so a point's accumulator is found
  // by the point's position in its tick (checked against the series id), the hash only when the
  // tick's shape differs: no tree walk per point.
  std::vector<SeriesMinute> accs;
  std::unordered_map<int64_t, size_t> acc_of;  // series id -> index in accs
  std::vector<size_t> acc_at;                  // position in a tick -> index in accs
  std::vector<size_t> active;                  // accs with points in this minute
  int64_t pending_minute = 0;
  auto finish_minute = [&] {
    std::sort(active.begin(), active.end(),
              [&](size_t a, size_t b) { return accs[a].series < accs[b].series; });
    for (size_t i : active) {
      SeriesMinute& acc = accs[i];
      Packed p;
      p.series = acc.series;
      p.minute = pending_minute;
      p.first_blob = blob_ends.size();
      p.blob_count = acc.now.used;
      for (size_t l = 0; l < acc.now.used; ++l) {
        acc.layers[l].FinishInto(&blobs);
        blob_ends.push_back(blobs.size());
      }
      const int64_t hour = FloorTo(pending_minute, 3600);
      p.rollup = {static_cast<int>((pending_minute - hour) / 60), acc.now.mn,
                  acc.now.sum / static_cast<double>(acc.now.count), acc.now.mx, acc.now.count};
      packed.push_back(std::move(p));
      acc.now = {};
    }
    active.clear();
  };
  pack_rows_.clear();
  recent_select_.Reset();
  recent_select_.Bind(1, before_s);
  int rc;
  while ((rc = recent_select_.Step()) == SQLITE_ROW) {
    pack_rows_.emplace_back(recent_select_.Int(1), recent_select_.Int(0));
  }
  recent_select_.Reset();
  if (rc != SQLITE_DONE) return db_->Error("read recent samples");
  if (pack_rows_.empty()) return Status::Ok();
  std::sort(pack_rows_.begin(), pack_rows_.end());
  for (const auto& [ts, row] : pack_rows_) {
    tick_blob_select_.Reset();
    tick_blob_select_.Bind(1, row);
    rc = tick_blob_select_.Step();
    if (rc != SQLITE_ROW) {
      Status s = db_->Error("read recent samples");
      tick_blob_select_.Reset();
      return s;
    }
    pack_points_.clear();
    const auto* data = static_cast<const char*>(sqlite3_column_blob(tick_blob_select_.get(), 0));
    const int size = sqlite3_column_bytes(tick_blob_select_.get(), 0);
    const bool whole =
        ForEachTickPoint(std::string_view(data == nullptr ? "" : data, data == nullptr ? 0 : size),
                         [&](int64_t id, double v) { pack_points_.emplace_back(id, v); });
    tick_blob_select_.Reset();
    if (!whole) continue;
    const int64_t minute = FloorTo(ts, 60);
    if (minute != pending_minute) {
      finish_minute();
      pending_minute = minute;
    }
    const int slot = static_cast<int>(ts - minute);
    if (acc_at.size() < pack_points_.size()) acc_at.resize(pack_points_.size(), SIZE_MAX);
    for (size_t j = 0; j < pack_points_.size(); ++j) {
      const auto& [series, value] = pack_points_[j];
      size_t a = acc_at[j];
      if (a == SIZE_MAX || accs[a].series != series) {
        auto [it, added] = acc_of.try_emplace(series, accs.size());
        if (added) {
          accs.emplace_back();
          accs.back().series = series;
        }
        a = acc_at[j] = it->second;
      }
      SeriesMinute& acc = accs[a];
      auto& now = acc.now;
      if (now.count == 0) active.push_back(a);
      now.repeat = slot == now.last_slot ? now.repeat + 1 : 0;
      now.last_slot = slot;
      if (now.repeat == now.used) {
        auto counter = series_counter_.find(series);
        const bool lossy = counter != series_counter_.end() && !counter->second;
        if (now.used < acc.layers.size()) {
          acc.layers[now.used].Reset(lossy);
        } else {
          acc.layers.emplace_back(lossy);
        }
        ++now.used;
      }
      acc.layers[now.repeat].Add(slot, value);
      now.mn = std::min(now.mn, value);
      now.mx = std::max(now.mx, value);
      now.sum += value;
      ++now.count;
    }
  }
  finish_minute();
  // Minutes were finished in time order: a stable sort by series keeps each series' in order.
  std::stable_sort(packed.begin(), packed.end(),
                   [](const Packed& a, const Packed& b) { return a.series < b.series; });
  std::vector<RollupMinute> hour_minutes;
  for (size_t i = 0; i < packed.size();) {
    const int64_t series = packed[i].series;
    const int64_t hour = FloorTo(packed[i].minute, 3600);
    hour_minutes.clear();
    for (;
         i < packed.size() && packed[i].series == series && FloorTo(packed[i].minute, 3600) == hour;
         ++i) {
      const Packed& p = packed[i];
      for (size_t b = p.first_blob; b < p.first_blob + p.blob_count; ++b) {
        const size_t begin = b == 0 ? 0 : blob_ends[b - 1];
        packed_insert_.Reset();
        packed_insert_.Bind(1, series).Bind(2, p.minute);
        sqlite3_bind_blob(packed_insert_.get(), 3, blobs.data() + begin,
                          static_cast<int>(blob_ends[b] - begin), SQLITE_STATIC);
        if (packed_insert_.Step() != SQLITE_DONE) {
          Status s = db_->Error("write samples");
          packed_insert_.Reset();  // unbinds the blob before `blobs` goes
          return s;
        }
      }
      hour_minutes.push_back(p.rollup);
    }
    if (Status s = AddRollups(series, hour, hour_minutes); !s.ok()) return s;
  }
  packed_insert_.Reset();  // unbinds the last blob before `blobs` goes
  recent_delete_.Reset();
  recent_delete_.Bind(1, before_s);
  if (recent_delete_.Step() != SQLITE_DONE) return db_->Error("delete recent samples");
  return Status::Ok();
}

Status StoreWriter::Retain(int64_t now_s) {
  int64_t raw_cut = FloorTo(now_s - options_.raw_retention_s, 60);
  int64_t rollup_cut = FloorTo(now_s - options_.rollup_retention_s, 3600);
  // Per series (the tables are keyed by series first): one range per series instead of a scan of
  // every row (24 h of raw minutes: 109 ms against 16 ms a pass on 648 series, docs/cost.md).
  std::string sql =
      "DELETE FROM samples WHERE series_id IN (SELECT id FROM series) AND minute_s < " +
      std::to_string(raw_cut) +
      ";DELETE FROM rollups WHERE series_id IN (SELECT id FROM series) AND hour_s < " +
      std::to_string(rollup_cut) + ";DELETE FROM events WHERE unix_ms < " +
      std::to_string(rollup_cut * 1000) +
      ";DELETE FROM findings WHERE resolved_ms > 0 AND resolved_ms < " +
      std::to_string(rollup_cut * 1000) +
      ";INSERT OR REPLACE INTO meta VALUES('retention_clock_ms', '" + std::to_string(now_s * 1000) +
      "');";
  return db_->Exec(sql);
}

int64_t StoreWriter::RetentionNowMs(const TickResult& tick) {
  if (tick.mono_ms <= 0) {
    // A record without monotonic time (a notifier outcome, a shutdown record) never moves the
    // retention clock: its wall time may come from a clock that just stepped.
    if (retain_now_ms_ >= 0) return retain_now_ms_;
    return newest_at_open_s_ > 0 ? std::min(tick.unix_ms, newest_at_open_s_ * 1000) : tick.unix_ms;
  }
  if (retain_now_ms_ < 0) {
    // Never ahead of the newest stored point: a clock that was wrong when watch started (or
    // while it was stopped) cannot age what the file holds.
    retain_now_ms_ =
        newest_at_open_s_ > 0 ? std::min(tick.unix_ms, newest_at_open_s_ * 1000) : tick.unix_ms;
  } else if (tick.mono_ms > last_mono_ms_) {
    // Up to 10% faster than the monotonic clock, to catch up after downtime.
    int64_t elapsed = tick.mono_ms - last_mono_ms_;
    int64_t candidate = std::min(tick.unix_ms, retain_now_ms_ + elapsed + elapsed / 10);
    retain_now_ms_ = std::max(retain_now_ms_, candidate);
  }
  last_mono_ms_ = std::max(last_mono_ms_, tick.mono_ms);
  return retain_now_ms_;
}

Status StoreWriter::UpsertGpu(const std::tuple<std::string, std::string, std::string>& id,
                              int index, const std::string& model, int64_t seen_s) {
  auto& st = gpu_upsert_;
  st.Reset();
  st.Bind(1, std::get<0>(id)).Bind(2, std::get<1>(id)).Bind(3, std::get<2>(id));
  st.Bind(4, int64_t{index}).Bind(5, model).Bind(6, seen_s);
  if (st.Step() != SQLITE_DONE) return db_->Error("write gpu ledger");
  LedgerRow& row = ledger_[id];
  row.index = index;
  row.model = model;
  row.written_s = seen_s;
  row.seen_s = std::max(row.seen_s, seen_s);
  return Status::Ok();
}

Status StoreWriter::WriteFindingSeen(const std::pair<std::string, int64_t>& id, WrittenFinding& w) {
  auto& st = finding_seen_update_;
  st.Reset();
  st.Bind(1, id.first).Bind(2, id.second).Bind(3, w.seen_ms);
  if (st.Step() != SQLITE_DONE) return db_->Error("write finding");
  w.written_seen_ms = w.seen_ms;
  // The row is gone (deleted by hand): the next tick writes it whole again.
  if (sqlite3_changes(db_->get()) == 0) w.row.clear();
  return Status::Ok();
}

Status StoreWriter::FlushLedger() {
  bool pending = false;
  for (const auto& [id, row] : ledger_) pending = pending || row.seen_s > row.written_s;
  for (const auto& [id, w] : written_findings_) pending = pending || w.seen_ms > w.written_seen_ms;
  if (!pending) return Status::Ok();
  Status s = db_->Exec("BEGIN");
  for (auto& [id, row] : ledger_) {
    if (!s.ok()) break;
    if (row.seen_s > row.written_s) s = UpsertGpu(id, row.index, row.model, row.seen_s);
  }
  for (auto& [id, w] : written_findings_) {
    if (!s.ok()) break;
    if (w.seen_ms > w.written_seen_ms) s = WriteFindingSeen(id, w);
  }
  gpu_upsert_.Reset();
  finding_seen_update_.Reset();
  if (s.ok()) s = db_->Exec("COMMIT");
  if (!s.ok() && sqlite3_get_autocommit(db_->get()) == 0) (void)db_->Exec("ROLLBACK");
  return s;
}

Status StoreWriter::WriteTick(const TickResult& tick) { return WriteTicks({&tick}); }

Status StoreWriter::WriteTicks(const std::vector<const TickResult*>& ticks) {
  begin_.Reset();
  if (begin_.Step() != SQLITE_DONE) {
    Status s = db_->Error("begin");
    begin_.Reset();
    return s;
  }
  begin_.Reset();
  Status s;
  for (const TickResult* tick : ticks) {
    s = WriteTickTx(*tick);
    if (!s.ok()) break;
  }
  if (s.ok()) {
    commit_.Reset();
    if (commit_.Step() != SQLITE_DONE) s = db_->Error("commit");
    commit_.Reset();
  }
  if (!s.ok()) {
    rollback_.Reset();
    rollback_.Step();
    rollback_.Reset();
    if (sqlite3_get_autocommit(db_->get()) == 0) (void)db_->Exec("ROLLBACK");
    // Ids inserted by the rolled-back transaction are gone: forget the cache.
    ForgetSeries();
    ledger_.clear();
    written_findings_.clear();
    current_minute_ = -1;
  }
  return s;
}

const StoreWriter::FindingJson& StoreWriter::FindingJsonOf(const std::string& key,
                                                           const Finding& f) {
  FindingJson& out = finding_json_next_[key];
  auto last = finding_json_.find(key);
  if (last != finding_json_.end() && last->second.evidence == f.evidence &&
      last->second.steps == f.next_steps) {
    out = std::move(last->second);
    finding_json_.erase(last);
    return out;
  }
  out.evidence = f.evidence;
  out.steps = f.next_steps;
  out.evidence_json = EvidenceToDbJson(f.evidence);
  out.steps_json = StepsToDbJson(f.next_steps);
  return out;
}

namespace {

// finding_upsert_'s parameter for last_seen_ms.
constexpr int kLastSeenParam = 17;

// The values of a tracked finding's row in finding_upsert_'s parameter order (1-27): text(param,
// value) and number(param, value or nullopt for NULL). The one list of the row's columns: both
// the statement's binding and the writer's record of what it wrote go through it.
template <typename Text, typename Number>
void VisitFindingRow(const TrackedFinding& t, std::string_view evidence_json,
                     std::string_view steps_json, Text text, Number number) {
  const Finding& f = t.last;
  text(1, t.key);
  number(2, t.first_seen_ms);
  text(3, f.id);
  text(4, SeverityName(f.severity));
  text(5, LayerName(f.layer));
  number(6, f.gpu && f.gpu->index ? std::optional<int64_t>(*f.gpu->index) : std::nullopt);
  text(7, f.gpu ? f.gpu->serial : "");
  text(8, f.gpu ? f.gpu->pci_bus_id : "");
  text(9, f.gpu ? f.gpu->uuid : "");
  text(10, f.gpu ? f.gpu->name : "");
  text(11, f.subject);
  text(12, f.summary);
  text(13, evidence_json);
  text(14, steps_json);
  text(15, FindingStateName(t.state));
  number(16, t.opened_ms);
  number(kLastSeenParam, t.last_seen_ms);
  number(18, t.resolved_ms);
  text(19, t.resolution);
  number(20, t.reboots_during);
  number(21, t.episodes_after_reboot);
  number(22, t.escalated ? 1 : 0);
  number(23, t.acked ? 1 : 0);
  number(24, t.acked_ms);
  text(25, t.ack_note);
  number(26, t.silenced_until_ms);
  text(27, ActionName(f.action));
}

}  // namespace

// The tick's findings (WriteTickTx). An unchanged finding's last_seen_ms is also written at once
// after a driver load newer than the one written: a restart after a crash judges
// cleared_by_driver_reload by the stored last_seen_ms against the driver's load time.
Status StoreWriter::WriteFindings(const TickResult& tick) {
  const LogTime& load = tick.report.snapshot.kernel.last_driver_load;
  const int64_t driver_loaded_ms = load.wall_us ? *load.wall_us / 1000 : 0;
  std::map<std::pair<std::string, int64_t>, WrittenFinding> written;
  for (const auto& t : tick.findings) {
    const FindingJson& json = FindingJsonOf(t.key, t.last);
    // The row as bound, but key, first_seen_ms and last_seen_ms: texts length-prefixed.
    std::string& row = finding_row_;
    row.clear();
    VisitFindingRow(
        t, json.evidence_json, json.steps_json,
        [&row](int param, std::string_view v) {
          if (param <= 2) return;
          row += std::to_string(v.size());
          row += ':';
          row += v;
        },
        [&row](int param, std::optional<int64_t> v) {
          if (param <= 2 || param == kLastSeenParam) return;
          row += v ? std::to_string(*v) : "null";
          row += ';';
        });
    auto id = std::make_pair(t.key, t.first_seen_ms);
    if (auto it = written_findings_.find(id);
        it != written_findings_.end() && it->second.row == row) {
      WrittenFinding w = std::move(it->second);
      w.seen_ms = std::max(w.seen_ms, t.last_seen_ms);
      if (w.seen_ms - w.written_seen_ms >= kFindingSeenEveryMs ||
          (w.seen_ms > w.written_seen_ms && driver_loaded_ms > w.written_seen_ms)) {
        if (Status s = WriteFindingSeen(id, w); !s.ok()) return s;
      }
      written.emplace(std::move(id), std::move(w));
      continue;
    }
    auto& st = finding_upsert_;
    st.Reset();
    VisitFindingRow(
        t, json.evidence_json, json.steps_json,
        [&st](int param, std::string_view v) { st.Bind(param, v); },
        [&st](int param, std::optional<int64_t> v) {
          if (v) {
            st.Bind(param, *v);
          } else {
            st.BindNull(param);
          }
        });
    if (st.Step() != SQLITE_DONE) return db_->Error("write finding");
    written[std::move(id)] = WrittenFinding{row, t.last_seen_ms, t.last_seen_ms};
  }
  // A finding no longer listed (a pending one forgotten): the last_seen_ms it had.
  for (auto& [id, w] : written_findings_) {
    if (w.seen_ms > w.written_seen_ms && written.find(id) == written.end()) {
      if (Status s = WriteFindingSeen(id, w); !s.ok()) return s;
    }
  }
  written_findings_ = std::move(written);
  finding_json_.swap(finding_json_next_);  // what this tick wrote; the rest is dropped
  finding_json_next_.clear();
  return Status::Ok();
}

Status StoreWriter::WriteTickTx(const TickResult& tick) {
  const int64_t ts = FloorTo(tick.unix_ms, 1000) / 1000;
  const int64_t minute = FloorTo(ts, 60);
  if (minute != current_minute_) {
    if (current_minute_ < 0) {
      // After start or a failure: make sure the counter flags of stored series are known.
      auto st = db_->Prepare("SELECT id, counter FROM series");
      if (!st.ok()) return st.status();
      while (st->Step() == SQLITE_ROW) series_counter_[st->Int(0)] = st->Int(1) != 0;
    }
    // Raw ticks are packed a block of kPackBlockS at a time (the block's minutes written series
    // by series): when the tick enters a new block, or after start or a failure.
    const int64_t block = FloorTo(minute, options_.pack_block_s);
    if (current_minute_ < 0 || block != FloorTo(current_minute_, options_.pack_block_s)) {
      if (Status s = PackBefore(block); !s.ok()) return s;
    }
  }
  // All of the tick's points in one row: one insert, whatever the number of series.
  TickEncoder blob(&tick_blob_);
  size_t stored = 0;
  for (size_t i = 0; i < tick.points.size(); ++i) {
    const MetricPoint& p = tick.points[i];
    if (p.info == nullptr || !std::isfinite(p.value)) continue;
    auto id = CachedSeriesId(i, p);
    if (!id.ok()) return id.status();
    blob.Add(*id, p.value);
    ++stored;
  }
  if (stored > 0) {
    tick_insert_.Reset();
    tick_insert_.Bind(1, ts);
    sqlite3_bind_blob(tick_insert_.get(), 2, tick_blob_.data(), static_cast<int>(tick_blob_.size()),
                      SQLITE_STATIC);
    if (tick_insert_.Step() != SQLITE_DONE) {
      Status s = db_->Error("write samples");
      tick_insert_.Reset();
      return s;
    }
    tick_insert_.Reset();  // unbinds the blob before tick_blob_ changes
  }
  // Findings: whole rows where something but last_seen_ms changed, else last_seen_ms now and
  // then. A record of events alone says nothing about them.
  if (!tick.events_only) {
    if (Status s = WriteFindings(tick); !s.ok()) return s;
  }
  for (const auto& e : tick.events) {
    auto& st = event_insert_;
    st.Reset();
    st.Bind(1, e.unix_ms).Bind(2, e.kind);
    if (e.gpu_index) {
      st.Bind(3, int64_t{*e.gpu_index});
    } else {
      st.BindNull(3);
    }
    st.Bind(4, e.serial).Bind(5, e.pci_bus_id).Bind(6, e.detail);
    if (st.Step() != SQLITE_DONE) return db_->Error("write event");
  }
  for (const auto& g : tick.report.snapshot.gpu.gpus) {
    auto id = std::make_tuple(g.serial, g.uuid, g.pci_bus_id);
    auto it = ledger_.find(id);
    if (it != ledger_.end() && it->second.index == g.index && it->second.model == g.name &&
        ts - it->second.written_s < kLedgerEveryS) {
      it->second.seen_s = std::max(it->second.seen_s, ts);
      continue;
    }
    if (Status s = UpsertGpu(id, g.index, g.name, ts); !s.ok()) return s;
  }
  for (SqliteStmt* st : {&tick_insert_, &packed_insert_, &rollup_upsert_, &finding_upsert_,
                         &event_insert_, &gpu_upsert_, &series_insert_, &recent_delete_}) {
    st->Reset();
  }
  const int64_t retain_now_s = FloorTo(RetentionNowMs(tick), 1000) / 1000;
  if (minute != current_minute_) {
    if (retain_now_s - last_retention_s_ >= 600) {
      if (Status s = Retain(retain_now_s); !s.ok()) return s;
      last_retention_s_ = retain_now_s;
    }
  }
  current_minute_ = minute;
  return Status::Ok();
}

}  // namespace gpudoctor
