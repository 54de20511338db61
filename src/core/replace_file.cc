#include "core/replace_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace gpudoctor {

namespace {

// The directory part of `name` ("." when it has none), to fsync after the rename.
std::string DirectoryOf(const std::string& name) {
  size_t slash = name.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : name.substr(0, slash);
}

Status WriteWhole(int fd, std::string_view text, const std::string& tmp) {
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return StatusFromErrno(errno, "write " + tmp);
    if (n == 0) return IoError("write " + tmp + ": no progress");
    off += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

Status ReplaceFileContents(int dir_fd, const std::string& name, std::string_view text,
                           const ReplaceFileOptions& options) {
  const std::string tmp = name + options.tmp_suffix;
  constexpr int kCreate = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::openat(dir_fd, tmp.c_str(), kCreate, options.mode);
  if (fd < 0 && errno == EEXIST) {
    // A leftover of a crash, or anything planted there: unlink acts on a link itself.
    if (::unlinkat(dir_fd, tmp.c_str(), 0) != 0 && errno != ENOENT) {
      return StatusFromErrno(errno, "unlink " + tmp);
    }
    fd = ::openat(dir_fd, tmp.c_str(), kCreate, options.mode);
  }
  if (fd < 0) return StatusFromErrno(errno, "create " + tmp);
  Status s = WriteWhole(fd, text, tmp);
  if (s.ok() && options.sync_data && ::fsync(fd) != 0) s = StatusFromErrno(errno, "fsync " + tmp);
  if (::close(fd) != 0 && s.ok()) s = StatusFromErrno(errno, "close " + tmp);
  if (s.ok() && ::renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0) {
    s = StatusFromErrno(errno, "rename " + tmp + " to " + name);
  }
  if (!s.ok()) {
    ::unlinkat(dir_fd, tmp.c_str(), 0);
    return s;
  }
  if (options.sync_directory) {
    int dfd = ::openat(dir_fd, DirectoryOf(name).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
  }
  return Status::Ok();
}

}  // namespace gpudoctor
