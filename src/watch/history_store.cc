// HistoryStore: opening (lock, foreign/corrupt files moved aside, schema) and the writer thread.
#include "watch/history_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "watch/history_store_internal.h"
#include "watch/sample_codec.h"
#include "watch/sqlite_db.h"
#include "watch/store_schema.h"

namespace gpudoctor {
namespace {

std::string Errno(int e) { return std::strerror(e); }

// Holds "<path>.lock" (flock) for the store's lifetime; the file names the holder's pid.
class LockFile {
 public:
  static Result<std::unique_ptr<LockFile>> Acquire(const std::string& db_path) {
    std::string path = db_path + ".lock";
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      int e = errno;
      if (e == EACCES || e == EPERM || e == EROFS) {
        return PermissionDenied(path + ": cannot create lock file: " + Errno(e));
      }
      return IoError(path + ": cannot create lock file: " + Errno(e));
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

// Checks an existing file: empty string when usable, else why not.
std::string Diagnose(const std::string& path) {
  auto db = SqliteDb::Open(path, SQLITE_OPEN_READWRITE);
  if (!db.ok()) return "cannot be opened (" + db.status().message() + ")";
  auto app = (*db)->QueryInt("PRAGMA application_id");
  if (!app.ok()) return "is not an SQLite database or is corrupt (" + app.status().message() + ")";
  auto tables = (*db)->QueryInt("SELECT count(*) FROM sqlite_master");
  if (!tables.ok()) return "is corrupt (" + tables.status().message() + ")";
  if (*app != kStoreApplicationId) {
    if (*app == 0 && *tables == 0) return "";  // an empty database: adopt it
    return "is not a gpudoctor database (application_id " + std::to_string(*app) + ")";
  }
  auto version = (*db)->QueryInt("PRAGMA user_version");
  if (!version.ok()) return "is corrupt (" + version.status().message() + ")";
  if (*version > kStoreSchemaVersion) {
    return "has a newer schema version " + std::to_string(*version);
  }
  auto check = (*db)->Prepare("PRAGMA quick_check");
  if (!check.ok()) return "is corrupt (" + check.status().message() + ")";
  if (check->Step() != SQLITE_ROW) return "is corrupt (quick_check failed)";
  std::string verdict = check->Text(0);
  if (verdict != "ok") return "failed its integrity check (" + verdict.substr(0, 200) + ")";
  return "";
}

Status PrepareDirectory(const std::string& path) {
  std::filesystem::path p(path);
  if (path.empty()) return InvalidArgument("empty database path");
  std::filesystem::path dir = p.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) {
    std::filesystem::create_directories(dir, ec);
    if (ec) return PermissionDenied(dir.string() + ": cannot create directory: " + ec.message());
  } else if (!std::filesystem::is_directory(dir, ec)) {
    return InvalidArgument(dir.string() + ": not a directory");
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    return PermissionDenied(dir.string() + ": directory not writable: " + Errno(errno));
  }
  if (std::filesystem::is_directory(p, ec)) return InvalidArgument(path + ": is a directory");
  return Status::Ok();
}

class SqliteHistoryStore final : public HistoryStore {
 public:
  SqliteHistoryStore(std::string path, StoreOptions options, std::unique_ptr<LockFile> lock,
                     std::unique_ptr<StoreWriter> writer)
      : path_(std::move(path)),
        options_(options),
        lock_(std::move(lock)),
        writer_(std::move(writer)) {
    thread_ = std::thread([this] { Run(); });
  }
  ~SqliteHistoryStore() override { Close(); }

  void Append(std::shared_ptr<const TickResult> tick) override {
    if (!tick) return;
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_) return;
    queue_.push_back(std::move(tick));
    ++enqueued_;
    while (static_cast<int>(queue_.size()) > std::max(1, options_.max_queued_ticks)) {
      queue_.pop_front();
      ++dropped_;
      ++written_;  // accounted for: Flush() does not wait for it
    }
    cv_.notify_one();
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
    writer_.reset();
  }

  void Flush() override {
    std::unique_lock<std::mutex> l(mu_);
    uint64_t target = enqueued_;
    done_cv_.wait(l, [&] { return written_ >= target || !thread_running_; });
  }

  uint64_t dropped_ticks() const override {
    std::lock_guard<std::mutex> l(mu_);
    return dropped_;
  }

  std::string write_error() const override {
    std::lock_guard<std::mutex> l(mu_);
    return write_error_;
  }
  std::string path() const override { return path_; }

 private:
  void Run() {
    for (;;) {
      std::shared_ptr<const TickResult> tick;
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) {  // stopping and drained
          thread_running_ = false;
          done_cv_.notify_all();
          return;
        }
        tick = std::move(queue_.front());
        queue_.pop_front();
      }
      Status s = writer_->WriteTick(*tick);
      std::lock_guard<std::mutex> l(mu_);
      write_error_ = s.ok() ? std::string() : s.message();
      if (!s.ok()) ++dropped_;
      ++written_;
      done_cv_.notify_all();
    }
  }

  std::string path_;
  StoreOptions options_;
  std::unique_ptr<LockFile> lock_;
  std::unique_ptr<StoreWriter> writer_;
  mutable std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  uint64_t enqueued_ = 0, written_ = 0;
  bool thread_running_ = true;
  std::deque<std::shared_ptr<const TickResult>> queue_;
  bool stopping_ = false;
  uint64_t dropped_ = 0;
  std::string write_error_;
  std::thread thread_;
};

}  // namespace

Result<std::unique_ptr<SqliteDb>> OpenStoreForWriting(const std::string& path) {
  if (Status s = PrepareDirectory(path); !s.ok()) return s;
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && std::filesystem::file_size(path, ec) > 0) {
    std::string why = Diagnose(path);
    if (!why.empty()) MoveAside(path, why);
  }
  auto db = SqliteDb::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!db.ok()) return db.status();
  SqliteDb& d = **db;
  for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL",
                             "PRAGMA foreign_keys=OFF", "PRAGMA auto_vacuum=INCREMENTAL"}) {
    if (Status s = d.Exec(pragma); !s.ok()) return s;
  }
  std::string init = "BEGIN IMMEDIATE;" + std::string(kStoreSchemaSql) +
                     "PRAGMA application_id=" + std::to_string(kStoreApplicationId) +
                     ";PRAGMA user_version=" + std::to_string(kStoreSchemaVersion) +
                     ";INSERT OR IGNORE INTO meta VALUES('schema_version','" +
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
  return db;
}

Result<std::unique_ptr<HistoryStore>> HistoryStore::Open(const std::string& path,
                                                         const StoreOptions& options) {
  if (Status s = PrepareDirectory(path); !s.ok()) return s;
  auto lock = LockFile::Acquire(path);
  if (!lock.ok()) return lock.status();
  auto db = OpenStoreForWriting(path);
  if (!db.ok()) return db.status();
  auto writer = StoreWriter::Create(std::move(*db), options);
  if (!writer.ok()) return writer.status();
  return std::unique_ptr<HistoryStore>(
      new SqliteHistoryStore(path, options, std::move(*lock), std::move(*writer)));
}

}  // namespace gpudoctor
