#include "core/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "core/root_fs.h"
#include "core/strings.h"

namespace gpudoctor {
namespace {

Status OpenError(const std::string& path, int err) {
  std::string msg = path + ": " + std::strerror(err);
  if (err == ENOENT || err == ENOTDIR) return NotFound(msg);
  if (err == EACCES || err == EPERM) return PermissionDenied(msg);
  return IoError(msg);
}

Status TooLarge(const std::string& path, size_t max_bytes) {
  return InvalidArgument(path + ": larger than " + FormatBytes(max_bytes) +
                         ", the limit for this input; not read");
}

// Reads fd to EOF, at most max_bytes (one byte more is an error). Blocking: runs on a worker.
// Straight into the string, sized from `expected` (a regular file's size; one byte more, so a
// file that grew shows at once) and doubled as needed: no 64 KiB buffer on the worker's stack (on
// a fresh worker, 16 page faults: a PVM guest pays ~15 µs each).
Result<std::string> ReadAll(int fd, const std::string& path, size_t max_bytes,
                            size_t expected = 0) {
  std::string out(std::min(expected > 0 ? expected : size_t{65536}, max_bytes) + 1, '\0');
  size_t got = 0;
  for (;;) {
    if (got == out.size()) out.resize(std::min(out.size() * 2, max_bytes + 1));
    ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        // Standard input left non-blocking by the caller's shell: wait for it to be readable.
        fd_set set;
        FD_ZERO(&set);
        FD_SET(fd, &set);
        ::select(fd + 1, &set, nullptr, nullptr, nullptr);
        continue;
      }
      return OpenError(path, errno);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
    if (got > max_bytes) return TooLarge(path, max_bytes);
  }
  out.resize(got);
  return out;
}

Result<std::string> ReadRegular(const std::string& path, size_t max_bytes) {
  struct stat st {};
  int fd = OpenRegularFile(path, &st);
  if (fd < 0 && errno == EINVAL && !S_ISREG(st.st_mode)) {
    return InvalidArgument(path + ": is " + FileKindName(st.st_mode) +
                           ", not a regular file; gpudoctor reads only regular files here");
  }
  if (fd < 0) return OpenError(path, errno);
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return TooLarge(path, max_bytes);
  }
  auto text = ReadAll(fd, path, max_bytes, static_cast<size_t>(st.st_size));
  ::close(fd);
  return text;
}

}  // namespace

int OpenRegularFile(const std::string& path, struct stat* st) {
  const int pinned = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  if (pinned < 0) return -1;
  if (::fstat(pinned, st) != 0) {
    const int err = errno;
    ::close(pinned);
    errno = err;
    return -1;
  }
  if (!S_ISREG(st->st_mode)) {
    ::close(pinned);
    errno = EINVAL;
    return -1;
  }
  // The pinned inode, not the path again: a rename or a swapped symlink cannot slip in.
  const std::string self = OwnDescriptorPath(pinned);
  int fd = ::open(self.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  const int err = errno;
  ::close(pinned);
  if (fd < 0) {
    errno = err;
    return -1;
  }
  struct stat now {};
  if (::fstat(fd, &now) != 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
    ::close(fd);
    errno = EINVAL;  // cannot happen through our own fd path; never read something else
    return -1;
  }
  *st = now;
  return fd;
}

const char* FileKindName(unsigned mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "a special file";
}

Result<std::string> ReadInputFile(const std::string& path, size_t max_bytes, TimePoint deadline) {
  // The worker owns copies: it may outlive this call when abandoned.
  auto work = [path, max_bytes]() -> Result<std::string> {
    if (path == "-") return ReadAll(STDIN_FILENO, "standard input", max_bytes);
    return ReadRegular(path, max_bytes);
  };
  auto result = RunWithDeadline(work, deadline);
  if (!result) return InputTimeoutError(path);
  return std::move(*result);
}

Result<std::string> ReadRegularInputFile(const std::string& path, size_t max_bytes) {
  return ReadRegular(path, max_bytes);
}

Status InputTimeoutError(const std::string& path) {
  return TimeoutError((path == "-" ? std::string("standard input") : path) +
                      ": not read within the deadline (a hung filesystem, or a writer that never "
                      "finishes?)");
}

Status RequireRegularFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return OpenError(path, errno);
  if (!S_ISREG(st.st_mode)) {
    return InvalidArgument(path + ": is " + FileKindName(st.st_mode) +
                           ", not a regular file; gpudoctor reads only regular files here");
  }
  return Status::Ok();
}

}  // namespace gpudoctor
