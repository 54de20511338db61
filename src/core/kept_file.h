// KeptFile: a procfs or sysfs file opened once and read again from offset 0 (pread) on every
// Read, for files a watch reads every tick (/proc/stat, /sys/class/net/IF/statistics/*). The
// kernel regenerates such a file's content on each read at offset 0 (seq_file and kernfs
// attributes), so a kept descriptor reads fresh values while the path lookup, open and close of
// every tick are saved. Only procfs and sysfs files are kept: a file on any other file system (a
// fixture tree under --path.procfs, which tests replace by rename) is opened afresh on every Read,
// decided by fstatfs at the first open.
//
// A read failing with ENODEV or ESTALE (the object behind the attribute is gone: an interface
// removed, perhaps created again under the same name) closes the descriptor and retries once
// through a fresh open, so the path's current object is read. Other errors (EINVAL: a down
// link's speed) keep the descriptor. keep = false: every Read opens and closes (the behaviour
// of RootFs::ReadFile), for callers that must bound how many descriptors they hold.
// Errors: as RootFs::ReadFile (not_found, permission_denied, io_error), naming the path.
// Thread-safety: none; one owner reads it at a time. Move-only.
#pragma once

#include <string>

#include "core/status.h"

namespace gpudoctor {

class KeptFile {
 public:
  KeptFile() = default;
  explicit KeptFile(std::string path, bool keep = true);
  ~KeptFile();
  KeptFile(KeptFile&& other) noexcept;
  KeptFile& operator=(KeptFile&& other) noexcept;
  KeptFile(const KeptFile&) = delete;
  KeptFile& operator=(const KeptFile&) = delete;

  // The whole file, at most max_bytes, into *out (replacing its content; its capacity is
  // reused, so a caller that keeps `out` allocates nothing per read).
  Status Read(std::string* out, size_t max_bytes = 64 << 10);
  const std::string& path() const { return path_; }
  bool is_open() const { return fd_ >= 0; }

 private:
  void Close();
  std::string path_;
  int fd_ = -1;
  bool keep_ = true;
};

}  // namespace gpudoctor
