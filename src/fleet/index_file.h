// The framing both fleet cache files share (report_index.h, query_index.h): a 10-character
// magic and its NUL, a format version (uint32), the payload's length and a checksum (uint64
// each, host byte order), then the payload. Written atomically (temporary file + rename); read
// back only whole and intact. The checksum catches corruption and truncation, not tampering.
// Thread-compatible (no shared state).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/deadline.h"
#include "core/status.h"

namespace gpudoctor::fleet {

struct IndexFileKind {
  const char* magic;  // exactly 10 characters
  uint32_t version;
  const char* what;  // for messages: "fleet index"
};

// Writes header + payload to `path` through a temporary file and a rename. IoError naming the
// file when either fails (the temporary file is removed).
Status WriteIndexFile(const std::string& path, const IndexFileKind& kind, std::string_view payload);

// An index file as read: the file mapped read-only (no copy: at 10k nodes the copy and its
// page faults cost more than the query), or, in tests, bytes in memory. payload() is the part
// after the header. Move-only; unmapped when destroyed. The writer replaces a file by rename,
// never in place, so a mapping stays valid. A file another program truncates while it is
// mapped does not end the process: the access beyond the new end (SIGBUS) is caught by a
// handler that puts zero pages in place of the whole mapping and marks it torn; readers of the
// payload check intact() after using it and then drop what they read. (A handler not ours, or
// a fault outside every mapping, is left to the previous SIGBUS action.)
class IndexFileText {
 public:
  IndexFileText() = default;
  IndexFileText(const char* data, size_t size, bool mapped, int guard = -1)
      : data_(data), size_(size), mapped_(mapped), guard_(guard) {}
  IndexFileText(IndexFileText&& o) noexcept { *this = std::move(o); }
  IndexFileText& operator=(IndexFileText&& o) noexcept;
  IndexFileText(const IndexFileText&) = delete;
  IndexFileText& operator=(const IndexFileText&) = delete;
  ~IndexFileText();
  std::string_view payload() const;
  // False once the mapped file was found cut short under the mapping (what payload() showed
  // since may be zeros).
  bool intact() const;

 private:
  void Reset();  // unmaps
  const char* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  int guard_ = -1;  // the slot of the SIGBUS guard; -1 none, -2 a copy this object owns
};

// The index file at `path`, mapped and checked within `deadline` (a regular file, at most
// 1 GiB; the checksum reads every page, so a hung filesystem times out here, not later);
// nullopt with *why set when it cannot be read, is not of this kind or version, or fails its
// length or checksum. The caller decides what a missing file means (check before calling).
std::optional<IndexFileText> ReadIndexFile(const std::string& path, const IndexFileKind& kind,
                                           TimePoint deadline, std::string* why);

// ReadIndexFile in two steps, so the caller can work while the file is mapped and checked
// (a query stats the reports meanwhile): Start begins it on a worker (nullptr when no thread
// could be started), Finish waits for it until `deadline` (nullptr: it reads the file itself).
using PendingIndexFile = std::shared_ptr<PendingResult<Result<IndexFileText>>>;
PendingIndexFile StartReadIndexFile(const std::string& path, const IndexFileKind& kind);
std::optional<IndexFileText> FinishReadIndexFile(PendingIndexFile pending, const std::string& path,
                                                 const IndexFileKind& kind, TimePoint deadline,
                                                 std::string* why);

// The payload of index file bytes `file` (header included) when they are of this kind and
// version and pass their length and checksum; else nullopt and *why. For fuzzing and tests.
std::optional<std::string_view> CheckIndexBytes(std::string_view file, const IndexFileKind& kind,
                                                std::string* why);

}  // namespace gpudoctor::fleet
