// Thin RAII wrappers over the SQLite C API for the history store: a connection and a prepared
// statement, with errors as Status naming the database file. Every connection gets a bounded
// busy_timeout (never waits forever on a lock). Not thread-safe: one connection per thread.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace gpudoctor {

inline constexpr int kBusyTimeoutMs = 2000;

class SqliteStmt {
 public:
  SqliteStmt() = default;
  SqliteStmt(sqlite3_stmt* s) : stmt_(s) {}  // NOLINT
  SqliteStmt(SqliteStmt&& o) noexcept : stmt_(o.stmt_) { o.stmt_ = nullptr; }
  SqliteStmt& operator=(SqliteStmt&& o) noexcept;
  ~SqliteStmt();
  sqlite3_stmt* get() const { return stmt_; }

  SqliteStmt& Bind(int i, int64_t v);
  SqliteStmt& Bind(int i, double v);
  SqliteStmt& Bind(int i, std::string_view v);
  SqliteStmt& BindBlob(int i, const std::string& v);
  SqliteStmt& BindNull(int i);
  // SQLITE_ROW / SQLITE_DONE / error code.
  int Step();
  void Reset();
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) const { return sqlite3_column_double(stmt_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string Text(int col) const;
  std::string Blob(int col) const;

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteDb {
 public:
  // flags: SQLITE_OPEN_READONLY or SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path, int flags);
  ~SqliteDb();
  sqlite3* get() const { return db_; }
  const std::string& path() const { return path_; }

  Status Exec(const std::string& sql);
  Result<SqliteStmt> Prepare(std::string_view sql);
  // "<path>: <sqlite message>"
  Status Error(std::string_view what) const;
  // First column of the first row as an integer (PRAGMA user_version ...).
  Result<int64_t> QueryInt(const std::string& sql);

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
};

}  // namespace gpudoctor
