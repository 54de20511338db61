// HistoryReader (read-only connections) and the operator writes (ack, silence).
#include <fcntl.h>  // AT_FDCWD

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <map>

#include "core/replace_file.h"
#include "facts/gpu_facts.h"
#include "rules/stored_action.h"
#include "store/history_store.h"
#include "store/history_store_internal.h"
#include "store/series_points.h"
#include "store/store_file.h"
#include "store/store_schema.h"

namespace gpudoctor {
namespace {

// The same check as the writer's (store_file.h): anything that is not a gpudoctor database of a
// schema this build reads is refused, naming the path and what it is.
Result<std::unique_ptr<SqliteDb>> OpenExisting(const std::string& path, int flags) {
  StoreFileCheck check = InspectStoreFile(path, /*deep=*/false);
  if (check.kind == StoreFileKind::kEmpty) check.kind = StoreFileKind::kForeign;
  if (check.kind != StoreFileKind::kOurs) return StoreFileRefusal(path, check);
  auto db = SqliteDb::Open(path, flags | SQLITE_OPEN_NOFOLLOW);
  if (!db.ok()) return db.status();
  auto app = (*db)->QueryInt("PRAGMA application_id");
  if (!app.ok()) return ParseError(path + ": not a readable SQLite database");
  if (*app != kStoreApplicationId) {
    return ParseError(path + ": not a gpudoctor history database");
  }
  // `watch` serving the dashboard's ranges grew by the default cache (store_schema.h).
  if (Status s = (*db)->Exec(kStorePageCachePragma); !s.ok()) return s;
  return db;
}

TrackedFinding FindingFromRow(const SqliteStmt& r) {
  TrackedFinding t;
  t.key = r.Text(0);
  t.first_seen_ms = r.Int(1);
  Finding& f = t.last;
  f.id = r.Text(2);
  f.severity = ParseSeverity(r.Text(3)).value_or(Severity::kInfo);
  if (auto layer = ParseLayer(r.Text(4))) f.layer = *layer;
  GpuRef g;
  if (!r.IsNull(5)) g.index = static_cast<int>(r.Int(5));
  g.serial = r.Text(6);
  g.pci_bus_id = r.Text(7);
  g.uuid = r.Text(8);
  g.name = r.Text(9);
  if (g.index || !g.serial.empty() || !g.pci_bus_id.empty() || !g.uuid.empty()) f.gpu = g;
  f.subject = r.Text(10);
  f.summary = r.Text(11);
  f.evidence = EvidenceFromDbJson(r.Text(12));
  f.next_steps = StepsFromDbJson(r.Text(13));
  std::string state = r.Text(14);
  t.state = state == "open"       ? FindingState::kOpen
            : state == "resolved" ? FindingState::kResolved
                                  : FindingState::kPending;
  t.opened_ms = r.Int(15);
  t.last_seen_ms = r.Int(16);
  t.resolved_ms = r.Int(17);
  t.resolution = r.Text(18);
  t.reboots_during = static_cast<int>(r.Int(19));
  t.episodes_after_reboot = static_cast<int>(r.Int(20));
  t.escalated = r.Int(21) != 0;
  t.acked = r.Int(22) != 0;
  t.acked_ms = r.Int(23);
  t.ack_note = r.Text(24);
  t.silenced_until_ms = r.Int(25);
  // Older files have no action: the catalogue's by id, and gpu.xid's by the code in its summary.
  t.last.action = ReadFindingAction(r.Text(26), t.last.id, std::nullopt, t.last.summary);
  return t;
}

constexpr const char* kFindingColumns =
    "key, first_seen_ms, id, severity, layer, gpu_index, gpu_serial, gpu_bus_id, gpu_uuid, "
    "gpu_name, subject, summary, evidence_json, next_steps_json, state, opened_ms, last_seen_ms, "
    "resolved_ms, resolution, reboots, episodes_after_reboot, escalated, acked, acked_ms, "
    "ack_note, silenced_until_ms";

class SqliteHistoryReader final : public HistoryReader {
 public:
  SqliteHistoryReader(std::unique_ptr<SqliteDb> db, TimePoint deadline)
      : db_(std::move(db)), deadline_(deadline) {
    if (deadline_ != TimePoint::max()) {
      // Past the deadline every statement is interrupted (a huge or slow database).
      sqlite3_progress_handler(
          db_->get(), 1000,
          [](void* d) -> int { return SteadyClock::now() > *static_cast<TimePoint*>(d) ? 1 : 0; },
          &deadline_);
    }
    // A version 1 file opened read-only is not migrated: its findings have no action column.
    auto n =
        db_->QueryInt("SELECT count(*) FROM pragma_table_info('findings') WHERE name='action'");
    finding_columns_ =
        std::string(kFindingColumns) + (n.ok() && *n > 0 ? ", action" : ", '' AS action");
    // A version 2 file opened read-only is not converted: its raw points are one row each.
    auto legacy = db_->QueryInt(
        "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='samples_recent'");
    legacy_recent_ = legacy.ok() && *legacy > 0;
  }

  Result<std::string> Hostname() override {
    auto st = db_->Prepare("SELECT value FROM meta WHERE key='hostname'");
    if (!st.ok()) return Late(st.status());
    int rc = st->Step();
    if (rc == SQLITE_ROW && !st->Text(0).empty()) return st->Text(0);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return Late(db_->Error("read meta"));
    return NotFound(db_->path() + ": no hostname in meta");
  }

  Result<std::vector<StoredGpu>> QueryGpus(size_t max_rows) override {
    auto st = db_->Prepare(
        "SELECT serial, uuid, pci_bus_id, gpu_index, model, first_seen_s, last_seen_s FROM gpus");
    if (!st.ok()) return Late(st.status());
    std::vector<StoredGpu> out;
    int rc;
    while ((rc = st->Step()) == SQLITE_ROW) {
      if (out.size() >= max_rows) {
        return InvalidArgument(db_->path() + ": more than " + std::to_string(max_rows) + " GPUs");
      }
      StoredGpu g;
      g.serial = SerialOrEmpty(st->Text(0));
      g.uuid = st->Text(1);
      g.pci_bus_id = st->Text(2);
      if (!st->IsNull(3)) g.index = static_cast<int>(st->Int(3));
      g.model = st->Text(4);
      g.first_seen_s = st->Int(5);
      g.last_seen_s = st->Int(6);
      out.push_back(std::move(g));
    }
    if (rc != SQLITE_DONE) return Late(db_->Error("read gpus"));
    return out;
  }

  Result<std::vector<Series>> QuerySeries(const SeriesQuery& q) override {
    int64_t until = q.until_unix_s > 0 ? q.until_unix_s : static_cast<int64_t>(std::time(nullptr));
    std::string sql = "SELECT id, metric, gpu, labels FROM series WHERE metric=?1";
    if (q.gpu) sql += " AND gpu=?2";
    if (!q.labels.empty()) sql += " AND labels=?3";
    sql += " ORDER BY gpu, labels";
    auto st = db_->Prepare(sql);
    if (!st.ok()) return st.status();
    st->Bind(1, q.metric);
    if (q.gpu) st->Bind(2, int64_t{*q.gpu});
    if (!q.labels.empty()) st->Bind(3, q.labels);
    std::vector<std::pair<int64_t, Series>> found;
    int rc;
    while ((rc = st->Step()) == SQLITE_ROW) {
      Series s;
      s.metric = st->Text(1);
      s.gpu = static_cast<int>(st->Int(2));
      s.labels = st->Text(3);
      found.emplace_back(st->Int(0), std::move(s));
    }
    if (rc != SQLITE_DONE) return db_->Error("query series");
    // The recent tick rows hold every series: decoded once for all the series asked for.
    std::map<int64_t, SeriesPoints> recent;
    for (const auto& f : found) recent[f.first];
    if (Status e = ReadRecentPoints(*db_, legacy_recent_, q.since_unix_s, until, recent); !e.ok()) {
      return e;
    }
    std::vector<Series> out;
    for (auto& [id, s] : found) {
      auto& mine = recent[id];
      Status e = ReadSeriesPoints(*db_, id, q.since_unix_s, until, mine,
                                  std::max<size_t>(1, q.max_points), s);
      if (!e.ok()) return e;
      SeriesPoints().swap(mine);
      out.push_back(std::move(s));
    }
    return out;
  }

  Result<std::vector<std::string>> ListMetrics() override {
    auto st = db_->Prepare("SELECT DISTINCT metric FROM series ORDER BY metric");
    if (!st.ok()) return st.status();
    std::vector<std::string> out;
    int rc;
    while ((rc = st->Step()) == SQLITE_ROW) out.push_back(st->Text(0));
    if (rc != SQLITE_DONE) return db_->Error("list metrics");
    return out;
  }

  Result<std::vector<TrackedFinding>> QueryFindings(const FindingsQuery& q) override {
    std::string sql =
        "SELECT " +
        (q.acks_only ? std::string("key, acked, acked_ms, ack_note, silenced_until_ms")
                     : finding_columns_) +
        FindingsQueryTail(q.open_only);
    // Kept compiled while the query repeats (watch's acknowledgement poll asks the same every
    // few ticks), and reset on every way out: a reset statement holds no read snapshot, so the
    // writer's checkpoints are never held back between queries.
    if (sql != findings_sql_ || findings_stmt_.get() == nullptr) {
      auto prepared = db_->Prepare(sql);
      if (!prepared.ok()) return prepared.status();
      findings_stmt_ = std::move(*prepared);
      findings_sql_ = std::move(sql);
    }
    SqliteStmt* st = &findings_stmt_;
    struct ResetOnReturn {
      SqliteStmt* stmt;
      ~ResetOnReturn() { stmt->Reset(); }
    } reset_on_return{st};
    st->Bind(1, q.since_unix_s * 1000);
    std::vector<TrackedFinding> out;
    int rc;
    while ((rc = st->Step()) == SQLITE_ROW) {
      if (q.max_rows > 0 && out.size() >= q.max_rows) {
        return InvalidArgument(db_->path() + ": more than " + std::to_string(q.max_rows) +
                               " finding episodes");
      }
      if (q.acks_only) {
        TrackedFinding& t = out.emplace_back();
        t.key = st->Text(0);
        t.acked = st->Int(1) != 0;
        t.acked_ms = st->Int(2);
        t.ack_note = st->Text(3);
        t.silenced_until_ms = st->Int(4);
      } else {
        out.push_back(FindingFromRow(*st));
      }
    }
    if (rc != SQLITE_DONE) return Late(db_->Error("query findings"));
    return out;
  }

  Result<std::vector<HistoryEvent>> QueryEvents(int64_t since_unix_s,
                                                size_t newest_limit) override {
    // Without a limit, LIMIT -1 is SQLite's "no limit".
    auto st = db_->Prepare(
        "SELECT unix_ms, kind, gpu_index, serial, pci_bus_id, detail FROM (SELECT id, unix_ms, "
        "kind, gpu_index, serial, pci_bus_id, detail FROM events WHERE unix_ms >= ? ORDER BY "
        "unix_ms DESC, id DESC LIMIT ?) ORDER BY unix_ms, id");
    if (!st.ok()) return st.status();
    st->Bind(1, since_unix_s * 1000);
    st->Bind(2, newest_limit > 0 ? static_cast<int64_t>(newest_limit) : int64_t{-1});
    std::vector<HistoryEvent> out;
    int rc;
    while ((rc = st->Step()) == SQLITE_ROW) {
      HistoryEvent e;
      e.unix_ms = st->Int(0);
      e.kind = st->Text(1);
      if (!st->IsNull(2)) e.gpu_index = static_cast<int>(st->Int(2));
      e.serial = st->Text(3);
      e.pci_bus_id = st->Text(4);
      e.detail = st->Text(5);
      out.push_back(std::move(e));
    }
    if (rc != SQLITE_DONE) return db_->Error("query events");
    return out;
  }

 private:
  // An error of a statement the deadline interrupted is a timeout naming the file.
  Status Late(Status s) const {
    if (!s.ok() && SteadyClock::now() > deadline_) {
      return TimeoutError(db_->path() + ": not read within the deadline (--deadline)");
    }
    return s;
  }

  std::unique_ptr<SqliteDb> db_;
  TimePoint deadline_;
  std::string finding_columns_;
  std::string findings_sql_;    // the SQL findings_stmt_ was compiled from
  SqliteStmt findings_stmt_;    // QueryFindings' last statement, reset after each use
  bool legacy_recent_ = false;  // samples_recent (version 2, not yet converted by a writer)
};

// Rewrites the marks file with `unix_ms` (core/replace_file.h: a new inode and modification time
// whatever the clock's resolution; a link planted at either name is replaced, never followed).
// Best effort: a failure leaves `watch` to its fallback poll.
void TouchOperatorMarks(const std::string& db_path, int64_t unix_ms) {
  static_cast<void>(
      ReplaceFileContents(AT_FDCWD, OperatorMarksPath(db_path), std::to_string(unix_ms) + "\n"));
}

Result<int> MarkFindings(const std::string& db_path, const std::string& id, std::optional<int> gpu,
                         bool ack, int64_t until_ms, int64_t unix_ms, const std::string& note) {
  auto db = OpenExisting(db_path, SQLITE_OPEN_READWRITE);
  if (!db.ok()) return db.status();
  SqliteDb& d = **db;
  if (Status s = d.Exec("BEGIN IMMEDIATE"); !s.ok()) return s;
  std::string where = "f.id=?1";
  if (gpu) where += " AND f.gpu_index=?2";
  if (ack) where += " AND f.state <> 'resolved'";
  where += " AND f.first_seen_ms = (SELECT max(first_seen_ms) FROM findings g WHERE g.key = f.key)";
  std::string sql = ack ? "UPDATE findings AS f SET acked=1, acked_ms=?3, ack_note=?4 WHERE "
                        : "UPDATE findings AS f SET silenced_until_ms=?5 WHERE ";
  auto st = d.Prepare(sql + where);
  if (!st.ok()) {
    (void)d.Exec("ROLLBACK");
    return st.status();
  }
  st->Bind(1, id);
  if (gpu) st->Bind(2, int64_t{*gpu});
  if (ack) {
    st->Bind(3, unix_ms).Bind(4, note);
  } else {
    st->Bind(5, until_ms);
  }
  if (st->Step() != SQLITE_DONE) {
    Status e = d.Error(ack ? "ack" : "silence");
    (void)d.Exec("ROLLBACK");
    return e;
  }
  int changed = sqlite3_changes(d.get());
  if (changed == 0) {
    (void)d.Exec("ROLLBACK");
    std::string what = "no " + std::string(ack ? "open " : "") + "finding " + id +
                       (gpu ? " on GPU " + std::to_string(*gpu) : "") + " in " + db_path;
    return NotFound(what);
  }
  auto ev =
      d.Prepare("INSERT INTO events(unix_ms, kind, gpu_index, detail) VALUES(?1, ?2, ?3, ?4)");
  if (ev.ok()) {
    ev->Bind(1, unix_ms).Bind(2, std::string_view(ack ? "ack" : "silence"));
    if (gpu) {
      ev->Bind(3, int64_t{*gpu});
    } else {
      ev->BindNull(3);
    }
    std::string detail = id + (ack ? (note.empty() ? "" : ": " + note)
                                   : " until " + std::to_string(until_ms / 1000));
    ev->Bind(4, detail);
    ev->Step();
  }
  if (Status s = d.Exec("COMMIT"); !s.ok()) {
    (void)d.Exec("ROLLBACK");
    return s;
  }
  TouchOperatorMarks(db_path, unix_ms);
  return changed;
}

}  // namespace

Result<std::unique_ptr<HistoryReader>> HistoryReader::Open(const std::string& path,
                                                           TimePoint deadline) {
  auto db = OpenExisting(path, SQLITE_OPEN_READONLY);
  if (!db.ok()) return db.status();
  return std::unique_ptr<HistoryReader>(new SqliteHistoryReader(std::move(*db), deadline));
}

std::string OperatorMarksPath(const std::string& db_path) { return db_path + "-acks"; }

Result<int> AckFindings(const std::string& db_path, const std::string& id, std::optional<int> gpu,
                        int64_t unix_ms, const std::string& note) {
  return MarkFindings(db_path, id, gpu, true, 0, unix_ms, note);
}

Result<int> SilenceFindings(const std::string& db_path, const std::string& id,
                            std::optional<int> gpu, int64_t until_unix_ms, int64_t unix_ms) {
  return MarkFindings(db_path, id, gpu, false, until_unix_ms, unix_ms, "");
}

Status AckKey(const std::string& db_path, const std::string& key, int64_t unix_ms,
              const std::string& note) {
  auto db = OpenExisting(db_path, SQLITE_OPEN_READWRITE);
  if (!db.ok()) return db.status();
  auto st = (*db)->Prepare(
      "UPDATE findings SET acked=1, acked_ms=?2, ack_note=?3 WHERE key=?1 AND first_seen_ms = "
      "(SELECT max(first_seen_ms) FROM findings WHERE key=?1)");
  if (!st.ok()) return st.status();
  st->Bind(1, key).Bind(2, unix_ms).Bind(3, note);
  if (st->Step() != SQLITE_DONE) return (*db)->Error("ack");
  if (sqlite3_changes((*db)->get()) == 0) return NotFound("no finding " + key + " in " + db_path);
  return Status::Ok();
}

}  // namespace gpudoctor
