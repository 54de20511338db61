// Internals of the history store shared by its .cc files (writer, reader, operator writes).
// Not part of the public interface.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/status.h"
#include "store/history_store.h"
#include "store/sqlite_db.h"
#include "store/store_file.h"

namespace gpudoctor {

// The block pack's read of the tick rows to pack: their ids and seconds only (no blob, no
// sorter: store_test checks the query plan); the pack orders them by (ts_s, id) itself and
// reads each blob by id.
inline constexpr const char* kPackSelectSql = "SELECT id, ts_s FROM samples_ticks WHERE ts_s < ?";

// Opens the database for writing (store_file.h decides what may be written: a missing file is
// created 0600 with O_EXCL, a corrupt one of ours moved aside, anything not ours refused) and
// initialises or migrates the schema (a version 2 file's samples_recent rows become
// samples_ticks rows: ConvertRecentSamples). WAL. On failure *transient says whether retrying may
// help (locked, disk full, I/O); *identity gets the opened file's device and inode.
Result<std::unique_ptr<SqliteDb>> OpenStoreForWriting(const std::string& path, bool* transient,
                                                      FileIdentity* identity);

// Moves every row of a version 2 samples_recent into samples_ticks (one row per (ts_s, seq), in
// that order) and drops it. Inside the caller's transaction. Nothing when the table is absent.
Status ConvertRecentSamples(SqliteDb& db);

// Rollup blob: four codec streams (min, avg, max, count) back to back.
struct RollupMinute {
  int minute = 0;  // of the hour
  double min = 0, avg = 0, max = 0;
  int64_t count = 0;
};

// Owns the write connection and its prepared statements; one transaction per batch of ticks
// (WriteTicks; WriteTick is a batch of one). Used by the store's writer thread only.
class StoreWriter {
 public:
  // InvalidArgument naming the option when `options` cannot be written with (pack_block_s).
  // HistoryStore::Open checks once, before anything is created; Create relies on it.
  static Status CheckOptions(const StoreOptions& options);
  static Result<std::unique_ptr<StoreWriter>> Create(std::unique_ptr<SqliteDb> db,
                                                     const StoreOptions& options);
  // On failure the transaction is rolled back (the tick is lost) and the message names the file.
  Status WriteTick(const TickResult& tick);
  // The ticks in order, in one transaction: one BEGIN/COMMIT (and one WAL commit frame) for all
  // of them. On failure all of them are rolled back and nothing of the batch is stored; the
  // caller may write them again one by one (WriteTick) to keep those that can be.
  Status WriteTicks(const std::vector<const TickResult*>& ticks);
  // Writes the GPU ledger's last_seen_s and the findings' last_seen_ms that ticks kept back
  // (below); the store calls it when it closes. In its own transaction; an error is returned,
  // nothing is retried.
  Status FlushLedger();

  // A GPU's ledger row (table gpus) is written when the GPU is new to this writer, when its index
  // or model changed, and otherwise at most once every kLedgerEveryS of tick time: last_seen_s
  // lags the newest tick by less than that until FlushLedger (the expected-GPU count allows
  // kLastSeenSlackS = 300 s). With 8 GPUs, their upserts were ~5% of `watch`'s instructions.
  static constexpr int64_t kLedgerEveryS = kGpuLedgerLagS;

  // A finding's row is written whole when the finding is new to this writer or anything in it
  // but last_seen_ms changed (state, severity, evidence, an acknowledgement, ...); otherwise
  // only its last_seen_ms, by itself and at most once every kFindingSeenEveryMs of tick time. An
  // open finding is seen every tick: its whole row rewrote the table's page and both indexes'
  // pages every tick, 3 of a tick's ~7 WAL pages with two open findings. Until FlushLedger, a
  // stored last_seen_ms lags the newest tick by less than that (`watch`'s own API serves the
  // newest from memory; readers of the file and a restart after a crash see the lag).
  static constexpr int64_t kFindingSeenEveryMs = 10'000;

 private:
  StoreWriter(std::unique_ptr<SqliteDb> db, const StoreOptions& options)
      : db_(std::move(db)), options_(options) {}
  Status WriteTickTx(const TickResult& tick);
  Result<int64_t> SeriesId(const MetricPoint& p);
  // The series id of tick point `i`: the one the point at the same position had last tick when
  // it names the same series (the usual case: no lookup, no string built), else SeriesId.
  Result<int64_t> CachedSeriesId(size_t i, const MetricPoint& p);
  void ForgetSeries();
  // Packs the tick rows older than `before_s` (a minute boundary) into `samples` and `rollups`.
  Status PackBefore(int64_t before_s);
  // Merges `packed` (minutes of `hour_s`, each once) into the series' rollup row of that hour.
  Status AddRollups(int64_t series_id, int64_t hour_s, const std::vector<RollupMinute>& packed);
  Status Retain(int64_t now_s);
  // The time retention measures age against (ms): the wall clock, but advancing at most about as
  // fast as the monotonic clock from the newest stored time, so a step forward deletes nothing.
  int64_t RetentionNowMs(const TickResult& tick);
  Status Prepare();
  // The evidence and next steps of finding `key` as stored JSON: last tick's text while they are
  // equal to last tick's (an open finding is compared every tick, usually unchanged; the JSON
  // was most of the store's CPU per tick with two open findings). Entries live one tick.
  struct FindingJson {
    std::vector<EvidenceItem> evidence;
    std::vector<std::string> steps;
    std::string evidence_json, steps_json;
  };
  const FindingJson& FindingJsonOf(const std::string& key, const Finding& f);

  std::unique_ptr<SqliteDb> db_;
  StoreOptions options_;
  std::map<std::tuple<std::string, int, std::string>, int64_t> series_ids_;
  // Most points have no extra labels: their series id by (descriptor, GPU) without building a
  // string key per point per tick (MetricInfo pointers are static table entries).
  std::map<std::pair<const MetricInfo*, int>, int64_t> unlabeled_ids_;
  std::map<int64_t, bool> series_counter_;
  // Last tick's points by position: which series each named.
  struct ShapeEntry {
    const MetricInfo* info = nullptr;
    int gpu = 0;
    MetricLabels labels;
    int64_t id = 0;
  };
  std::vector<ShapeEntry> shape_;
  std::map<std::string, FindingJson> finding_json_, finding_json_next_;
  struct LedgerRow {
    int index = 0;
    std::string model;
    int64_t written_s = 0;  // last_seen_s as written
    int64_t seen_s = 0;     // the newest tick that saw it
  };
  Status UpsertGpu(const std::tuple<std::string, std::string, std::string>& id, int index,
                   const std::string& model, int64_t seen_s);
  // By (serial, uuid, pci_bus_id); cleared when a tick's transaction fails (its writes are gone).
  std::map<std::tuple<std::string, std::string, std::string>, LedgerRow> ledger_;
  // The findings as last written (their bound values but last_seen_ms, in one string), by key
  // and first_seen_ms; a finding a tick no longer lists is dropped; cleared when a tick's
  // transaction fails.
  struct WrittenFinding {
    std::string row;
    int64_t written_seen_ms = 0;  // last_seen_ms as written
    int64_t seen_ms = 0;          // the newest tick's
  };
  std::map<std::pair<std::string, int64_t>, WrittenFinding> written_findings_;
  std::string finding_row_;  // reused
  Status WriteFindingSeen(const std::pair<std::string, int64_t>& id, WrittenFinding& w);
  Status WriteFindings(const TickResult& tick);
  std::string tick_blob_;                               // reused: no allocation per tick once grown
  std::vector<std::pair<int64_t, int64_t>> pack_rows_;  // (ts_s, id) of the rows to pack
  std::vector<std::pair<int64_t, double>> pack_points_;
  int64_t current_minute_ = -1;  // unknown after a failure: the next tick packs what is due
  int64_t last_retention_s_ = 0;
  int64_t newest_at_open_s_ = 0;  // retention's clock (s) when the file was last written; 0 none
  int64_t retain_now_ms_ = -1;    // RetentionNowMs; -1 before the first tick
  int64_t last_mono_ms_ = 0;
  // tick_insert_: the tick's points, one row (an append at the end of samples_ticks).
  SqliteStmt begin_, commit_, rollback_, series_insert_, series_select_, tick_insert_,
      recent_select_, tick_blob_select_, recent_delete_, packed_insert_, rollup_select_,
      rollup_upsert_, finding_upsert_, finding_seen_update_, event_insert_, gpu_upsert_;
};

std::string EncodeRollups(const std::vector<RollupMinute>& minutes);
std::optional<std::vector<RollupMinute>> DecodeRollups(std::string_view blob);

// findings.evidence_json ([[name, value], ...]) and next_steps_json ([text, ...]).
std::string EvidenceToDbJson(const std::vector<EvidenceItem>& evidence);
std::vector<EvidenceItem> EvidenceFromDbJson(const std::string& text);
std::string StepsToDbJson(const std::vector<std::string>& steps);
std::vector<std::string> StepsFromDbJson(const std::string& text);

// Marks the newest episode of `key` acknowledged (an "ack" event is recorded).
Status AckKey(const std::string& db_path, const std::string& key, int64_t unix_ms,
              const std::string& note);

}  // namespace gpudoctor
