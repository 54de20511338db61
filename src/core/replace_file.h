// Replacing a small file's contents all at once: a reader sees the old contents or the new ones,
// never a part, and nothing planted at either name is followed. The notify spool, the Slurm drain
// record, the acknowledgement marks and the updates cache are written this way.
//
// How: `NAME<tmp_suffix>` is created afresh beside the file (O_CREAT | O_EXCL | O_NOFOLLOW, with
// `mode`; anything already at that name, a crash's leftover or a planted link, is unlinked first,
// never followed), written whole, optionally fsynced, then renamed over NAME (the rename replaces
// a link planted at NAME, it does not write through it), and the directory optionally fsynced so
// that the rename survives a crash too. On any failure the temporary is removed and NAME keeps
// its old contents. The file gets a new inode and modification time on every success, whatever
// the clock's resolution (watchers compare them).
//
// Errors name the step and the file ("create /x/y.tmp: Permission denied"): kPermissionDenied for
// EACCES, EPERM and EROFS, kIoError otherwise. Thread-safe for distinct names; two writers of the
// same name at once must use distinct tmp_suffix values.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "core/status.h"

namespace gpudoctor {

struct ReplaceFileOptions {
  mode_t mode = 0600;           // of the new file (less the process's umask)
  bool sync_data = false;       // fsync the new file before the rename
  bool sync_directory = false;  // fsync the directory after the rename (best effort)
  std::string tmp_suffix = ".tmp";
};

// `name` is relative to the directory open as `dir_fd`, or to the working directory (or
// absolute) with AT_FDCWD.
Status ReplaceFileContents(int dir_fd, const std::string& name, std::string_view text,
                           const ReplaceFileOptions& options = {});

}  // namespace gpudoctor
