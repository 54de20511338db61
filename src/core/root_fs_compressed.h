// Line reads of compressed files through the root-prefixed layer (root_fs.h): apt keeps its lists
// compressed when told to (`Acquire::GzipIndexes`, `Acquire::CompressionTypes::Order`; Debian
// images often store `*_Packages.lz4`), and the pending-updates scan must read them streamed, as
// it reads the plain ones (root_fs_lines.h), not whole.
//
// Formats: the LZ4 frame format (what apt and the lz4 tool write; concatenated and skippable
// frames included; liblz4's LZ4F decoder, ≈ 130 KiB of context for apt's 64 KiB blocks) and gzip
// (RFC 1952, concatenated members; zlib). xz is recognised but not decoded: its decoder needs the
// dictionary the file was written with (8 MiB at xz's default level), more than `watch`'s whole
// memory budget; callers get kUnsupported and say so.
// The input is outside data: malformed or truncated input is an error naming the format, what is
// wrong and the compressed byte offset; output is bounded (max_out_bytes). Fuzzed
// (tests/fuzz/decompress_lines_fuzz.cc). Thread-safety: no shared state; a Decompressor is used
// by one thread.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace gpudoctor {

enum class Compression { kNone, kLz4, kGzip, kXz };

// By the file name's suffix: ".lz4", ".gz", ".xz"; kNone for anything else.
Compression CompressionOfName(std::string_view name);
const char* CompressionName(Compression c);  // "none", "lz4", "gzip", "xz"

// One compressed stream fed in pieces cut anywhere; the decompressed bytes go to `out` as they
// come (pieces of at most 64 KiB). `out` returns false to stop: Feed then returns Ok at once.
class Decompressor {
 public:
  // kLz4 or kGzip; kXz and kNone: kUnsupported.
  static Result<std::unique_ptr<Decompressor>> Create(Compression c);
  virtual ~Decompressor() = default;
  // kParseError on malformed input ("lz4: <what> at compressed byte N").
  virtual Status Feed(std::string_view in,
                      const std::function<bool(std::string_view bytes)>& out) = 0;
  // After the last Feed: kParseError when the input ended inside a frame (truncated). An empty
  // input is a valid empty stream.
  virtual Status Finish() = 0;
};

// ForEachFileLine's line contract (root_fs_lines.h: split at '\n', one trailing '\r' removed, a
// last line without '\n' included, including one cut by max_out_bytes) on the decompressed
// content of `data`: the first max_out_bytes decompressed bytes. fn returns false to stop.
// Lines passed before an error stay passed.
Status ForEachDecompressedLine(std::string_view data, Compression c, size_t max_out_bytes,
                               const std::function<bool(std::string_view line)>& fn);

// The same for a file (read 64 KiB at a time; at most max_out_bytes read from it and
// max_out_bytes decompressed). kNone: ForEachFileLine. Errors name the path: not_found,
// permission_denied, io_error, parse_error (malformed or truncated), unsupported (xz).
Status ForEachDecompressedFileLine(const std::string& path, Compression c, size_t max_out_bytes,
                                   const std::function<bool(std::string_view line)>& fn);

}  // namespace gpudoctor
