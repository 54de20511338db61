#include "bundle/tar_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace gpudoctor {
namespace {

// Octal, zero-padded, NUL-terminated in a field of `width` bytes.
// Callers keep value below 8^(width - 1).
void PutOctal(char* field, size_t width, uint64_t value) {
  field[width - 1] = '\0';
  for (size_t i = width - 1; i-- > 0; value >>= 3) field[i] = static_cast<char>('0' + (value & 7));
}

Status CheckName(std::string_view name) {
  if (name.empty()) return InvalidArgument("tar member with an empty name");
  if (name.front() == '/' || name == ".." || name.rfind("../", 0) == 0 ||
      name.find("/../") != std::string_view::npos ||
      (name.size() >= 3 && name.substr(name.size() - 3) == "/..")) {
    return InvalidArgument("tar member '" + std::string(name) + "': must be relative, no '..'");
  }
  if (name.find('\0') != std::string_view::npos) {
    return InvalidArgument("tar member name contains a NUL byte");
  }
  return Status::Ok();
}

}  // namespace

Result<std::array<char, 512>> UstarHeader(std::string_view name, uint64_t size, int mode,
                                          int64_t mtime_unix_s) {
  if (Status s = CheckName(name); !s.ok()) return s;
  std::string_view prefix, base = name;
  if (name.size() > 100) {
    // Split at a '/' so that the prefix fits 155 bytes and the rest 100.
    size_t split = std::string_view::npos;
    for (size_t i = name.size() > 101 ? name.size() - 101 : 0; i < name.size() && i <= 155; ++i) {
      if (name[i] == '/' && i > 0 && name.size() - i - 1 <= 100 && i + 1 < name.size()) {
        split = i;
        break;
      }
    }
    if (split == std::string_view::npos) {
      return InvalidArgument("tar member name '" + std::string(name.substr(0, 60)) + "...' (" +
                             std::to_string(name.size()) +
                             " bytes) does not fit ustar: at most 100 bytes, or 155 + 100 split "
                             "at a '/'");
    }
    prefix = name.substr(0, split);
    base = name.substr(split + 1);
  }
  if (size >= (1ULL << 33)) return InvalidArgument("tar member is 8 GiB or larger");
  std::array<char, 512> h{};
  std::memcpy(h.data(), base.data(), base.size());                   // name[100]
  PutOctal(h.data() + 100, 8, static_cast<uint64_t>(mode & 07777));  // mode
  PutOctal(h.data() + 108, 8, 0);                                    // uid
  PutOctal(h.data() + 116, 8, 0);                                    // gid
  PutOctal(h.data() + 124, 12, size);                                // size
  PutOctal(h.data() + 136, 12, static_cast<uint64_t>(mtime_unix_s < 0 ? 0 : mtime_unix_s));
  std::memset(h.data() + 148, ' ', 8);      // checksum counted as spaces
  h[156] = '0';                             // regular file
  std::memcpy(h.data() + 257, "ustar", 6);  // magic "ustar\0"
  h[263] = '0';
  h[264] = '0';                                               // version "00"
  std::memcpy(h.data() + 265, "root", 4);                     // uname
  std::memcpy(h.data() + 297, "root", 4);                     // gname
  std::memcpy(h.data() + 345, prefix.data(), prefix.size());  // prefix[155]
  unsigned sum = 0;
  for (char c : h) sum += static_cast<unsigned char>(c);
  std::snprintf(h.data() + 148, 8, "%06o", sum);  // six digits, NUL, then the space kept
  h[155] = ' ';
  return h;
}

namespace {

// Moves `from` onto `to` unless `to` exists (a file that appeared while the archive was written
// is not replaced): renameat2(RENAME_NOREPLACE), or link()+unlink() where the filesystem lacks it.
Status PublishNoReplace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) {
    return Status::Ok();
  }
  if (errno == EEXIST) return IoError(to + " appeared meanwhile; refusing to replace it");
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) {
    return IoError("cannot rename " + from + " to " + to + ": " + std::strerror(errno));
  }
  if (::link(from.c_str(), to.c_str()) != 0) {
    if (errno == EEXIST) return IoError(to + " appeared meanwhile; refusing to replace it");
    return IoError("cannot link " + from + " to " + to + ": " + std::strerror(errno));
  }
  ::unlink(from.c_str());
  return Status::Ok();
}

}  // namespace

TarGzWriter::TarGzWriter(std::string path, void* gz, int64_t mtime)
    : path_(std::move(path)), gz_(gz), mtime_(mtime) {}

TarGzWriter::~TarGzWriter() {
  if (closed_) return;
  gzclose(static_cast<gzFile>(gz_));
  if (!stream_) ::unlink((path_ + ".partial").c_str());
}

Result<std::unique_ptr<TarGzWriter>> TarGzWriter::CreateOnFd(int fd, int64_t mtime_unix_s) {
  int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (own < 0)
    return IoError("cannot use descriptor " + std::to_string(fd) + ": " + std::strerror(errno));
  gzFile gz = gzdopen(own, "wb6");
  if (gz == nullptr) {
    ::close(own);
    return IoError("cannot start gzip stream on descriptor " + std::to_string(fd));
  }
  std::unique_ptr<TarGzWriter> w(new TarGzWriter("(standard output)", gz, mtime_unix_s));
  w->stream_ = true;
  return w;
}

Result<std::unique_ptr<TarGzWriter>> TarGzWriter::Create(const std::string& path,
                                                         int64_t mtime_unix_s) {
  std::string partial = path + ".partial";
  // Never replace what is there: `bundle -o /etc/gpudoctor/config.toml` must not eat the config.
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    return IoError(path + " exists; refusing to replace it (choose another --output)");
  }
  // Exclusive: a .partial that exists is someone's (another bundle running?), not ours to remove.
  int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 && errno == EEXIST) {
    return IoError(partial + " exists (another bundle running?); remove it if not");
  }
  if (fd < 0) return IoError("cannot create " + partial + ": " + std::strerror(errno));
  gzFile gz = gzdopen(fd, "wb6");
  if (gz == nullptr) {
    ::close(fd);
    ::unlink(partial.c_str());
    return IoError("cannot start gzip stream on " + partial);
  }
  return std::unique_ptr<TarGzWriter>(new TarGzWriter(path, gz, mtime_unix_s));
}

Status TarGzWriter::Write(const char* data, size_t n) {
  while (n > 0) {
    unsigned chunk = static_cast<unsigned>(std::min<size_t>(n, 1 << 20));
    int w = gzwrite(static_cast<gzFile>(gz_), data, chunk);
    if (w <= 0) {
      int err = 0;
      const char* msg = gzerror(static_cast<gzFile>(gz_), &err);
      return IoError("writing " + path_ + (stream_ ? "" : ".partial") + ": " +
                     (err == Z_ERRNO ? std::string(std::strerror(errno)) : std::string(msg)));
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return Status::Ok();
}

Status TarGzWriter::Add(std::string_view name, std::string_view content, int mode) {
  if (closed_) return Internal("tar archive already closed");
  auto header = UstarHeader(name, content.size(), mode, mtime_);
  if (!header.ok()) return header.status();
  if (Status s = Write(header->data(), header->size()); !s.ok()) return s;
  if (Status s = Write(content.data(), content.size()); !s.ok()) return s;
  static const char kZeros[512] = {};
  size_t pad = (512 - content.size() % 512) % 512;
  return Write(kZeros, pad);
}

Status TarGzWriter::Close() {
  if (closed_) return Status::Ok();
  static const char kZeros[1024] = {};
  Status s = Write(kZeros, sizeof(kZeros));  // two zero blocks end the archive
  closed_ = true;
  int rc = gzclose(static_cast<gzFile>(gz_));
  if (stream_) {
    if (s.ok() && rc != Z_OK)
      s = IoError("closing " + path_ + ": gzip error " + std::to_string(rc));
    return s;
  }
  std::string partial = path_ + ".partial";
  if (s.ok() && rc != Z_OK)
    s = IoError("closing " + partial + ": gzip error " + std::to_string(rc));
  if (s.ok()) s = PublishNoReplace(partial, path_);
  if (!s.ok()) ::unlink(partial.c_str());
  return s;
}

}  // namespace gpudoctor
