// libFuzzer: the streaming decompressors of apt's compressed lists (core/root_fs_compressed.h).
// Byte 0 picks the format (even: lz4 frame, odd: gzip) and the size of the pieces the rest is fed
// in; the rest is the compressed input. Must not crash, hang or read out of bounds; the lines
// never hold '\n' and never exceed the output bound; feeding the input in pieces gives the same
// bytes and the same verdict as feeding it whole. Seeds: tests/fuzz/corpus/decompress_lines_fuzz
// (a valid lz4 frame and gzip member of a small Packages list).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/root_fs_compressed.h"

namespace {

constexpr size_t kBound = 1u << 20;

// All decompressed bytes (up to kBound), fed `piece` bytes at a time; *ok: no error.
std::string Decode(gpudoctor::Compression c, std::string_view in, size_t piece, bool* ok) {
  auto d = gpudoctor::Decompressor::Create(c);
  if (!d.ok()) std::abort();
  std::string out;
  auto sink = [&](std::string_view b) {
    if (b.size() > (64u << 10)) std::abort();
    out.append(b);
    return out.size() < kBound;
  };
  *ok = true;
  for (size_t i = 0; i < in.size() && out.size() < kBound; i += piece) {
    if (!(*d)->Feed(in.substr(i, piece), sink).ok()) {
      *ok = false;
      return out;
    }
  }
  if (out.size() < kBound) *ok = (*d)->Finish().ok();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const gpudoctor::Compression c =
      data[0] % 2 == 0 ? gpudoctor::Compression::kLz4 : gpudoctor::Compression::kGzip;
  const size_t piece = 1 + data[0] / 2 % 17 * 61;
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);

  size_t total = 0;
  gpudoctor::Status s =
      gpudoctor::ForEachDecompressedLine(in, c, kBound, [&](std::string_view line) {
        if (line.find('\n') != std::string_view::npos) std::abort();
        total += line.size() + 1;
        if (total > kBound + 1) std::abort();
        return true;
      });
  (void)s;

  bool whole_ok = false, pieces_ok = false;
  std::string whole = Decode(c, in, in.size() + 1, &whole_ok);
  std::string pieces = Decode(c, in, piece, &pieces_ok);
  // Up to the bound both see the same bytes; past an error the piecewise decoder may have
  // produced less (it stops at the first bad piece), never other bytes.
  if (whole_ok && pieces_ok && whole.substr(0, kBound) != pieces.substr(0, kBound)) std::abort();
  if (whole_ok != pieces_ok && whole.size() < kBound && pieces.size() < kBound) std::abort();
  const std::string& shorter = whole.size() < pieces.size() ? whole : pieces;
  const std::string& longer = whole.size() < pieces.size() ? pieces : whole;
  if (longer.compare(0, shorter.size(), shorter) != 0) std::abort();
  return 0;
}
