// Reading files that users name on the command line (reports, traces, context distributions,
// configs, history databases): part of the RootFs layer (core/root_fs.h), for files outside
// /proc and /sys that may be anything: a FIFO, /dev/zero, a file on a hung NFS mount, a 50 GB
// log. Thread-safe.
#pragma once

#include <sys/stat.h>

#include <string>

#include "core/deadline.h"
#include "core/status.h"

namespace gpudoctor {

// A file a user named (a report, a trace, a context distribution, a config): what a command
// reads from outside, as opposed to the /proc and /sys files above. Refused unless it is a
// regular file: it is opened with O_NONBLOCK (so opening a FIFO or a device cannot block) and
// checked with fstat on that descriptor (no race with a rename), and anything else is an
// invalid_argument naming the path and what it is ("PATH: is a FIFO, not a regular file").
// A file larger than max_bytes is refused, never silently truncated. "-" reads standard input
// (a pipe, a terminal or a redirected file) with the same limit. The whole read runs on a
// deadline worker and gives up at `deadline` (a hung network filesystem, a writer that never
// closes the pipe): timeout "PATH: not read within the deadline".
Result<std::string> ReadInputFile(const std::string& path, size_t max_bytes, TimePoint deadline);
// ReadInputFile's read without its deadline worker, for a caller that runs many reads on a
// worker of its own (fleet reads a directory of reports on one reader thread): a regular file
// only (not "-"), the same checks and errors. Blocks as long as the filesystem does.
Result<std::string> ReadRegularInputFile(const std::string& path, size_t max_bytes);
// The timeout ReadInputFile returns for `path` ("PATH: not read within the deadline ...").
Status InputTimeoutError(const std::string& path);
// For inputs that a library opens itself and would block on (SQLite on a FIFO): Ok when
// `path` (symlinks followed) is a regular file; else not_found, or invalid_argument naming
// what it is. The check is a stat before the library's open: it keeps a mistyped path from
// hanging the command, not an attacker racing renames.
Status RequireRegularFile(const std::string& path);
// Opens `path` for reading only when it is a regular file, and opens nothing else: the path is
// resolved once with O_PATH (which runs no driver's open: a FIFO, a socket or a device such as
// /dev/watchdog, which starts counting down when opened, is never opened, even when whoever
// controls the directory swaps a symlink to it in between), checked with fstat, and that same
// inode is then opened for reading through /proc/self/fd. Every file gpudoctor opens by a path
// others may control (job logs, fleet reports and indexes, files named on the command line)
// goes through here. Returns the descriptor (O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) with
// `*st` filled; -1 with errno set otherwise: the failing call's errno, or EINVAL when the path is
// not a regular file (`*st` then says what it is). Thread-safe.
int OpenRegularFile(const std::string& path, struct stat* st);
// "a FIFO", "a directory", "a character device", ... for error messages.
const char* FileKindName(unsigned mode);

}  // namespace gpudoctor
