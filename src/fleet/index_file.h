// The framing both fleet cache files share (report_index.h, query_index.h): a 10-character
// magic and its NUL, a format version (uint32), the payload's length and a checksum (uint64
// each, host byte order), then the payload. Written atomically (temporary file + rename); read
// back only whole and intact. The checksum catches corruption and truncation, not tampering.
// Thread-compatible (no shared state).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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

// An index file as read: the whole file; payload() is the part after the header.
struct IndexFileText {
  std::string bytes;
  std::string_view payload() const;
};

// The index file at `path`, read within `deadline` (at most 1 GiB); nullopt with
// *why set when it cannot be read, is not of this kind or version, or fails its length or
// checksum. The caller decides what a missing file means (check before calling).
std::optional<IndexFileText> ReadIndexFile(const std::string& path, const IndexFileKind& kind,
                                           TimePoint deadline, std::string* why);

}  // namespace gpudoctor::fleet
