#include "fleet/db_input.h"

#include <sqlite3.h>

#include <algorithm>
#include <map>

#include "core/input_file.h"
#include "facts/gpu_facts.h"
#include "fleet/finding_action.h"

namespace gpudoctor::fleet {
namespace {

constexpr int kSchemaVersion = 2;           // 2 changed only the sample tables, not read here
constexpr int kApplicationId = 0x47504448;  // "GPDH", src/watch/store_schema.h
constexpr size_t kMaxRows = 1'000'000;

class Db {
 public:
  ~Db() {
    if (db_) sqlite3_close(db_);
  }
  sqlite3* db_ = nullptr;
};

class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) {
    ok_ = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) == SQLITE_OK;
  }
  ~Stmt() { sqlite3_finalize(s_); }
  bool ok() const { return ok_; }
  bool Step() { return sqlite3_step(s_) == SQLITE_ROW; }
  std::string Text(int i) {
    const unsigned char* t = sqlite3_column_text(s_, i);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  int64_t Int(int i) { return sqlite3_column_int64(s_, i); }
  bool Null(int i) { return sqlite3_column_type(s_, i) == SQLITE_NULL; }

 private:
  sqlite3_stmt* s_ = nullptr;
  bool ok_ = false;
};

int64_t Pragma(sqlite3* db, const char* sql) {
  Stmt s(db, sql);
  return s.ok() && s.Step() ? s.Int(0) : -1;
}

std::optional<Layer> LayerFrom(const std::string& s) {
  if (s == "network") return Layer::kNetwork;
  if (s == "hardware") return Layer::kHardware;
  if (s == "software") return Layer::kSoftware;
  if (s == "resources") return Layer::kResources;
  return std::nullopt;
}

}  // namespace

Status ReadHistoryDb(const std::string& path, FleetData& data, TimePoint deadline) {
  // SQLite would block opening a FIFO (and read a device): only a regular file is a database.
  if (Status s = RequireRegularFile(path); !s.ok()) return s;
  Db db;
  if (sqlite3_open_v2(path.c_str(), &db.db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    return IoError(path + ": cannot open the history database read-only");
  }
  sqlite3_busy_timeout(db.db_, 2000);
  // Past the deadline every statement is interrupted (a huge or slow database).
  sqlite3_progress_handler(
      db.db_, 1000,
      [](void* d) -> int { return SteadyClock::now() > *static_cast<TimePoint*>(d) ? 1 : 0; },
      &deadline);
  auto late = [&] {
    return SteadyClock::now() > deadline
               ? TimeoutError(path + ": not read within the deadline (--deadline)")
               : Status::Ok();
  };
  int64_t app = Pragma(db.db_, "PRAGMA application_id");
  if (app != kApplicationId) return ParseError(path + ": not a gpudoctor history database");
  int64_t version = Pragma(db.db_, "PRAGMA user_version");
  if (version > kSchemaVersion) {
    return Unsupported(path + ": history schema " + std::to_string(version) +
                       " is newer than this gpudoctor reads (" + std::to_string(kSchemaVersion) +
                       ")");
  }
  std::string host;
  {
    Stmt s(db.db_, "SELECT value FROM meta WHERE key='hostname'");
    if (s.ok() && s.Step()) host = s.Text(0);
  }
  if (host.empty()) return ParseError(path + ": no hostname in meta");
  struct Row {
    Card card;
    int64_t first = 0, last = 0;
  };
  std::vector<Row> rows;
  {
    Stmt s(
        db.db_,
        "SELECT serial, uuid, pci_bus_id, gpu_index, model, first_seen_s, last_seen_s FROM gpus");
    if (!s.ok()) return ParseError(path + ": no gpus table");
    while (s.Step()) {
      if (rows.size() >= kMaxRows) return InvalidArgument(path + ": more than 1,000,000 GPUs");
      Row r;
      r.card.node = host;
      r.card.serial = SerialOrEmpty(s.Text(0));
      r.card.uuid = s.Text(1);
      r.card.pci_bus_id = s.Text(2);
      if (!s.Null(3)) r.card.index = static_cast<int>(s.Int(3));
      r.card.model = s.Text(4);
      r.first = s.Int(5);
      r.last = s.Int(6);
      rows.push_back(r);
    }
  }
  std::vector<FindingEvent> events;
  std::vector<bool> open;
  {
    // Histories written before findings carried an action have no such column.
    const bool has_action =
        Pragma(db.db_, "SELECT count(*) FROM pragma_table_info('findings') WHERE name='action'") >
        0;
    std::string sql =
        std::string(
            "SELECT first_seen_ms, id, severity, layer, gpu_index, gpu_serial, "
            "gpu_bus_id, gpu_uuid, gpu_name, subject, summary, state, last_seen_ms, ") +
        (has_action ? "action" : "''") + " FROM findings";
    Stmt s(db.db_, sql.c_str());
    if (!s.ok()) return ParseError(path + ": no findings table");
    while (s.Step()) {
      if (events.size() >= kMaxRows) {
        return InvalidArgument(path + ": more than 1,000,000 finding episodes");
      }
      FindingEvent e;
      e.node = host;
      e.time_s = s.Int(0) / 1000;
      e.id = s.Text(1);
      e.severity = ParseSeverity(s.Text(2)).value_or(Severity::kWarn);
      e.layer = LayerFrom(s.Text(3)).value_or(Layer::kHardware);
      if (!s.Null(4)) e.gpu.index = static_cast<int>(s.Int(4));
      e.gpu.serial = SerialOrEmpty(s.Text(5));
      e.gpu.pci_bus_id = s.Text(6);
      e.gpu.uuid = s.Text(7);
      e.gpu.name = s.Text(8);
      e.subject = s.Text(9);
      e.summary = s.Text(10);
      e.action = ReadFindingAction(s.Text(13), e.id, std::nullopt, e.summary);
      events.push_back(e);
      open.push_back(s.Text(11) != "resolved");
    }
  }
  if (Status s = late(); !s.ok()) return s;
  // Report times: ledger bounds and episode onsets; "now" = the latest of them.
  int64_t latest = 0;
  std::map<int64_t, int> times;
  for (const auto& r : rows) {
    times[r.first];
    times[r.last];
    latest = std::max(latest, r.last);
  }
  for (const auto& e : events) {
    times[e.time_s];
    latest = std::max(latest, e.time_s);
  }
  for (const auto& [t, unused] : times) {
    auto [it, inserted] = data.seen.emplace(std::make_pair(host, t), path);
    if (!inserted) {
      data.problems.push_back(
          {path, host,
           "history of node " + host + " overlaps " + it->second + " at the same time; skipped"});
      return Status::Ok();
    }
    NodeReport rep;
    rep.node = host;
    rep.source = path;
    rep.time_s = t;
    for (const auto& r : rows) rep.gpu_count += r.first <= t && t <= r.last;
    data.reports.push_back(rep);
  }
  for (const auto& r : rows) {
    uint32_t c = data.InternCard(r.card);
    for (int64_t t : {r.first, r.last}) {
      if (t == r.last && r.last == r.first) break;
      GpuSample s;
      s.card = c;
      s.time_s = t;
      data.samples.push_back(s);
    }
  }
  for (size_t i = 0; i < events.size(); ++i) {
    data.findings.push_back(events[i]);
    if (open[i] && events[i].time_s != latest) {
      FindingEvent now = events[i];
      now.time_s = latest;
      data.findings.push_back(now);
    }
  }
  return Status::Ok();
}

}  // namespace gpudoctor::fleet
