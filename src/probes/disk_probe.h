// Disk probe internals, exposed for tests. The probe itself is RunDiskProbe (registry.cc).
#pragma once

#include <chrono>
#include <functional>
#include <vector>

#include "core/deadline.h"
#include "core/root_fs.h"
#include "facts/host_facts.h"
#include "parsers/mounts.h"

namespace gpudoctor {

// statvfs of one mount point; must be callable from any thread and must not reference data
// that dies before it returns (it may be abandoned).
using StatVfsFn = std::function<Result<FsUsage>(const std::string& mount_point)>;

// Runs `stat` for every mount in turn on one worker (a JobLane: a call that stalls for 50 ms has
// the mounts behind it moved to fresh workers) and waits for all of them until `deadline`. A
// mount that does not answer by then (a stale NFS server, a hung FUSE daemon) gets timed_out =
// true and an error; its worker is abandoned and never blocks the others. Sizes are set only when
// statvfs succeeded; inodes only when the fs has an inode table.
std::vector<MountFacts> StatMounts(const std::vector<MountEntry>& mounts, StatVfsFn stat,
                                   TimePoint deadline);

// Each of `required` (absolute, normalised) looked up in the whole mount table `all` (before
// any filtering: a bind mount or a pseudo filesystem counts as mounted); the last entry on a
// point is the visible one.
std::vector<RequiredMountFacts> FindRequiredMounts(const std::vector<MountEntry>& all,
                                                   const std::vector<std::string>& required);

}  // namespace gpudoctor
