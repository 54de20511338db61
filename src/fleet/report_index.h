// The report index: a cache of parsed reports of one reports directory (the CLI keeps it in the
// user's cache directory, report_reader.h DefaultIndexPath, so report directories and shared
// read-only mounts are never written to), so that `fleet card`, `fleet slot` and repeated `fleet`
// runs do not parse every report again. One entry per report file, keyed by the file's path, size
// and modification time (ns): a file whose size or mtime changed is parsed again, a file gone is
// dropped, a new file added; the rest is taken from the index (rebuilt incrementally).
// The file: magic "GDFLEETIDX", a format version, the payload's length and checksum (FNV-1a over
// words), then the payload: per file its path, size, mtime and one length-prefixed record of its
// documents. Anything that does not check out (another version, short, bad checksum, a table
// that does not decode) makes the whole index untrusted: it is ignored and rebuilt, never used
// in part. A file's record is decoded when the file is used; one that does not decode is not
// used either (the file is parsed again and the index rewritten). Saved atomically (temporary
// file + rename); a directory that cannot be written just goes without an index. Not
// thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/deadline.h"
#include "fleet/index_file.h"
#include "fleet/report_parse.h"

namespace gpudoctor::fleet {

// One document of a report file: parsed, or the parse error (reported as an input problem).
struct IndexedDoc {
  std::string source;  // "FILE", "FILE#2", "FILE:host#1"
  bool ok = false;
  std::string error;
  ParsedReport report;
};

// One file's entry: its size and mtime when parsed, and its documents in the index's binary
// form (decoded when used: a run holds one file's parsed reports at a time, not all of them).
struct IndexedFile {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  std::string_view blob;  // into the mapped index file, or into `owned`
  std::string owned;      // a blob encoded by Put
};

class ReportIndex {
 public:
  // Loads `path` (mapped; entries point into it). A missing file gives an empty index and `why`
  // empty; an unusable one gives an empty index and `why` saying what was wrong ("bad
  // checksum", ...). Read within `deadline` (a regular file only, at most 1 GiB).
  static ReportIndex Load(const std::string& path, TimePoint deadline, std::string* why);

  // The index from a payload (the bytes after the file header, as Load checks them; it must
  // outlive the index), for fuzzing and tests: empty with `why` set when its table of files
  // does not decode. Never reads out of it.
  static ReportIndex FromPayload(std::string_view payload, std::string* why);

  // Whether `file` has an entry with this size and mtime.
  bool Has(const std::string& file, uint64_t size, int64_t mtime_ns) const;
  // Its documents, decoded; false when there is no such entry or its record does not decode
  // (then the file is to be parsed again, and the entry is dropped).
  bool Decode(const std::string& file, uint64_t size, int64_t mtime_ns,
              std::vector<IndexedDoc>& docs);
  // Stores `docs` of `file` (encoded now: the caller may move them away afterwards).
  void Put(const std::string& file, uint64_t size, int64_t mtime_ns,
           const std::vector<IndexedDoc>& docs);
  size_t size() const { return files_.size(); }
  const std::map<std::string, IndexedFile>& files() const { return files_; }

  // Writes the index (only the given files' entries: files gone are dropped) atomically.
  Status Save(const std::string& path, const std::vector<std::string>& keep) const;

  ReportIndex() = default;
  ReportIndex(ReportIndex&&) = default;
  ReportIndex& operator=(ReportIndex&&) = default;

 private:
  std::map<std::string, IndexedFile> files_;
  std::shared_ptr<IndexFileText> text_;  // the mapped file the blobs point into
};

}  // namespace gpudoctor::fleet
