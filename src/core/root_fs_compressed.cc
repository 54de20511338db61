#include "core/root_fs_compressed.h"

#include <lz4frame.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/line_assembler.h"
#include "core/root_fs_lines.h"
#include "core/strings.h"

namespace gpudoctor {
namespace {

constexpr size_t kOutChunk = 64u << 10;
constexpr size_t kReadChunk = 64u << 10;

class Lz4Decompressor : public Decompressor {
 public:
  Lz4Decompressor() { LZ4F_createDecompressionContext(&ctx_, LZ4F_VERSION); }
  ~Lz4Decompressor() override { LZ4F_freeDecompressionContext(ctx_); }
  bool ok() const { return ctx_ != nullptr; }

  Status Feed(std::string_view in, const std::function<bool(std::string_view)>& out) override {
    while (!in.empty()) {
      size_t dst_size = kOutChunk;
      size_t src_size = in.size();
      size_t hint = LZ4F_decompress(ctx_, buf_.get(), &dst_size, in.data(), &src_size, nullptr);
      if (LZ4F_isError(hint)) {
        return ParseError("lz4: " + std::string(LZ4F_getErrorName(hint)) + " at compressed byte " +
                          std::to_string(consumed_ + src_size));
      }
      consumed_ += src_size;
      in.remove_prefix(src_size);
      in_frame_ = hint != 0;
      if (dst_size > 0 && !out(std::string_view(buf_.get(), dst_size))) return Status::Ok();
      // More output may be pending for the same input (the output buffer was full): go on while
      // the decoder still makes progress.
      if (src_size == 0 && dst_size == 0) break;
    }
    // Output the decoder holds back until it is asked again with no input.
    while (in_frame_) {
      size_t dst_size = kOutChunk;
      size_t src_size = 0;
      size_t hint = LZ4F_decompress(ctx_, buf_.get(), &dst_size, nullptr, &src_size, nullptr);
      if (LZ4F_isError(hint)) {
        return ParseError("lz4: " + std::string(LZ4F_getErrorName(hint)) + " at compressed byte " +
                          std::to_string(consumed_));
      }
      in_frame_ = hint != 0;
      if (dst_size == 0) break;
      if (!out(std::string_view(buf_.get(), dst_size))) return Status::Ok();
    }
    return Status::Ok();
  }

  Status Finish() override {
    if (in_frame_) {
      return ParseError("lz4: truncated: the input ends inside a frame after " +
                        std::to_string(consumed_) + " compressed bytes");
    }
    return Status::Ok();
  }

 private:
  LZ4F_dctx* ctx_ = nullptr;
  std::unique_ptr<char[]> buf_{new char[kOutChunk]};
  size_t consumed_ = 0;
  bool in_frame_ = false;  // inside a frame: more input is due
};

class GzipDecompressor : public Decompressor {
 public:
  GzipDecompressor() {
    std::memset(&z_, 0, sizeof z_);
    ok_ = inflateInit2(&z_, 16 + MAX_WBITS) == Z_OK;  // 16: gzip wrapper only
  }
  ~GzipDecompressor() override {
    if (ok_) inflateEnd(&z_);
  }
  bool ok() const { return ok_; }

  Status Feed(std::string_view in, const std::function<bool(std::string_view)>& out) override {
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z_.avail_in = static_cast<uInt>(in.size());
    while (true) {
      if (member_ended_) {
        if (z_.avail_in == 0) return Status::Ok();
        // A further member (concatenated gzip files are one stream).
        if (inflateReset(&z_) != Z_OK) return Internal("gzip: inflateReset failed");
        member_ended_ = false;
      }
      z_.next_out = reinterpret_cast<Bytef*>(buf_.get());
      z_.avail_out = static_cast<uInt>(kOutChunk);
      const uLong before = z_.total_in;
      int rc = inflate(&z_, Z_NO_FLUSH);
      consumed_ += z_.total_in - before;
      if (z_.total_in > before) started_ = true;
      size_t produced = kOutChunk - z_.avail_out;
      if (rc == Z_STREAM_END) {
        member_ended_ = true;
        started_ = false;
      } else if (rc == Z_BUF_ERROR) {
        if (produced == 0) return Status::Ok();  // needs more input
      } else if (rc != Z_OK) {
        return ParseError(std::string("gzip: ") + (z_.msg ? z_.msg : "malformed data") +
                          " at compressed byte " + std::to_string(consumed_));
      }
      if (produced > 0 && !out(std::string_view(buf_.get(), produced))) return Status::Ok();
      if (!member_ended_ && z_.avail_in == 0 && z_.avail_out != 0) return Status::Ok();
    }
  }

  Status Finish() override {
    if (started_ && !member_ended_) {
      return ParseError("gzip: truncated: the input ends inside a member after " +
                        std::to_string(consumed_) + " compressed bytes");
    }
    return Status::Ok();
  }

 private:
  z_stream z_;
  bool ok_ = false;
  bool started_ = false;       // input of the current member seen
  bool member_ended_ = false;  // the last member ended; more input starts another
  size_t consumed_ = 0;
  std::unique_ptr<char[]> buf_{new char[kOutChunk]};
};

}  // namespace

Compression CompressionOfName(std::string_view name) {
  if (EndsWith(name, ".lz4")) return Compression::kLz4;
  if (EndsWith(name, ".gz")) return Compression::kGzip;
  if (EndsWith(name, ".xz")) return Compression::kXz;
  return Compression::kNone;
}

const char* CompressionName(Compression c) {
  switch (c) {
    case Compression::kNone:
      return "none";
    case Compression::kLz4:
      return "lz4";
    case Compression::kGzip:
      return "gzip";
    case Compression::kXz:
      return "xz";
  }
  return "?";
}

Result<std::unique_ptr<Decompressor>> Decompressor::Create(Compression c) {
  if (c == Compression::kLz4) {
    auto d = std::make_unique<Lz4Decompressor>();
    if (!d->ok()) return Internal("lz4: no decompression context");
    return std::unique_ptr<Decompressor>(std::move(d));
  }
  if (c == Compression::kGzip) {
    auto d = std::make_unique<GzipDecompressor>();
    if (!d->ok()) return Internal("gzip: inflateInit2 failed");
    return std::unique_ptr<Decompressor>(std::move(d));
  }
  if (c == Compression::kXz) {
    return Unsupported(
        "xz-compressed data is not decoded (its dictionary, 8 MiB at xz's default "
        "level, is more memory than the daemon may use)");
  }
  return Unsupported("not compressed");
}

Status ForEachDecompressedLine(std::string_view data, Compression c, size_t max_out_bytes,
                               const std::function<bool(std::string_view line)>& fn) {
  auto d = Decompressor::Create(c);
  if (!d.ok()) return d.status();
  LineAssembler lines(max_out_bytes, fn);
  Status s = (*d)->Feed(data, [&](std::string_view piece) { return lines.Piece(piece); });
  if (s.ok() && !lines.stopped()) s = (*d)->Finish();
  lines.Finish();
  return s;
}

Status ForEachDecompressedFileLine(const std::string& path, Compression c, size_t max_out_bytes,
                                   const std::function<bool(std::string_view line)>& fn) {
  if (c == Compression::kNone) return ForEachFileLine(path, max_out_bytes, fn);
  auto d = Decompressor::Create(c);
  if (!d.ok()) return Status(d.status().code(), path + ": " + d.status().message());
  LineAssembler lines(max_out_bytes, fn);
  auto piece = [&](std::string_view p) { return lines.Piece(p); };
  Status fed;  // the decompressor's answer: an error names the format, prefixed with the path below
  bool reached_end = false;
  Status read = ForEachFileChunk(
      path, max_out_bytes, kReadChunk,
      [&](std::string_view chunk) {
        fed = (*d)->Feed(chunk, piece);
        return fed.ok() && !lines.stopped();
      },
      &reached_end);
  if (read.ok() && fed.ok() && reached_end && !lines.stopped()) fed = (*d)->Finish();
  lines.Finish();
  if (!read.ok()) return read;  // names the path already
  if (!fed.ok()) return Status(fed.code(), path + ": " + fed.message());
  return Status::Ok();
}

}  // namespace gpudoctor
