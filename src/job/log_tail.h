// LogTail: follows a growing text file (a training job's log) across the ticks of `watch`, the
// way the kernel-log tail follows a file: each Poll returns the complete lines that arrived
// since the last one. Rotation-aware: when the path names a new file (another inode: logrotate's
// rename-and-create), the rest of the old file is read first, then the new one from its start;
// a file truncated in place (copytruncate, or the job restarted with `>`) is read again from its
// start. Bounded: at most max_bytes per Poll (the rest waits for the next), stops at the
// deadline, a line longer than max_line_bytes is dropped (counted), never buffered whole. Lines
// end at '\n' or '\r' (tqdm redraws its bar with '\r'). A missing file is not an error of the
// tail: Poll returns NotFound naming the path and tries again next time.
// The path is opened as given (the caller applies RootFs::RootPath). Not thread-safe: one Poll
// at a time (the watch runner never overlaps runs of a probe).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"

namespace gpudoctor {

struct LogTailLimits {
  size_t max_bytes = 1 << 20;
  size_t max_line_bytes = 64 * 1024;
  TimePoint deadline = TimePoint::max();
};

struct LogTailRead {
  std::vector<std::string> lines;
  uint64_t rotations = 0;      // new file or truncation seen in this Poll
  uint64_t dropped_lines = 0;  // over max_line_bytes
  bool more = false;           // stopped at max_bytes or the deadline with data left
};

class LogTail {
 public:
  explicit LogTail(std::string path);
  ~LogTail();
  LogTail(const LogTail&) = delete;
  LogTail& operator=(const LogTail&) = delete;

  // Errors: not_found (no file yet), permission_denied, io_error, each naming the path.
  Result<LogTailRead> Poll(const LogTailLimits& limits);
  const std::string& path() const { return path_; }

 private:
  // Reads from fd_ into lines; false at EOF.
  bool ReadSome(LogTailRead& out, size_t& budget, const LogTailLimits& limits, Status& error);
  void TakeLines(const char* data, size_t n, LogTailRead& out, const LogTailLimits& limits);

  std::string path_;
  int fd_ = -1;
  uint64_t dev_ = 0, ino_ = 0;
  uint64_t offset_ = 0;
  std::string partial_;
  bool skipping_ = false;  // inside an overlong line: drop until its end
};

}  // namespace gpudoctor
