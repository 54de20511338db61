// The walk of a reports directory (report_reader.h): every *.json file under it in name order,
// depth first, subdirectories up to 8 levels below the top, at most a million files; directories
// not entered (too deep, symbolic links to directories, unreadable) are listed as problems. Each
// report file is stat-ed once (its size and mtime, ns): that is the whole cost of a `fleet card`
// query on an indexed, unchanged directory (query_index.h), so the walk does as little as it can
// per file: one getdents pass per directory (the entry's type comes from it: no stat of other
// files), names kept in one buffer (no string per file unless the caller wants paths), one
// statx per report file relative to its open directory (size, mtime and type only), those
// stats spread over up to 8 workers, and a fingerprint hashed from the names without building
// paths. The fingerprint is a hash of the set of (directory, name, size, mtime) entries, the
// directories and the problems (sums of per-entry hashes), so a walk without paths does not
// sort the names (the order of a listing does not change it). The fingerprint changes when a report
// file is added, removed, renamed or rewritten (size or mtime), or a directory is skipped
// differently. It is the same for the same tree in the same gpudoctor version (compare it only with
// fingerprints of this function). Thread-safety: WalkReports may be called from several threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/root_fs.h"
#include "core/status.h"
#include "fleet/fleet_model.h"

namespace gpudoctor::fleet {

struct ReportWalk {
  std::vector<std::string> files;             // "DIR/sub/x.json" in name order (each directory's
                                              // entries sorted); empty unless with_paths
  std::vector<std::optional<FileInfo>> info;  // per file of `files`: size and mtime of a regular
                                              // file (a link's target), else nothing (not
                                              // regular); empty unless with_paths
  std::vector<InputProblem> problems;         // directories not entered, the file limit
  uint64_t fingerprint = 0;
  // The directory stamps (for queries that trust directory mtimes, query_index.h): every
  // directory entered ("" for `dir`, else its path below `dir`) and every report file that is
  // a symbolic link (whose target no directory mtime covers), in walk order, each stat-ed
  // before the directory was listed; stamp_hash over their inode, mtime and ctime (and a
  // link target's size), a hash of the set (the same in any walk order). StampHash of the
  // same paths gives the same hash while none of them changed.
  std::vector<std::string> stamp_paths;  // "d" or "l" (link) then the path below `dir`
  uint64_t stamp_hash = 0;
  size_t file_count = 0;  // report files found (info.size() when with_paths)
};

// Walks directory `dir`. An error when `dir` itself cannot be opened as a directory, or when
// the stats made no progress for `stall` (a hung filesystem: the workers are abandoned).
Result<ReportWalk> WalkReports(const std::string& dir, bool with_paths,
                               std::chrono::milliseconds stall);

// The stamp hash of `stamp_paths` (ReportWalk) under directory `dir` now: one stat per path,
// no listing. A path that is gone changes it. An error when `dir` cannot be opened.
// A rewrite in place of a report that is no link changes no stamp: only a query that chose
// to trust directory mtimes uses this.
Result<uint64_t> StampHash(const std::string& dir, const std::vector<std::string>& stamp_paths);

}  // namespace gpudoctor::fleet
