// Shell-style globs ("/data/ckpt/*.pt", "/data/run-*/checkpoint-*") resolved on the host's root
// filesystem through RootFs: each '/'-separated component may hold * ? [...] (fnmatch(3), a
// leading '.' must be matched explicitly); "**" has no special meaning. Bounded: at most
// `max_entries` directory entries are examined and stat'ed, and the walk stops at `deadline`; a
// walk cut short says so (truncated) and returns what it found. Thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/deadline.h"
#include "core/root_fs.h"
#include "core/status.h"

namespace gpudoctor {

struct GlobMatch {
  std::string host_path;  // "/data/ckpt/step_100.pt" (without the rootfs prefix)
  FileInfo info;          // stat(2) of it, symlinks followed
};

struct GlobResult {
  std::vector<GlobMatch> matches;  // regular files and directories, in directory order
  size_t examined = 0;             // directory entries looked at
  bool truncated = false;          // the entry bound or the deadline stopped the walk
};

// Errors: invalid_argument for a pattern that is not absolute or contains a ".." component;
// permission_denied / io_error when a directory on the way could not be read and nothing
// matched. A missing directory is no error (nothing matches).
Result<GlobResult> GlobUnderRoot(const RootFs& fs, std::string_view pattern, size_t max_entries,
                                 TimePoint deadline);

}  // namespace gpudoctor
