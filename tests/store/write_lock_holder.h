// Another process's write transaction on a history file, as a backup or a `sqlite3` shell holds
// one: BEGIN IMMEDIATE through a connection of its own (the store's writes then wait out their
// busy timeout and fail) until Release() or the destructor rolls it back. Test-only code.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

namespace gpudoctor::testing {

class WriteLockHolder {
 public:
  explicit WriteLockHolder(const std::string& db) {
    EXPECT_EQ(sqlite3_open(db.c_str(), &handle_), SQLITE_OK);
    held_ = sqlite3_exec(handle_, "BEGIN IMMEDIATE; INSERT INTO meta VALUES('held', 'x');", nullptr,
                         nullptr, nullptr) == SQLITE_OK;
    EXPECT_TRUE(held_) << sqlite3_errmsg(handle_);
  }
  ~WriteLockHolder() {
    Release();
    sqlite3_close(handle_);
  }
  WriteLockHolder(const WriteLockHolder&) = delete;
  WriteLockHolder& operator=(const WriteLockHolder&) = delete;

  bool held() const { return held_; }
  void Release() {
    if (held_) sqlite3_exec(handle_, "ROLLBACK", nullptr, nullptr, nullptr);
    held_ = false;
  }

 private:
  sqlite3* handle_ = nullptr;
  bool held_ = false;
};

}  // namespace gpudoctor::testing
