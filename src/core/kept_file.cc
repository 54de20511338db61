#include "core/kept_file.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gpudoctor {
namespace {

Status ErrnoError(const std::string& path, int err) {
  std::string msg = path + ": " + std::strerror(err);
  if (err == ENOENT || err == ENOTDIR) return NotFound(msg);
  if (err == EACCES || err == EPERM) return PermissionDenied(msg);
  return IoError(msg);
}

// The whole file from offset 0 into *out; 0 or an errno. Reads straight into *out, in chunks
// of at least its capacity (4 KiB on a first read): a caller that keeps `out` reads a file of the
// size it read last in one pread plus the one that sees the end (a /proc/stat of a few hundred
// CPUs, tens of KiB, took a pread per 4 KiB).
int ReadAll(int fd, std::string* out, size_t max_bytes) {
  size_t have = 0;
  out->resize(std::min(max_bytes, std::max<size_t>(out->capacity(), 4096)));
  while (have < max_bytes) {
    if (have == out->size()) out->resize(std::min(max_bytes, out->size() * 2));
    ssize_t n = ::pread(fd, out->data() + have, out->size() - have, static_cast<off_t>(have));
    if (n < 0) {
      if (errno == EINTR) continue;
      out->clear();
      return errno;
    }
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  out->resize(have);
  return 0;
}

// procfs and sysfs regenerate a file's content on each read at offset 0; any other file system
// (a fixture tree, a copy) holds regular files, which a writer may replace by rename.
bool RegeneratedOnRead(int fd) {
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) return false;
  return fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC;
}

}  // namespace

KeptFile::KeptFile(std::string path, bool keep) : path_(std::move(path)), keep_(keep) {}

KeptFile::~KeptFile() { Close(); }

KeptFile::KeptFile(KeptFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), keep_(other.keep_) {
  other.fd_ = -1;
}

KeptFile& KeptFile::operator=(KeptFile&& other) noexcept {
  if (this != &other) {
    Close();
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    keep_ = other.keep_;
    other.fd_ = -1;
  }
  return *this;
}

void KeptFile::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status KeptFile::Read(std::string* out, size_t max_bytes) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool fresh = fd_ < 0;
    if (fresh) {
      fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd_ < 0) return ErrnoError(path_, errno);
      if (keep_ && !RegeneratedOnRead(fd_)) keep_ = false;
    }
    int err = ReadAll(fd_, out, max_bytes);
    if (!keep_) Close();
    if (err == 0) return Status::Ok();
    // The object behind a kept descriptor is gone: read the path's current one, once.
    if ((err == ENODEV || err == ESTALE) && !fresh) {
      Close();
      continue;
    }
    return ErrnoError(path_, err);
  }
  return ErrnoError(path_, ENODEV);
}

}  // namespace gpudoctor
