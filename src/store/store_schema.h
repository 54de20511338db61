// The history database schema: the one documented place. The fleet engineer reads `gpus` and
// `findings` for card-vs-slot analysis; changes bump kStoreSchemaVersion (PRAGMA user_version).
//
// Times: *_s are unix seconds, *_ms unix milliseconds (UTC). GPU index -1: host-level series.
//
//   meta(key, value)                 schema_version, hostname, created_unix_s
//   series(id, metric, gpu, labels, counter)
//                                    one row per (gpudoctor_* metric name, GPU index, LabelsKey);
//                                    counter 1 for *_total (stored exactly)
//   samples_ticks(id, ts_s, data)   raw points of the current pack block (StoreOptions::
//                                    pack_block_s, 10 minutes) and any not yet packed:
//                                    one row per tick holding all of its points (tick_codec.h:
//                                    series id and value each), so a tick is one insert; rows
//                                    at the same second (the wall clock stepped back) are all
//                                    kept, in id (insertion) order. Version 2 files kept one
//                                    row per point in samples_recent(series_id, ts_s, seq,
//                                    value); the writer converts them on open (kept in
//                                    (ts_s, seq) order), readers read either table.
//   samples(series_id, minute_s, seq, data)
//                                    raw points of one minute packed by sample_codec.h (slot =
//                                    second of the minute); seq > 0: more points of a minute
//                                    already packed (clock steps); kept raw_retention_s;
//                                    written when a tick enters the next pack block, the
//                                    block's minutes series by series
//   rollups(series_id, hour_s, data) 1-minute rollups of one hour: four codec streams back to
//                                    back (min, avg, max as float32; count exact), slot = minute
//                                    of the hour; kept rollup_retention_s
//   findings(key, first_seen_ms, ...) one row per episode of a finding (TrackedFinding); key =
//                                    FindingKey (id|serial=..|subject); evidence_json is
//                                    [[name, value], ...], next_steps_json [text, ...]
//   events(id, unix_ms, kind, gpu_index, serial, pci_bus_id, detail)
//   gpus(serial, uuid, pci_bus_id, gpu_index, model, first_seen_s, last_seen_s)
//                                    ledger: one row per card seen in a slot
#pragma once

#include <cstdint>
#include <string>

namespace gpudoctor {

// "GPDH": recognises our files (PRAGMA application_id); anything else is foreign.
inline constexpr int32_t kStoreApplicationId = 0x47504448;
// Version 2: seq in samples_recent and samples (points of a clock step back are kept).
// Version 3: samples_ticks (one row per tick) replaces samples_recent (one row per point).
inline constexpr int kStoreSchemaVersion = 3;

// Every connection to a history file (the writer, readers, the open's integrity check) keeps
// 256 KiB of page cache, not SQLite's default 2 MiB: a tick's pages fit, and queries and the check
// read each page once or a few times; 2 MiB only grew `watch` (docs/cost.md, "`watch` RSS, fifth
// round" and "Tenth round").
inline constexpr const char* kStorePageCachePragma = "PRAGMA cache_size=-256";

// findings_open: the few open episodes among 30 days of resolved ones. `watch` reads them every
// 5 s (acknowledgements and silences written by other processes); without it every read scanned
// the whole table (21.7 ms at 20,000 episodes against 0.02 ms with it, docs/cost.md). A partial
// index holds only the open rows; files written before it get it at their next write-open.
inline constexpr const char* kStoreSchemaSql = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS series(
  id INTEGER PRIMARY KEY, metric TEXT NOT NULL, gpu INTEGER NOT NULL, labels TEXT NOT NULL,
  counter INTEGER NOT NULL DEFAULT 0, UNIQUE(metric, gpu, labels));
CREATE TABLE IF NOT EXISTS samples_ticks(
  id INTEGER PRIMARY KEY, ts_s INTEGER NOT NULL, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS samples(
  series_id INTEGER NOT NULL, minute_s INTEGER NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL,
  PRIMARY KEY(series_id, minute_s, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rollups(
  series_id INTEGER NOT NULL, hour_s INTEGER NOT NULL, data BLOB NOT NULL,
  PRIMARY KEY(series_id, hour_s)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS findings(
  key TEXT NOT NULL, first_seen_ms INTEGER NOT NULL,
  id TEXT NOT NULL, severity TEXT NOT NULL, layer TEXT NOT NULL,
  gpu_index INTEGER, gpu_serial TEXT NOT NULL DEFAULT '', gpu_bus_id TEXT NOT NULL DEFAULT '',
  gpu_uuid TEXT NOT NULL DEFAULT '', gpu_name TEXT NOT NULL DEFAULT '',
  subject TEXT NOT NULL DEFAULT '', summary TEXT NOT NULL DEFAULT '',
  evidence_json TEXT NOT NULL DEFAULT '[]', next_steps_json TEXT NOT NULL DEFAULT '[]',
  state TEXT NOT NULL, opened_ms INTEGER NOT NULL DEFAULT 0, last_seen_ms INTEGER NOT NULL,
  resolved_ms INTEGER NOT NULL DEFAULT 0, resolution TEXT NOT NULL DEFAULT '',
  reboots INTEGER NOT NULL DEFAULT 0, episodes_after_reboot INTEGER NOT NULL DEFAULT 0,
  escalated INTEGER NOT NULL DEFAULT 0, acked INTEGER NOT NULL DEFAULT 0,
  acked_ms INTEGER NOT NULL DEFAULT 0, ack_note TEXT NOT NULL DEFAULT '',
  silenced_until_ms INTEGER NOT NULL DEFAULT 0, action TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(key, first_seen_ms));
CREATE INDEX IF NOT EXISTS findings_by_id ON findings(id, gpu_index);
CREATE INDEX IF NOT EXISTS findings_open ON findings(state) WHERE state = 'open';
CREATE TABLE IF NOT EXISTS events(
  id INTEGER PRIMARY KEY, unix_ms INTEGER NOT NULL, kind TEXT NOT NULL, gpu_index INTEGER,
  serial TEXT NOT NULL DEFAULT '', pci_bus_id TEXT NOT NULL DEFAULT '',
  detail TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS events_by_time ON events(unix_ms);
CREATE TABLE IF NOT EXISTS gpus(
  serial TEXT NOT NULL, uuid TEXT NOT NULL, pci_bus_id TEXT NOT NULL, gpu_index INTEGER,
  model TEXT NOT NULL DEFAULT '', first_seen_s INTEGER NOT NULL, last_seen_s INTEGER NOT NULL,
  PRIMARY KEY(serial, uuid, pci_bus_id)) WITHOUT ROWID;
)sql";

// Version 1 -> 2, in the writer's first transaction (the tables keep their rows, seq 0; findings
// gain their action, '' for rows written before: readers take the catalogue default then).
inline constexpr const char* kStoreMigrateV1Sql = R"sql(
CREATE TABLE samples_recent_v2(
  series_id INTEGER NOT NULL, ts_s INTEGER NOT NULL, seq INTEGER NOT NULL, value REAL NOT NULL,
  PRIMARY KEY(series_id, ts_s, seq)) WITHOUT ROWID;
INSERT INTO samples_recent_v2 SELECT series_id, ts_s, 0, value FROM samples_recent;
DROP TABLE samples_recent;
ALTER TABLE samples_recent_v2 RENAME TO samples_recent;
CREATE TABLE samples_v2(
  series_id INTEGER NOT NULL, minute_s INTEGER NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL,
  PRIMARY KEY(series_id, minute_s, seq)) WITHOUT ROWID;
INSERT INTO samples_v2 SELECT series_id, minute_s, 0, data FROM samples;
DROP TABLE samples;
ALTER TABLE samples_v2 RENAME TO samples;
)sql";

// Version 2 files' samples_recent is converted to samples_ticks by the writer's first transaction
// (ConvertRecentSamples, history_store.cc); this reads its rows in the order they become ticks.
inline constexpr const char* kStoreRecentRowsSql =
    "SELECT series_id, ts_s, seq, value FROM samples_recent ORDER BY ts_s, seq, series_id";

// Findings of version 1 files gain their action column (added after the schema ran, where the
// table exists without it).
inline constexpr const char* kStoreAddFindingActionSql =
    "ALTER TABLE findings ADD COLUMN action TEXT NOT NULL DEFAULT ''";

// The WHERE and ORDER BY of HistoryReader::QueryFindings (?1: the earliest resolution in ms);
// open_only is answered from findings_open (StoreTest checks the plan).
inline std::string FindingsQueryTail(bool open_only) {
  return std::string(" FROM findings WHERE (resolved_ms = 0 OR resolved_ms >= ?1)") +
         (open_only ? " AND state = 'open'" : "") + " ORDER BY first_seen_ms, key";
}

}  // namespace gpudoctor
