#include "store/sqlite_db.h"

namespace gpudoctor {

SqliteStmt& SqliteStmt::operator=(SqliteStmt&& o) noexcept {
  if (this != &o) {
    if (stmt_) sqlite3_finalize(stmt_);
    stmt_ = o.stmt_;
    o.stmt_ = nullptr;
  }
  return *this;
}

SqliteStmt::~SqliteStmt() {
  if (stmt_) sqlite3_finalize(stmt_);
}

SqliteStmt& SqliteStmt::Bind(int i, int64_t v) {
  sqlite3_bind_int64(stmt_, i, v);
  return *this;
}
SqliteStmt& SqliteStmt::Bind(int i, double v) {
  sqlite3_bind_double(stmt_, i, v);
  return *this;
}
SqliteStmt& SqliteStmt::Bind(int i, std::string_view v) {
  sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}
SqliteStmt& SqliteStmt::BindBlob(int i, const std::string& v) {
  sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}
SqliteStmt& SqliteStmt::BindNull(int i) {
  sqlite3_bind_null(stmt_, i);
  return *this;
}

int SqliteStmt::Step() { return sqlite3_step(stmt_); }

void SqliteStmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string SqliteStmt::Text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col));
}

std::string SqliteStmt::Blob(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  if (p == nullptr) return {};
  return std::string(static_cast<const char*>(p), sqlite3_column_bytes(stmt_, col));
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path, int flags) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    if (db) sqlite3_close(db);
    if (rc == SQLITE_CANTOPEN) return NotFound(path + ": cannot open database (" + msg + ")");
    return IoError(path + ": " + msg);
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  sqlite3_extended_result_codes(db, 1);
  return std::unique_ptr<SqliteDb>(new SqliteDb(db, path));
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

Status SqliteDb::Error(std::string_view what) const {
  std::string msg = path_ + ": " + std::string(what) + ": " + sqlite3_errmsg(db_);
  int rc = sqlite3_errcode(db_) & 0xff;
  if (rc == SQLITE_FULL) return IoError(path_ + ": disk full: " + sqlite3_errmsg(db_));
  if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) return TimeoutError(msg);
  if (rc == SQLITE_READONLY || rc == SQLITE_PERM || rc == SQLITE_AUTH) return PermissionDenied(msg);
  if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB) return ParseError(msg);
  return IoError(msg);
}

Status SqliteDb::Exec(const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (err) sqlite3_free(err);
  if (rc != SQLITE_OK) return Error("exec");
  return Status::Ok();
}

Result<SqliteStmt> SqliteDb::Prepare(std::string_view sql) {
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &s, nullptr);
  if (rc != SQLITE_OK) return Error("prepare");
  return SqliteStmt(s);
}

Result<int64_t> SqliteDb::QueryInt(const std::string& sql) {
  auto s = Prepare(sql);
  if (!s.ok()) return s.status();
  int rc = s->Step();
  if (rc == SQLITE_ROW) return s->Int(0);
  if (rc == SQLITE_DONE) return NotFound(path_ + ": no row for " + sql);
  return Error("query");
}

}  // namespace gpudoctor
