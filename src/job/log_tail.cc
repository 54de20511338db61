#include "job/log_tail.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/input_file.h"

namespace gpudoctor {
namespace {

Status OpenError(const std::string& path, int err) {
  std::string what = "job log " + path + ": " + std::strerror(err);
  if (err == ENOENT) return NotFound(what);
  if (err == EACCES || err == EPERM) return PermissionDenied(what);
  return IoError(what);
}

}  // namespace

LogTail::LogTail(std::string path) : path_(std::move(path)) {}
LogTail::~LogTail() {
  if (fd_ >= 0) ::close(fd_);
}

void LogTail::TakeLines(const char* data, size_t n, LogTailRead& out, const LogTailLimits& limits) {
  size_t start = 0;
  for (size_t i = 0; i < n; ++i) {
    if (data[i] != '\n' && data[i] != '\r') continue;
    if (skipping_) {
      skipping_ = false;
    } else {
      partial_.append(data + start, i - start);
      if (!partial_.empty()) out.lines.push_back(std::move(partial_));
    }
    partial_.clear();
    start = i + 1;
  }
  if (skipping_) return;
  partial_.append(data + start, n - start);
  if (partial_.size() > limits.max_line_bytes) {
    partial_.clear();
    partial_.shrink_to_fit();
    skipping_ = true;
    ++out.dropped_lines;
  }
}

bool LogTail::ReadSome(LogTailRead& out, size_t& budget, const LogTailLimits& limits,
                       Status& error) {
  char buf[64 * 1024];
  while (budget > 0) {
    if (SteadyClock::now() >= limits.deadline) {
      out.more = true;
      return true;
    }
    size_t want = std::min(budget, sizeof buf);
    ssize_t n = ::read(fd_, buf, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = IoError("job log " + path_ + ": read: " + std::strerror(errno));
      return false;
    }
    if (n == 0) return false;
    offset_ += static_cast<uint64_t>(n);
    budget -= static_cast<size_t>(n);
    TakeLines(buf, static_cast<size_t>(n), out, limits);
  }
  out.more = true;
  return true;
}

Result<LogTailRead> LogTail::Poll(const LogTailLimits& limits) {
  LogTailRead out;
  size_t budget = limits.max_bytes;
  Status error = Status::Ok();
  struct stat now_st {};
  bool path_ok = ::stat(path_.c_str(), &now_st) == 0;
  int path_errno = path_ok ? 0 : errno;
  if (path_ok && !S_ISREG(now_st.st_mode)) {
    return InvalidArgument("job log " + path_ + ": not a regular file");
  }
  if (fd_ >= 0) {
    bool replaced = path_ok && (static_cast<uint64_t>(now_st.st_dev) != dev_ ||
                                static_cast<uint64_t>(now_st.st_ino) != ino_);
    struct stat fd_st {};
    if (!replaced && ::fstat(fd_, &fd_st) == 0 && static_cast<uint64_t>(fd_st.st_size) < offset_) {
      // Truncated in place: start over.
      ::lseek(fd_, 0, SEEK_SET);
      offset_ = 0;
      partial_.clear();
      skipping_ = false;
      ++out.rotations;
    }
    // Read what is left of the current file (the old one after a rename).
    if (ReadSome(out, budget, limits, error)) return out;  // budget or deadline: more later
    if (!error.ok()) return error;
    if (!replaced) return out;
    ::close(fd_);
    fd_ = -1;
    if (!partial_.empty() && !skipping_) out.lines.push_back(std::move(partial_));
    partial_.clear();
    skipping_ = false;
    ++out.rotations;
  }
  if (!path_ok) {
    if (!out.lines.empty()) return out;
    return OpenError(path_, path_errno);
  }
  // Only a regular file is opened: the log's directory is the job's, and root must not open a
  // device a symlink swapped in after the stat above points at (core/input_file.h).
  struct stat st {};
  int fd = OpenRegularFile(path_, &st);
  if (fd < 0 && errno == EINVAL) {
    return InvalidArgument("job log " + path_ + ": not a regular file");
  }
  if (fd < 0) {
    if (!out.lines.empty()) return out;
    return OpenError(path_, errno);
  }
  fd_ = fd;
  dev_ = static_cast<uint64_t>(st.st_dev);
  ino_ = static_cast<uint64_t>(st.st_ino);
  offset_ = 0;
  ReadSome(out, budget, limits, error);
  if (!error.ok()) return error;
  return out;
}

}  // namespace gpudoctor
