// TarGzWriter: writes a gzip-compressed POSIX ustar archive of in-memory members (zlib, no
// external `tar`). Used by `gpudoctor bundle`.
//
// Members are regular files with the given mode, owner 0/0 ("root"), and one mtime for all.
// Names: relative, no "..", no leading "/", at most 100 bytes, or up to 256 bytes when they can be
// split at a '/' into a ustar prefix (<= 155) and name (<= 100); anything else is refused with
// invalid_argument naming the member (never silently truncated). Content size < 8 GiB.
// The archive is written to "<path>.partial" (mode 0600, created exclusively: an existing one is
// refused, never removed) and moved onto `path` by Close() without replacing anything (an
// existing `path` is refused by Create, one that appears meanwhile by Close), so a failed bundle
// never leaves a half file under the final name and a bundle never destroys a file.
// Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace gpudoctor {

// The 512-byte ustar header of one regular file. Errors: invalid_argument (name).
Result<std::array<char, 512>> UstarHeader(std::string_view name, uint64_t size, int mode,
                                          int64_t mtime_unix_s);

class TarGzWriter {
 public:
  // Errors: io_error naming the path (directory missing, permission, path or path.partial
  // already exists).
  static Result<std::unique_ptr<TarGzWriter>> Create(const std::string& path, int64_t mtime_unix_s);
  // The archive onto an open descriptor (`bundle -o -`: standard output), which it does not own
  // (a duplicate is written and closed). Nothing to rename; a failed bundle leaves a cut stream.
  static Result<std::unique_ptr<TarGzWriter>> CreateOnFd(int fd, int64_t mtime_unix_s);
  ~TarGzWriter();  // without Close(): removes the partial file
  TarGzWriter(const TarGzWriter&) = delete;
  TarGzWriter& operator=(const TarGzWriter&) = delete;

  Status Add(std::string_view name, std::string_view content, int mode = 0644);
  // Writes the end-of-archive blocks, flushes, renames onto the final path.
  Status Close();

 private:
  TarGzWriter(std::string path, void* gz, int64_t mtime);
  Status Write(const char* data, size_t n);
  std::string path_;
  void* gz_;  // gzFile
  int64_t mtime_;
  bool closed_ = false;
  bool stream_ = false;  // CreateOnFd: no partial file, no rename
};

}  // namespace gpudoctor
