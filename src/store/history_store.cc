// HistoryStore: opening (lock, refusal of what is not ours, schema) and the writer thread with its
// retries and the check that the file is still the one it writes.
#include "store/history_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <filesystem>
#include <iterator>
#include <mutex>
#include <optional>
#include <thread>

#include "core/thread_name.h"
#include "store/history_store_internal.h"
#include "store/sqlite_db.h"
#include "store/store_file.h"
#include "store/store_schema.h"
#include "store/tick_codec.h"

namespace gpudoctor {
namespace {

// Holds "<path>.lock" (flock) for the store's lifetime; the file names the holder's pid. Created
// with O_EXCL; an existing one is opened with O_NOFOLLOW and must be a plain file of ours with one
// link before it is written (a planted link to another file is never truncated).
class LockFile {
 public:
  static Result<std::unique_ptr<LockFile>> Acquire(const std::string& db_path) {
    std::string path = db_path + ".lock";
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      int e = errno;
      if (e == ELOOP) return PermissionDenied(path + ": is a symbolic link (never followed)");
      return StatusFromErrno(e, path + ": cannot create lock file");
    }
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
        st.st_uid != ::geteuid()) {
      ::close(fd);
      return PermissionDenied(path + ": not a plain lock file of this user; remove it");
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      char buf[32] = {};
      ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
      ::close(fd);
      std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "?";
      while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
      return PermissionDenied(db_path + ": database is in use by another gpudoctor (pid " + pid +
                              ", lock " + path + ")");
    }
    std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) == 0) {
      (void)!::pwrite(fd, pid.data(), pid.size(), 0);
    }
    return std::unique_ptr<LockFile>(new LockFile(fd));
  }
  ~LockFile() { ::close(fd_); }  // closing releases the flock

 private:
  explicit LockFile(int fd) : fd_(fd) {}
  int fd_;
};

// Only for a file of ours that SQLite reports corrupt (StoreFileKind::kCorrupt).
void MoveAside(const std::string& path, const std::string& why) {
  std::string aside = path + ".corrupt-" + std::to_string(static_cast<int64_t>(std::time(nullptr)));
  std::error_code ec;
  std::filesystem::rename(path, aside, ec);
  for (const char* suffix : {"-wal", "-shm"}) {
    std::error_code ec2;
    std::filesystem::rename(path + suffix, aside + suffix, ec2);
  }
  std::fprintf(stderr,
               "gpudoctor: history database %s %s; moved aside to %s, starting a new one%s\n",
               path.c_str(), why.c_str(), aside.c_str(),
               ec ? (" (rename failed: " + ec.message() + ")").c_str() : "");
}

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class SqliteHistoryStore final : public HistoryStore {
 public:
  SqliteHistoryStore(std::string path, StoreOptions options, std::unique_ptr<LockFile> lock,
                     std::unique_ptr<StoreWriter> writer, FileIdentity identity,
                     std::string open_error)
      : path_(std::move(path)),
        options_(options),
        lock_(std::move(lock)),
        writer_(std::move(writer)),
        identity_(identity),
        write_error_(std::move(open_error)),
        backoff_ms_(std::max(1, options.retry_initial_ms)) {
    if (!writer_) next_retry_ms_ = SteadyMs() + backoff_ms_;
    thread_ = std::thread([this] { Run(); });
  }
  ~SqliteHistoryStore() override { Close(); }

  void Append(std::shared_ptr<const TickResult> tick) override {
    if (!tick) return;
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_) return;
    const bool was_empty = queue_.empty();
    if (was_empty) oldest_queued_ = std::chrono::steady_clock::now();
    if (tick->events_only || !tick->transitions.empty() || !tick->events.empty()) urgent_ = true;
    queue_.push_back(std::move(tick));
    ++enqueued_;
    while (static_cast<int>(queue_.size()) > std::max(1, options_.max_queued_ticks)) {
      queue_.pop_front();
      if (one_by_one_ > 0) --one_by_one_;
      ++dropped_;
      ++written_;  // accounted for: Flush() does not wait for it
    }
    // The writer sleeps without a deadline while the queue is empty, and until the oldest
    // tick's commit time while it is not: woken for the first tick and when the batch is due
    // early, not for every quiet tick.
    if (was_empty || WriteDue(std::chrono::steady_clock::now())) cv_.notify_one();
  }

  Status Ack(const std::string& key, int64_t unix_ms, const std::string& note) override {
    return AckKey(path_, key, unix_ms, note);
  }

  void Close() override {
    {
      std::lock_guard<std::mutex> l(mu_);
      stopping_ = true;
      cv_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
    // The GPU ledger's newest last_seen_s (kept back between its once-a-minute writes).
    if (writer_) (void)writer_->FlushLedger();
    writer_.reset();
  }

  void Flush() override {
    std::unique_lock<std::mutex> l(mu_);
    WaitForQueued(l, std::nullopt);
  }

  bool FlushWithin(std::chrono::milliseconds limit) override {
    std::unique_lock<std::mutex> l(mu_);
    if (WaitForQueued(l, limit)) return true;
    dropped_ += queue_.size();
    written_ += queue_.size();
    queue_.clear();
    one_by_one_ = 0;
    drop_in_flight_ = in_flight_ > 1;  // a batch in one transaction: dropped if it fails
    return false;
  }

  bool CommitQueued(std::chrono::milliseconds limit) override {
    std::unique_lock<std::mutex> l(mu_);
    return WaitForQueued(l, limit);
  }

  uint64_t dropped_ticks() const override {
    std::lock_guard<std::mutex> l(mu_);
    return dropped_;
  }

  std::string write_error() const override {
    std::lock_guard<std::mutex> l(mu_);
    return write_error_;
  }

  StoreHealth health() const override {
    std::lock_guard<std::mutex> l(mu_);
    StoreHealth h;
    h.writing = write_error_.empty();
    h.error = write_error_;
    h.reopened = reopened_;
    h.reopen_reason = reopen_reason_;
    h.since_reopen_s = reopened_ > 0 ? (SteadyMs() - reopened_ms_) / 1000.0 : -1;
    h.dropped_ticks = dropped_;
    return h;
  }
  std::string path() const override { return path_; }

 private:
  // Writer thread: the file at path_ must still be the one the connection writes; a deleted or
  // replaced file is closed (nothing more goes into the unlinked inode) and reopened.
  void CheckIdentity(std::vector<HistoryEvent>& notes, int64_t unix_ms) {
    if (!writer_) return;
    FileIdentity now;
    bool exists = IdentityOf(path_, &now);
    if (exists && now == identity_) return;
    std::string why = exists ? "was replaced by another file" : "was deleted";
    writer_.reset();
    std::fprintf(stderr, "gpudoctor: history database %s %s while watch ran; reopening\n",
                 path_.c_str(), why.c_str());
    {
      std::lock_guard<std::mutex> l(mu_);
      ++reopened_;
      reopen_reason_ = why;
      reopened_ms_ = SteadyMs();
      write_error_ = path_ + " " + why + "; reopening";
    }
    HistoryEvent e;
    e.unix_ms = unix_ms;
    e.kind = "history_reopened";
    e.detail = path_ + " " + why + " while watch ran; earlier history is not in this file";
    notes.push_back(std::move(e));
    next_retry_ms_ = 0;  // at once
    backoff_ms_ = std::max(1, options_.retry_initial_ms);
  }

  // Writer thread, while no connection is open and the backoff has passed.
  void TryOpen(std::vector<HistoryEvent>& notes, int64_t unix_ms) {
    if (writer_ || SteadyMs() < next_retry_ms_) return;
    bool transient = false;
    FileIdentity id;
    auto db = OpenStoreForWriting(path_, &transient, &id);
    Status s = db.ok() ? Status::Ok() : db.status();
    std::unique_ptr<StoreWriter> w;
    if (db.ok()) {
      auto created = StoreWriter::Create(std::move(*db), options_);
      if (created.ok()) {
        w = std::move(*created);
      } else {
        s = created.status();
      }
    }
    std::lock_guard<std::mutex> l(mu_);
    if (!w) {
      // Also a path refused for good (replaced by a foreign file): nothing is written there;
      // retried, slowly, in case an operator puts the right file back.
      write_error_ = s.message();
      next_retry_ms_ = SteadyMs() + backoff_ms_;
      backoff_ms_ = std::min(std::max(1, options_.retry_max_ms), backoff_ms_ * 2);
      return;
    }
    if (!write_error_.empty()) {
      HistoryEvent e;
      e.unix_ms = unix_ms;
      e.kind = "history_resumed";
      e.detail = "history writes resumed after: " + write_error_ + " (" + std::to_string(dropped_) +
                 " ticks not recorded so far)";
      notes.push_back(std::move(e));
    }
    writer_ = std::move(w);
    identity_ = id;
    write_error_.clear();
    backoff_ms_ = std::max(1, options_.retry_initial_ms);
  }

  // Under `l` (on mu_): has the writer take what is queued now and waits until every tick queued
  // before the call is written or lost (or the writer stopped), at most `limit`. False on timeout.
  bool WaitForQueued(std::unique_lock<std::mutex>& l,
                     std::optional<std::chrono::milliseconds> limit) {
    uint64_t target = enqueued_;
    CommitAsk ask(*this);
    auto done = [&] { return written_ >= target || !thread_running_; };
    if (!limit) {
      done_cv_.wait(l, done);
      return true;
    }
    return done_cv_.wait_for(l, *limit, done);
  }

  // WaitForQueued: while one waits, queued ticks are due at once.
  struct CommitAsk {
    explicit CommitAsk(SqliteHistoryStore& store) : store(store) {
      ++store.commit_asks_;
      store.cv_.notify_one();
    }
    ~CommitAsk() { --store.commit_asks_; }  // under mu_, as the constructor
    SqliteHistoryStore& store;
  };

  // Under mu_, queue_ not empty: whether the writer should take the queue now.
  bool WriteDue(std::chrono::steady_clock::time_point now) const {
    return stopping_ || urgent_ || commit_asks_ > 0 || one_by_one_ > 0 ||
           options_.commit_interval_ms <= 0 ||
           queue_.size() >=
               static_cast<size_t>(std::max(
                   1, std::min(options_.commit_max_ticks, options_.max_queued_ticks / 2))) ||
           now >= CommitTime();
  }
  std::chrono::steady_clock::time_point CommitTime() const {
    return oldest_queued_ + std::chrono::milliseconds(std::max(0, options_.commit_interval_ms));
  }

  // Writer thread: `tick` in its own transaction, after the store's own `notes` (reopened,
  // resumed) if any; a file SQLite reports corrupt is moved aside.
  Status WriteOne(const TickResult& tick, std::vector<HistoryEvent>& notes) {
    Status s = writer_ ? Status::Ok() : IoError(write_error());
    if (writer_ && !notes.empty()) {
      TickResult note;
      note.unix_ms = tick.unix_ms;
      note.mono_ms = tick.mono_ms;
      note.events = std::move(notes);
      note.events_only = true;
      notes.clear();
      s = writer_->WriteTick(note);
    }
    if (writer_ && s.ok()) s = writer_->WriteTick(tick);
    if (writer_ && s.code() == StatusCode::kParseError) {
      // SQLite reports the open file (ours: checked when opened) corrupt: only then is a file
      // moved aside.
      writer_.reset();
      MoveAside(path_, "is corrupt (" + s.message() + ")");
      next_retry_ms_ = 0;
    }
    return s;
  }

  // Writer thread: `count` ticks written (s ok) or lost (s the reason).
  void Account(size_t count, const Status& s) {
    std::lock_guard<std::mutex> l(mu_);
    if (writer_ || !s.ok()) write_error_ = s.ok() ? std::string() : s.message();
    if (!s.ok()) dropped_ += count;
    written_ += count;
    in_flight_ = 0;
    drop_in_flight_ = false;
    done_cv_.notify_all();
  }

  // Writer thread: more than one tick in one transaction when the file is open and unchanged
  // and the store has no notes of its own to write first. Otherwise, or when that transaction
  // fails (rolled back whole), the ticks go back to the front of the queue to be written one by
  // one, as before batching: a failure loses only the ticks it fails on, and FlushWithin can
  // still drop what is left when a write blocks (another process holding the file's lock).
  void WriteBatch(std::vector<std::shared_ptr<const TickResult>>& batch) {
    CheckIdentity(notes_, batch.front()->unix_ms);
    TryOpen(notes_, batch.front()->unix_ms);
    if (batch.size() == 1) return Account(1, WriteOne(*batch.front(), notes_));
    if (writer_ && notes_.empty()) {
      std::vector<const TickResult*> ticks;
      ticks.reserve(batch.size());
      for (const auto& t : batch) ticks.push_back(t.get());
      if (writer_->WriteTicks(ticks).ok()) return Account(batch.size(), Status::Ok());
    }
    std::lock_guard<std::mutex> l(mu_);
    if (drop_in_flight_) {  // FlushWithin gave up on them while they were written
      dropped_ += batch.size();
      written_ += batch.size();
      done_cv_.notify_all();
    } else {
      queue_.insert(queue_.begin(), std::make_move_iterator(batch.begin()),
                    std::make_move_iterator(batch.end()));
      one_by_one_ += batch.size();
    }
    in_flight_ = 0;
    drop_in_flight_ = false;
  }

  void Run() {
    NameThisThread("gd-store");
    std::vector<std::shared_ptr<const TickResult>> batch;
    for (;;) {
      {
        std::unique_lock<std::mutex> l(mu_);
        for (;;) {
          if (queue_.empty()) {
            if (stopping_) {  // stopping and drained
              thread_running_ = false;
              done_cv_.notify_all();
              return;
            }
            cv_.wait(l);
          } else if (WriteDue(std::chrono::steady_clock::now())) {
            break;
          } else {
            cv_.wait_until(l, CommitTime());
          }
        }
        size_t take = one_by_one_ > 0 ? 1 : queue_.size();
        one_by_one_ -= std::min(one_by_one_, take);
        batch.assign(std::make_move_iterator(queue_.begin()),
                     std::make_move_iterator(queue_.begin() + static_cast<ptrdiff_t>(take)));
        queue_.erase(queue_.begin(), queue_.begin() + static_cast<ptrdiff_t>(take));
        if (queue_.empty()) urgent_ = false;
        in_flight_ = take;
      }
      WriteBatch(batch);
      batch.clear();
    }
  }

  std::string path_;
  StoreOptions options_;
  std::unique_ptr<LockFile> lock_;
  std::unique_ptr<StoreWriter> writer_;  // null while the database cannot be opened
  FileIdentity identity_;                // of the file writer_ writes
  mutable std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  uint64_t enqueued_ = 0, written_ = 0;
  bool thread_running_ = true;
  std::deque<std::shared_ptr<const TickResult>> queue_;
  std::chrono::steady_clock::time_point oldest_queued_;  // when queue_'s first tick came
  bool urgent_ = false;              // a queued tick has transitions or events: commit at once
  int commit_asks_ = 0;              // Flush / FlushWithin / CommitQueued waiting
  size_t one_by_one_ = 0;            // queue_'s first ticks to write singly (a batch that failed)
  size_t in_flight_ = 0;             // ticks the writer took and has not accounted for
  bool drop_in_flight_ = false;      // FlushWithin timed out: a batch that fails is dropped
  std::vector<HistoryEvent> notes_;  // writer thread: the store's own, written before a tick
  bool stopping_ = false;
  uint64_t dropped_ = 0;
  std::string write_error_;
  uint64_t reopened_ = 0;
  std::string reopen_reason_;
  int64_t reopened_ms_ = 0;
  int64_t next_retry_ms_ = 0;  // writer thread only
  int backoff_ms_;             // writer thread only
  std::thread thread_;
};

}  // namespace

void HistoryStore::AppendEvents(std::vector<HistoryEvent> events, int64_t mono_ms, uint64_t tick) {
  if (events.empty()) return;
  auto record = std::make_shared<TickResult>();
  record->tick = tick;
  for (const HistoryEvent& e : events) record->unix_ms = std::max(record->unix_ms, e.unix_ms);
  record->mono_ms = mono_ms;
  record->events = std::move(events);
  record->events_only = true;
  Append(std::move(record));
}

namespace {
Status ConvertRows(SqliteDb& db);
}  // namespace

Status ConvertRecentSamples(SqliteDb& db) {
  auto exists = db.QueryInt(
      "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='samples_recent'");
  if (!exists.ok()) return exists.status();
  if (*exists == 0) return Status::Ok();
  if (Status s = ConvertRows(db); !s.ok()) return s;  // its statements are finalized here
  return db.Exec("DROP TABLE samples_recent");
}

namespace {
Status ConvertRows(SqliteDb& db) {
  auto rows = db.Prepare(kStoreRecentRowsSql);
  if (!rows.ok()) return rows.status();
  auto insert = db.Prepare("INSERT INTO samples_ticks(ts_s, data) VALUES(?, ?)");
  if (!insert.ok()) return insert.status();
  std::string blob;
  std::optional<TickEncoder> tick;
  int64_t cur_ts = 0, cur_seq = 0;
  auto write = [&]() -> Status {
    if (!tick) return Status::Ok();
    insert->Reset();
    insert->Bind(1, cur_ts).BindBlob(2, blob);
    if (insert->Step() != SQLITE_DONE) return db.Error("convert recent samples");
    tick.reset();
    return Status::Ok();
  };
  int rc;
  while ((rc = rows->Step()) == SQLITE_ROW) {
    const int64_t ts = rows->Int(1), seq = rows->Int(2);
    if (tick && (ts != cur_ts || seq != cur_seq)) {
      if (Status s = write(); !s.ok()) return s;
    }
    if (!tick) {
      tick.emplace(&blob);
      cur_ts = ts;
      cur_seq = seq;
    }
    tick->Add(rows->Int(0), rows->Double(3));
  }
  if (rc != SQLITE_DONE) return db.Error("read recent samples");
  return write();
}
}  // namespace

Result<std::unique_ptr<SqliteDb>> OpenStoreForWriting(const std::string& path, bool* transient,
                                                      FileIdentity* identity) {
  *transient = false;
  if (Status s = CheckStoreDirectory(path); !s.ok()) return s;
  if (Status s = CheckStoreCompanions(path); !s.ok()) return s;
  StoreFileCheck check = InspectStoreFile(path, /*deep=*/true);
  if (check.kind == StoreFileKind::kCorrupt) {
    MoveAside(path, check.reason);
    check = InspectStoreFile(path, true);
  }
  switch (check.kind) {
    case StoreFileKind::kMissing:
      // A -wal or -shm without its database belongs to a deleted file: never let SQLite apply
      // it to the new one (CheckStoreCompanions: they are plain files).
      ::unlink((path + "-wal").c_str());
      ::unlink((path + "-shm").c_str());
      if (Status s = CreatePrivateFile(path); !s.ok()) {
        *transient = s.code() != StatusCode::kPermissionDenied;
        return s;
      }
      break;
    case StoreFileKind::kEmpty:
    case StoreFileKind::kOurs:
      break;
    case StoreFileKind::kTransient:
      *transient = true;
      return IoError(path + " " + check.reason);
    default:
      return StoreFileRefusal(path, check);
  }
  auto db = SqliteDb::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW);
  if (!db.ok()) {
    *transient = true;
    return db.status();
  }
  SqliteDb& d = **db;
  // Whatever fails from here is a lock, a full disk or I/O: the file was checked above.
  *transient = true;
  if (!IdentityOf(path, identity)) return IoError(path + ": vanished while opening");
  for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL",
                             "PRAGMA foreign_keys=OFF", "PRAGMA journal_size_limit=16777216",
                             // 1 MiB held 0.6 MiB more of `watch`'s heap for ≈ 2% of its
                             // CPU per tick (docs/cost.md, "`watch` RSS, fifth round").
                             kStorePageCachePragma}) {
    if (Status s = d.Exec(pragma); !s.ok()) return s;
  }
  std::string init = "BEGIN IMMEDIATE;";
  if (check.kind == StoreFileKind::kOurs && check.user_version == 1) init += kStoreMigrateV1Sql;
  init += kStoreSchemaSql;
  if (Status s = d.Exec(init); !s.ok()) {
    (void)d.Exec("ROLLBACK");
    return s;
  }
  // Version 2 (and migrated version 1) files: one row per point becomes one row per tick.
  if (Status s = ConvertRecentSamples(d); !s.ok()) {
    (void)d.Exec("ROLLBACK");
    return s;
  }
  auto has_action =
      d.QueryInt("SELECT count(*) FROM pragma_table_info('findings') WHERE name='action'");
  if (!has_action.ok() || *has_action == 0) {
    if (Status s = d.Exec(kStoreAddFindingActionSql); !s.ok()) {
      (void)d.Exec("ROLLBACK");
      return s;
    }
  }
  init = "PRAGMA application_id=" + std::to_string(kStoreApplicationId) +
         ";PRAGMA user_version=" + std::to_string(kStoreSchemaVersion) +
         ";INSERT OR REPLACE INTO meta VALUES('schema_version','" +
         std::to_string(kStoreSchemaVersion) +
         "');INSERT OR IGNORE INTO meta VALUES('created_unix_s','" +
         std::to_string(static_cast<int64_t>(std::time(nullptr))) + "');COMMIT;";
  if (Status s = d.Exec(init); !s.ok()) {
    (void)d.Exec("ROLLBACK");
    return s;
  }
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) {
    auto st = d.Prepare("INSERT OR REPLACE INTO meta VALUES('hostname', ?)");
    if (st.ok()) {
      st->Bind(1, std::string_view(host));
      st->Step();
    }
  }
  *transient = false;
  return db;
}

Result<std::unique_ptr<HistoryStore>> HistoryStore::Open(const std::string& path,
                                                         const StoreOptions& options) {
  if (Status s = StoreWriter::CheckOptions(options); !s.ok()) return s;
  if (Status s = CheckStoreDirectory(path); !s.ok()) return s;
  if (Status s = CheckStoreCompanions(path); !s.ok()) return s;
  // What is not ours is refused before anything (the lock file) is created beside it.
  StoreFileCheck first = InspectStoreFile(path, /*deep=*/false);
  if (first.kind == StoreFileKind::kForeign || first.kind == StoreFileKind::kNewer ||
      first.kind == StoreFileKind::kUnsafe) {
    return StoreFileRefusal(path, first);
  }
  auto lock = LockFile::Acquire(path);
  if (!lock.ok()) return lock.status();
  bool transient = false;
  FileIdentity identity;
  auto db = OpenStoreForWriting(path, &transient, &identity);
  std::unique_ptr<StoreWriter> writer;
  std::string open_error;
  Status failed = db.ok() ? Status::Ok() : db.status();
  if (db.ok()) {
    auto w = StoreWriter::Create(std::move(*db), options);
    if (w.ok()) {
      writer = std::move(*w);
    } else {
      failed = w.status();
      transient = true;
    }
  }
  if (failed.ok()) {
  } else if (transient) {
    // Keep running without history; the writer thread retries with backoff.
    open_error = failed.message();
    std::fprintf(stderr, "gpudoctor: history database %s: %s; running without history, retrying\n",
                 path.c_str(), open_error.c_str());
  } else {
    return failed;
  }
  return std::unique_ptr<HistoryStore>(new SqliteHistoryStore(
      path, options, std::move(*lock), std::move(writer), identity, std::move(open_error)));
}

}  // namespace gpudoctor
