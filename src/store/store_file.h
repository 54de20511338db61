// What is at a history database path, decided before gpudoctor writes anything there. The one
// check that `watch` (writer), `history`, `ack`, the HTTP API and bundle (readers) share.
//
// The SQLite header is read directly (first 100 bytes: magic, user_version at 60, application_id
// at 68), so a file is recognised as ours or foreign even when it is locked by another process or
// damaged. Only a file whose header says it is a gpudoctor database, and which SQLite then
// positively reports as corrupt (SQLITE_CORRUPT / SQLITE_NOTADB, or a failed quick_check), is
// kCorrupt; a lock, I/O error or full disk is kTransient and never a reason to move a file.
//
// Files created as root: the database directory must exist (never created: a typo must not start
// a history elsewhere), be a directory, be owned by the caller or root, and not be writable by
// group or others (nobody else can plant a symlink or a hard link there). The database, its
// -wal/-shm and the lock are opened with O_NOFOLLOW; what gpudoctor creates it creates with
// O_EXCL, mode 0600.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "core/status.h"

namespace gpudoctor {

enum class StoreFileKind {
  kMissing,    // nothing at the path
  kEmpty,      // a zero-length file or an SQLite database without tables: adopted
  kOurs,       // a gpudoctor database of this schema version or older
  kNewer,      // a gpudoctor database of a newer schema: never written (no downgrade)
  kForeign,    // not a regular file, not SQLite, or another application's SQLite database
  kUnsafe,     // a symbolic link (never followed)
  kCorrupt,    // ours, and SQLite says it is damaged: may be moved aside
  kTransient,  // could not be decided now (locked, I/O error, disk full): retry later
};

struct StoreFileCheck {
  StoreFileKind kind = StoreFileKind::kMissing;
  std::string reason;    // "is another application's SQLite database (application_id 5)"
  int user_version = 0;  // kOurs: the schema version in the header
};

// deep: also open it and run PRAGMA quick_check (the writer, before adopting a file).
StoreFileCheck InspectStoreFile(const std::string& path, bool deep);

// The refusal of a path that is neither ours nor empty nor missing, as one line naming the path
// and the reason (ParseError for foreign, Unsupported for newer, PermissionDenied for unsafe).
Status StoreFileRefusal(const std::string& path, const StoreFileCheck& check);

// The directory of db_path exists, is a directory, is owned by the caller or root and is not
// writable by group or others; also, db_path itself is not a directory.
Status CheckStoreDirectory(const std::string& db_path);

// The database's companions (<db>-wal, <db>-shm, <db>.lock) are absent or regular files, never
// symbolic links or special files.
Status CheckStoreCompanions(const std::string& db_path);

// Creates `path` with O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600 (fails if anything is there).
Status CreatePrivateFile(const std::string& path);

// Device and inode of what is at the path now (lstat: a link is not followed); false if none.
struct FileIdentity {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const FileIdentity& o) const { return dev == o.dev && ino == o.ino; }
};
bool IdentityOf(const std::string& path, FileIdentity* out);

}  // namespace gpudoctor
