// RootFs: the only module that knows where /proc, /sys and / are. Every probe builds paths through
// it, so the whole tool runs unchanged on a fixture tree (--path.procfs, --path.sysfs,
// --path.rootfs). No other source file may contain a "/proc" or "/sys" string literal (a test
// enforces this).
//
// Reads are blocking on purpose: a file that hangs (a FIFO with no writer, a stuck sysfs
// attribute) must hang inside a probe worker, where the deadline runner abandons it.
// Thread-safety: a RootFs is immutable after construction; all methods are safe concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace gpudoctor {

struct FsUsage {
  uint64_t total_bytes = 0;
  uint64_t available_bytes = 0;  // available to unprivileged users (f_bavail)
  uint64_t free_bytes = 0;       // including root-reserved blocks (f_bfree)
  uint64_t inodes_total = 0;     // 0 when the filesystem has no fixed inode table (btrfs, ...)
  uint64_t inodes_free = 0;
  bool read_only = false;
};

// stat(2) of one path (symlinks followed).
struct FileInfo {
  int64_t mtime_unix_ns = 0;  // last modification, ns since the Unix epoch
  uint64_t size_bytes = 0;
  bool is_dir = false;
  bool is_regular = false;
};

class RootFs {
 public:
  static constexpr size_t kDefaultMaxBytes = 4 << 20;

  RootFs();  // /proc, /sys, /
  RootFs(std::string procfs, std::string sysfs, std::string rootfs);

  const std::string& procfs() const { return procfs_; }
  const std::string& sysfs() const { return sysfs_; }
  const std::string& rootfs() const { return rootfs_; }

  // rel is relative to the mount, e.g. ProcPath("1234/stat"), SysPath("class/net").
  std::string ProcPath(std::string_view rel) const;
  std::string SysPath(std::string_view rel) const;
  // abs is a path on the host, e.g. RootPath("/dev/kmsg"), RootPath("/var/lib").
  std::string RootPath(std::string_view abs) const;

  // Whole file, at most max_bytes (a longer file is truncated, not an error).
  // Errors: not_found (ENOENT), permission_denied, io_error.
  static Result<std::string> ReadFile(const std::string& path, size_t max_bytes = kDefaultMaxBytes);
  Result<std::string> ReadProc(std::string_view rel, size_t max_bytes = kDefaultMaxBytes) const {
    return ReadFile(ProcPath(rel), max_bytes);
  }
  Result<std::string> ReadSys(std::string_view rel, size_t max_bytes = kDefaultMaxBytes) const {
    return ReadFile(SysPath(rel), max_bytes);
  }
  // Entry names of a directory (no "." / ".."), sorted.
  static Result<std::vector<std::string>> ListDir(const std::string& path);
  // Target of a symlink, e.g. /proc/PID/fd/N -> "socket:[1234]".
  static Result<std::string> ReadLink(const std::string& path);
  static bool Exists(const std::string& path);
  // stat(2) of `path`, following symlinks. Errors: not_found, permission_denied, io_error.
  static Result<FileInfo> Stat(const std::string& path);
  // statvfs(2) of a host mount point (prefixed with rootfs).
  Result<FsUsage> StatVfs(std::string_view mount_point) const;

 private:
  static std::string Join(const std::string& base, std::string_view rel);
  std::string procfs_, sysfs_, rootfs_;
};

// The path of this process's own descriptor `fd` in the kernel's /proc ("/proc/self/fd/N"):
// this process's, never under --path.procfs (which is the observed host's). For reopening an
// inode already pinned (core/input_file.h OpenRegularFile). Thread-safe.
std::string OwnDescriptorPath(int fd);

}  // namespace gpudoctor
