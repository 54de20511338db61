// HistoryStore: the embedded SQLite history of `gpudoctor watch`. One file per node.
//
// Writing: Append() queues a tick and returns at once; one writer thread owns the write
// connection (WAL, prepared statements, one transaction per tick). A full disk, a lock held by
// another process or an I/O error never blocks or crashes the caller: the tick is dropped,
// health() says why, and writing resumes by itself when the cause clears.
// Time: stored samples are never replaced: a point at a second already stored (the wall clock
// stepped back) is kept beside the first. Retention (raw samples for raw_retention_s, then only
// 1-minute rollups for rollup_retention_s) measures age on a clock that advances with the
// monotonic clock from the newest stored time, so a wall-clock step forward deletes nothing.
// Opening (store_file.h): the directory must exist and be private; a path that is not ours
// (foreign, newer schema, symlink, FIFO, device) is refused with an error naming it and nothing
// is written there; a transient failure (locked, disk full, I/O error) opens the store without a
// database and retries with backoff; only a file of ours that SQLite reports corrupt is renamed
// "<path>.corrupt-<unix_s>" (one log line) and a fresh one started. A second daemon on the same
// file is refused (an exclusive lock on "<path>.lock"). While running, the file's device and inode
// are checked before every write: a database deleted or replaced under the daemon is reopened
// (an "history_reopened" event in the new file, health().reopened counts it).
// Reading: HistoryReader opens read-only connections and may be used from any thread, also
// while a daemon writes (WAL readers never block the writer).
//
// Thread-safety: Append/Close from one thread (the daemon's tick loop); readers: any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "watch/watch_types.h"

namespace gpudoctor {

struct StoreOptions {
  int64_t raw_retention_s = 24 * 3600;
  int64_t rollup_retention_s = 30 * 24 * 3600;
  // Raw ticks (one row each) are packed into per-minute blobs a block of this many seconds at a
  // time, when a tick enters the next block: readers see the block's ticks as tick rows until
  // then. A multiple of 60 that divides 3600. Per minute (60), each series' last page of the
  // packed table and of its rollups was rewritten every minute: at 24 h of history ~1,300 pages
  // (5 MiB of WAL, twice with the checkpoint) a minute; per 10 minutes a tenth (docs/cost.md).
  int64_t pack_block_s = 600;
  int max_queued_ticks = 120;  // beyond that the oldest queued tick is dropped (counted)
  // Quiet ticks (no finding transition, no event) are committed together, in one transaction,
  // once the oldest of them has waited this long. A tick with a transition or an event is
  // committed at once, with what was queued before it; so is everything queued when a reader in
  // this process asks (CommitQueued), on Flush and on Close. 0: each tick in its own transaction.
  // A SIGKILL or a crash loses at most this much of quiet ticks' samples; another process
  // reading the file sees them this much later. A transaction a tick cost ~9 system calls (the
  // WAL's shared-memory locks, the commit frame, the file identity check) and about 1.5 times the
  // bytes written (docs/cost.md, sixteenth round).
  int commit_interval_ms = 5000;
  // ... or once this many are queued, whichever comes first: short intervals (--interval 0.2)
  // keep at most this many ticks (each a whole report) in memory.
  int commit_max_ticks = 10;
  int retry_initial_ms = 1000;  // reopening after a transient failure: first wait, doubled
  int retry_max_ms = 60000;     // up to this
};

// What the daemon and /healthz report about the history.
struct StoreHealth {
  bool writing = true;         // false while the database cannot be opened or written
  std::string error;           // why not, naming the file and the cause; empty while writing
  uint64_t reopened = 0;       // times the file was found deleted or replaced and reopened
  std::string reopen_reason;   // the last one: "was deleted", "was replaced by another file"
  double since_reopen_s = -1;  // monotonic seconds since that; -1: never
  uint64_t dropped_ticks = 0;
};

class HistoryStore {
 public:
  // Errors (path refused for good) name the path and the reason: directory missing or writable
  // by others, not a gpudoctor database, newer schema, symlink, locked by another gpudoctor
  // (pid N). A transient failure is not an error: the store starts degraded (health()).
  static Result<std::unique_ptr<HistoryStore>> Open(const std::string& path,
                                                    const StoreOptions& options);
  virtual ~HistoryStore() = default;

  // Queues the tick's metric points, finding states (upserted by key), transitions and events.
  // Written within StoreOptions::commit_interval_ms; at once when it has transitions or events.
  virtual void Append(std::shared_ptr<const TickResult> tick) = 0;
  // Queues events that happened between ticks (notifier deliveries, the watch start marker) as
  // one record stamped with the newest event's time. `mono_ms` is the monotonic time of the tick
  // they belong to; 0 when none (then the record never moves the retention clock).
  void AppendEvents(std::vector<HistoryEvent> events, int64_t mono_ms, uint64_t tick = 0);
  // Records an operator acknowledgement / silence for the finding key (also from other
  // processes: `gpudoctor ack` writes through its own connection).
  virtual Status Ack(const std::string& key, int64_t unix_ms, const std::string& note) = 0;
  // Writes what is queued and stops the writer (SIGTERM path). Idempotent.
  virtual void Close() = 0;
  // Blocks until every tick queued before the call has been written (or failed). For tests and
  // orderly reloads; bounded by the writes themselves (busy_timeout), never waits for new ticks.
  virtual void Flush() = 0;
  // The same, bounded: waits at most `limit`, then drops what is still queued (counted in
  // dropped_ticks) so that Close() returns within one write (busy_timeout). False when it had to
  // drop. The SIGTERM path: systemd kills the unit TimeoutStopSec after SIGTERM.
  virtual bool FlushWithin(std::chrono::milliseconds limit) = 0;
  // Asks the writer to commit what is queued now (quiet ticks wait up to
  // StoreOptions::commit_interval_ms) and waits at most `limit` for it. Nothing is dropped: false
  // when the writes did not finish in time. For readers in this process (the HTTP API) that must
  // see every tick up to now. Thread-safe.
  virtual bool CommitQueued(std::chrono::milliseconds limit) = 0;
  // How long SIGTERM waits for queued history (FlushWithin) before the notifiers' grace.
  static constexpr std::chrono::milliseconds kShutdownFlush{8000};
  // Ticks dropped because the queue was full (max_queued_ticks) or a write failed.
  virtual uint64_t dropped_ticks() const = 0;
  // Why history is not being written now ("disk full: database or disk is full", "database is
  // locked"); empty while writes succeed. Same as health().error.
  virtual std::string write_error() const = 0;
  virtual StoreHealth health() const = 0;
  virtual std::string path() const = 0;
};

// One series: points are (unix seconds, value), oldest first.
struct SeriesQuery {
  std::string metric;      // a gpudoctor_* name
  std::optional<int> gpu;  // GPU index; nullopt: host-level series (gpu -1) or all GPUs
  std::string labels;      // LabelsKey; empty: any
  int64_t since_unix_s = 0;
  int64_t until_unix_s = 0;  // 0: now
  int max_points = 2000;     // longer ranges are downsampled (rollups beyond raw retention)
};

struct Series {
  std::string metric;
  std::optional<int> gpu;
  std::string labels;
  std::vector<std::pair<int64_t, double>> points;
};

struct FindingsQuery {
  int64_t since_unix_s = 0;  // episodes open at or after this time
  bool open_only = false;
  size_t max_rows = 0;  // > 0: more episodes than this is InvalidArgument (fleet's bound)
  // Only the key and the acknowledgement (acked, acked_ms, ack_note, silenced_until_ms) of each
  // episode are read, the rest left default: `watch` merges acks every 5 ticks and parsed every
  // open finding's evidence JSON to do so.
  bool acks_only = false;
};

// While `watch` writes, a GPU's last_seen_s lags its newest samples by less than this: the
// ledger row is rewritten when the GPU is new or changed and otherwise once a minute; closing
// the store writes the newest. Readers that bound a query by last_seen_s widen it by this.
inline constexpr int64_t kGpuLedgerLagS = 60;

// One GPU the history has seen (the `gpus` ledger); serial "" when the card has none.
struct StoredGpu {
  std::string serial, uuid, pci_bus_id, model;
  std::optional<int> index;
  int64_t first_seen_s = 0, last_seen_s = 0;
};

// The one way to read a history file (history, the HTTP API, bundle, fleet --db): nothing else
// carries a copy of the schema's SQL. Read-only; a file that is not a gpudoctor database of a
// schema this build reads is refused naming the path. With a deadline, every statement that runs
// past it is interrupted and fails with a timeout naming the path. Not thread-safe (one per
// thread).
class HistoryReader {
 public:
  static Result<std::unique_ptr<HistoryReader>> Open(const std::string& path,
                                                     TimePoint deadline = TimePoint::max());
  // meta.hostname: the node that wrote the file; NotFound when absent.
  virtual Result<std::string> Hostname() = 0;
  // The GPU ledger, at most `max_rows` rows (InvalidArgument beyond, naming the path).
  virtual Result<std::vector<StoredGpu>> QueryGpus(size_t max_rows) = 0;
  virtual ~HistoryReader() = default;
  virtual Result<std::vector<Series>> QuerySeries(const SeriesQuery& q) = 0;
  virtual Result<std::vector<std::string>> ListMetrics() = 0;
  virtual Result<std::vector<TrackedFinding>> QueryFindings(const FindingsQuery& q) = 0;
  // Events at or after since_unix_s, oldest first; with newest_limit > 0 only the newest
  // newest_limit of them (the database returns no more: an Xid storm stays cheap to read).
  virtual Result<std::vector<HistoryEvent>> QueryEvents(int64_t since_unix_s,
                                                        size_t newest_limit = 0) = 0;
};

// Operator writes (`gpudoctor ack` / `gpudoctor silence`) through a short-lived connection with a
// bounded busy_timeout, also while a daemon writes: mark the newest episode of every finding with
// this id (on GPU index `gpu` when given) that is not resolved (ack) or any state (silence), and
// record an "ack" / "silence" event. Returns how many findings were marked; NotFound naming the
// id and file when none matches or the database does not exist.
// After a commit that marked findings, both touch OperatorMarksPath(db_path) (best effort: a
// `watch` that sees it unchanged asks the database less often, watch/ack_poll.h).
Result<int> AckFindings(const std::string& db_path, const std::string& id, std::optional<int> gpu,
                        int64_t unix_ms, const std::string& note);
Result<int> SilenceFindings(const std::string& db_path, const std::string& id,
                            std::optional<int> gpu, int64_t until_unix_ms, int64_t unix_ms);

// The file beside the database that `ack` and `silence` rewrite after each commit: DB_PATH-acks.
std::string OperatorMarksPath(const std::string& db_path);

// The JSON of `gpudoctor history --metric ... --json` and GET /api/v1/history:
// {"metric","gpu","points":[[unix_seconds,value],...]} for one series; an array for several.
nlohmann::ordered_json SeriesToJson(const std::vector<Series>& series);
// The same JSON as SeriesToJson(series).dump(), written straight into one reserved string (about
// 26 bytes a point) without building the tree (~100 bytes a point): what GET /api/v1/history
// sends. Text that is not UTF-8 is written with U+FFFD in its place (dump() would throw).
std::string SeriesJsonText(const std::vector<Series>& series);
// One element of `history --findings --json` and GET /api/v1/findings.
nlohmann::ordered_json TrackedFindingToJson(const TrackedFinding& f);
nlohmann::ordered_json HistoryEventToJson(const HistoryEvent& e);

}  // namespace gpudoctor
