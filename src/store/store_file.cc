#include "store/store_file.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "store/store_schema.h"

namespace gpudoctor {
namespace {

std::string Errno(int e) { return std::strerror(e); }

uint32_t BigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

const char* TypeName(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

StoreFileCheck Make(StoreFileKind kind, std::string reason) {
  StoreFileCheck c;
  c.kind = kind;
  c.reason = std::move(reason);
  return c;
}

bool IsTransientCode(int rc) {
  rc &= 0xff;
  return rc == SQLITE_BUSY || rc == SQLITE_LOCKED || rc == SQLITE_IOERR || rc == SQLITE_FULL ||
         rc == SQLITE_NOMEM || rc == SQLITE_CANTOPEN || rc == SQLITE_PROTOCOL ||
         rc == SQLITE_INTERRUPT;
}

// Opens the file and runs quick_check; the caller has seen our header.
StoreFileCheck DeepCheck(const std::string& path, StoreFileCheck ours) {
  sqlite3* db = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return Make(StoreFileKind::kTransient, "cannot be opened now (" + msg + ")");
  }
  sqlite3_busy_timeout(db, 2000);
  sqlite3_extended_result_codes(db, 1);
  // The check reads every page once: SQLite's default 2 MiB page cache filled up on a file with a
  // day of history and was `watch`'s peak RSS (11.9 MiB against 9.2 after start-up).
  (void)sqlite3_exec(db, kStorePageCachePragma, nullptr, nullptr, nullptr);
  sqlite3_stmt* st = nullptr;
  rc = sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &st, nullptr);
  std::string verdict;
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      const unsigned char* t = sqlite3_column_text(st, 0);
      verdict = t ? reinterpret_cast<const char*>(t) : "";
      rc = SQLITE_OK;
    }
  }
  std::string msg = sqlite3_errmsg(db);
  sqlite3_finalize(st);
  sqlite3_close(db);
  int primary = rc & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) {
    return Make(StoreFileKind::kCorrupt, "is corrupt (" + msg + ")");
  }
  if (rc != SQLITE_OK) {
    if (IsTransientCode(rc))
      return Make(StoreFileKind::kTransient, "cannot be read now (" + msg + ")");
    return Make(StoreFileKind::kTransient, "cannot be checked (" + msg + ")");
  }
  if (verdict != "ok") {
    return Make(StoreFileKind::kCorrupt,
                "failed its integrity check (" + verdict.substr(0, 200) + ")");
  }
  return ours;
}

// The header says application_id 0: an empty database (adopted), one of ours whose header page
// is still only in the WAL (a crash before the first checkpoint), or someone else's. SQLite,
// which reads the WAL, decides.
StoreFileCheck CheckUnmarked(const std::string& path, bool deep) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return Make(StoreFileKind::kTransient, "cannot be opened now (" + msg + ")");
  }
  sqlite3_busy_timeout(db, 2000);
  auto query = [&](const char* sql, int64_t* out) {
    sqlite3_stmt* st = nullptr;
    int r = sqlite3_prepare_v2(db, sql, -1, &st, nullptr);
    if (r == SQLITE_OK && (r = sqlite3_step(st)) == SQLITE_ROW) {
      *out = sqlite3_column_int64(st, 0);
      r = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return r;
  };
  int64_t app = 0, version = 0, tables = -1;
  rc = query("PRAGMA application_id", &app);
  if (rc == SQLITE_OK) rc = query("PRAGMA user_version", &version);
  if (rc == SQLITE_OK) rc = query("SELECT count(*) FROM sqlite_master", &tables);
  std::string msg = sqlite3_errmsg(db);
  sqlite3_close(db);
  int primary = rc & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) {
    // Nothing says it is ours: not ours to move.
    return Make(StoreFileKind::kForeign,
                "is a damaged SQLite file of unknown origin (" + msg + ")");
  }
  if (rc != SQLITE_OK) return Make(StoreFileKind::kTransient, "cannot be read now (" + msg + ")");
  if (app == kStoreApplicationId) {
    if (version > kStoreSchemaVersion) {
      return Make(StoreFileKind::kNewer, "has history schema version " + std::to_string(version) +
                                             ", newer than this gpudoctor's " +
                                             std::to_string(kStoreSchemaVersion));
    }
    StoreFileCheck ours = Make(StoreFileKind::kOurs, "is a gpudoctor history database");
    ours.user_version = static_cast<int>(version);
    return deep ? DeepCheck(path, ours) : ours;
  }
  if (app != 0) {
    return Make(
        StoreFileKind::kForeign,
        "is another application's SQLite database (application_id " + std::to_string(app) + ")");
  }
  if (tables == 0) return Make(StoreFileKind::kEmpty, "is an empty SQLite database");
  return Make(StoreFileKind::kForeign,
              "is another application's SQLite database (application_id 0, " +
                  std::to_string(tables) + " schema objects)");
}

// The first `size` bytes of the file (fewer when it is shorter), read through SQLite's own file
// layer; -1 with *error set when it cannot be opened or read, -2 for a symbolic link. Never a
// plain open() and close() of the database file: POSIX record locks belong to the process and the
// inode, so closing ANY descriptor of the file releases the locks that this process's SQLite
// connections hold on it (`watch`'s writer, read while it serves /api or polls acknowledgements).
// Another process then takes itself for the last connection and checkpoints and deletes the WAL
// that `watch` is still writing: later ticks went to an unlinked file ("How To Corrupt An SQLite
// Database File" §2.2). SQLite's unix layer defers such a close while the inode holds locks.
ssize_t ReadHeaderThroughSqlite(const std::string& path, unsigned char* out, int size,
                                std::string* error) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW, nullptr);
  sqlite3_file* file = nullptr;
  if (rc == SQLITE_OK) rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file);
  if (rc == SQLITE_CANTOPEN_SYMLINK) {
    sqlite3_close(db);
    return -2;  // replaced by a link since the lstat
  }
  if (rc != SQLITE_OK || file == nullptr || file->pMethods == nullptr) {
    *error = std::string("cannot be opened (") +
             (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc)) + ")";
    sqlite3_close(db);
    return -1;
  }
  sqlite3_int64 file_size = 0;
  rc = file->pMethods->xFileSize(file, &file_size);
  if (rc == SQLITE_OK) rc = file->pMethods->xRead(file, out, size, 0);
  sqlite3_close(db);
  if (rc == SQLITE_IOERR_SHORT_READ)
    return static_cast<ssize_t>(std::min<sqlite3_int64>(file_size, size));
  if (rc != SQLITE_OK) {
    *error = std::string("cannot be read (") + sqlite3_errstr(rc) + ")";
    return -1;
  }
  return size;
}

}  // namespace

StoreFileCheck InspectStoreFile(const std::string& path, bool deep) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    int e = errno;
    if (e == ENOENT) return Make(StoreFileKind::kMissing, "does not exist");
    if (e == ENOTDIR) return Make(StoreFileKind::kForeign, "is under something not a directory");
    return Make(StoreFileKind::kTransient, "cannot be examined (" + Errno(e) + ")");
  }
  if (S_ISLNK(st.st_mode)) {
    return Make(StoreFileKind::kUnsafe, "is a symbolic link (never followed)");
  }
  if (!S_ISREG(st.st_mode))
    return Make(StoreFileKind::kForeign, std::string("is ") + TypeName(st.st_mode));
  if (st.st_size == 0) return Make(StoreFileKind::kEmpty, "is empty");
  unsigned char header[100];
  std::string read_error;
  ssize_t n = ReadHeaderThroughSqlite(path, header, sizeof header, &read_error);
  if (n == -2) return Make(StoreFileKind::kUnsafe, "is a symbolic link (never followed)");
  if (n < 0) return Make(StoreFileKind::kTransient, read_error);
  static constexpr char kMagic[] = "SQLite format 3";  // 16 bytes with its NUL
  if (n < static_cast<ssize_t>(sizeof header) || std::memcmp(header, kMagic, 16) != 0) {
    return Make(StoreFileKind::kForeign, "is not an SQLite database");
  }
  auto app = static_cast<int32_t>(BigEndian32(header + 68));
  auto version = static_cast<int32_t>(BigEndian32(header + 60));
  if (app != kStoreApplicationId) {
    if (app == 0) return CheckUnmarked(path, deep);
    return Make(
        StoreFileKind::kForeign,
        "is another application's SQLite database (application_id " + std::to_string(app) + ")");
  }
  if (version > kStoreSchemaVersion) {
    return Make(StoreFileKind::kNewer, "has history schema version " + std::to_string(version) +
                                           ", newer than this gpudoctor's " +
                                           std::to_string(kStoreSchemaVersion));
  }
  StoreFileCheck ours = Make(StoreFileKind::kOurs, "is a gpudoctor history database");
  ours.user_version = version;
  return deep ? DeepCheck(path, ours) : ours;
}

Status StoreFileRefusal(const std::string& path, const StoreFileCheck& check) {
  std::string msg = path + " " + check.reason + ": not a gpudoctor history database";
  switch (check.kind) {
    case StoreFileKind::kNewer:
      return Unsupported(path + " " + check.reason + "; refusing to touch it");
    case StoreFileKind::kUnsafe:
      return PermissionDenied(path + " " + check.reason);
    case StoreFileKind::kMissing:
      return NotFound(path + ": no history database here");
    case StoreFileKind::kTransient:
      return IoError(path + " " + check.reason);
    default:
      return ParseError(msg);
  }
}

Status CheckStoreDirectory(const std::string& db_path) {
  if (db_path.empty()) return InvalidArgument("empty database path");
  std::filesystem::path dir = std::filesystem::path(db_path).parent_path();
  if (dir.empty()) dir = ".";
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    int e = errno;
    if (e == ENOENT) {
      return NotFound(dir.string() +
                      ": directory does not exist (gpudoctor does not create it; the systemd "
                      "unit's StateDirectory makes /var/lib/gpudoctor)");
    }
    return InvalidArgument(dir.string() + ": " + Errno(e));
  }
  if (!S_ISDIR(st.st_mode)) return InvalidArgument(dir.string() + ": not a directory");
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    return PermissionDenied(dir.string() + ": directory is owned by uid " +
                            std::to_string(st.st_uid) + ", not by this user or root");
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    return PermissionDenied(dir.string() +
                            ": directory is writable by group or others (chmod go-w it): "
                            "anyone could replace the history there");
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    return PermissionDenied(dir.string() + ": directory not writable: " + Errno(errno));
  }
  if (::lstat(db_path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return InvalidArgument(db_path + ": is a directory");
  }
  return Status::Ok();
}

Status CheckStoreCompanions(const std::string& db_path) {
  for (const char* suffix : {"-wal", "-shm", "-journal", ".lock"}) {
    std::string p = db_path + suffix;
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) return PermissionDenied(p + " is a symbolic link (never followed)");
    if (!S_ISREG(st.st_mode)) {
      return PermissionDenied(p + " is " + TypeName(st.st_mode) + ", not a regular file");
    }
  }
  return Status::Ok();
}

Status CreatePrivateFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return StatusFromErrno(errno, path + ": cannot create");
  }
  ::close(fd);
  return Status::Ok();
}

bool IdentityOf(const std::string& path, FileIdentity* out) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return false;
  out->dev = st.st_dev;
  out->ino = st.st_ino;
  return true;
}

}  // namespace gpudoctor
