#include "fleet/index_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/deadline.h"
#include "core/input_file.h"

namespace gpudoctor::fleet {
namespace {

constexpr size_t kMagicBytes = 11;  // 10 characters and the NUL
constexpr size_t kHeaderBytes = kMagicBytes + 4 + 8 + 8;
constexpr size_t kMaxIndexBytes = size_t{1} << 30;

// FNV-1a over 64-bit words (then the tail bytes): a corruption check, not a secure hash.
uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h ^= w;
    h *= 1099511628211ull;
    h ^= h >> 29;
  }
  for (; i < s.size(); ++i) {
    h ^= static_cast<unsigned char>(s[i]);
    h *= 1099511628211ull;
  }
  return h;
}

template <typename T>
void PutRaw(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

}  // namespace

Status WriteIndexFile(const std::string& path, const IndexFileKind& kind,
                      std::string_view payload) {
  std::string header(kind.magic, kMagicBytes);
  PutRaw(header, kind.version);
  PutRaw<uint64_t>(header, payload.size());
  PutRaw<uint64_t>(header, Fnv1a(payload));
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return IoError(tmp + ": cannot write the " + kind.what);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
    if (!out.flush()) {
      out.close();
      std::remove(tmp.c_str());
      return IoError(tmp + ": cannot write the " + kind.what);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return IoError(path + ": cannot replace the " + kind.what);
  }
  return Status::Ok();
}

IndexFileText& IndexFileText::operator=(IndexFileText&& o) noexcept {
  if (this != &o) {
    Reset();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    mapped_ = std::exchange(o.mapped_, false);
  }
  return *this;
}

IndexFileText::~IndexFileText() { Reset(); }

void IndexFileText::Reset() {
  if (mapped_ && data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
  mapped_ = false;
}

std::string_view IndexFileText::payload() const {
  return size_ < kHeaderBytes ? std::string_view()
                              : std::string_view(data_ + kHeaderBytes, size_ - kHeaderBytes);
}

std::optional<std::string_view> CheckIndexBytes(std::string_view in, const IndexFileKind& kind,
                                                std::string* why) {
  if (in.size() < kHeaderBytes || std::memcmp(in.data(), kind.magic, kMagicBytes) != 0) {
    *why = std::string("not a gpudoctor ") + kind.what;
    return std::nullopt;
  }
  uint32_t version = 0;
  uint64_t length = 0, sum = 0;
  std::memcpy(&version, in.data() + kMagicBytes, 4);
  std::memcpy(&length, in.data() + kMagicBytes + 4, 8);
  std::memcpy(&sum, in.data() + kMagicBytes + 12, 8);
  in.remove_prefix(kHeaderBytes);
  if (version != kind.version) {
    *why = std::string(kind.what) + " format " + std::to_string(version) + ", expected " +
           std::to_string(kind.version);
    return std::nullopt;
  }
  if (length != in.size() || Fnv1a(in) != sum) {
    *why = std::string(kind.what) + ": bad checksum or length (corrupt or cut short)";
    return std::nullopt;
  }
  return in;
}

namespace {

// Maps `path` and checks it; blocking (runs on a deadline worker).
Result<IndexFileText> MapAndCheck(const std::string& path, const IndexFileKind& kind) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return IoError(path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return IoError(path + ": not a regular file");
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > kMaxIndexBytes) {
    ::close(fd);
    return IoError(path + ": larger than 1 GiB");
  }
  if (size < kHeaderBytes) {
    ::close(fd);
    return InvalidArgument(std::string("not a gpudoctor ") + kind.what);
  }
  void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) return IoError(path + ": cannot map: " + std::strerror(errno));
  ::madvise(m, size, MADV_WILLNEED);
  IndexFileText text(static_cast<const char*>(m), size, true);
  std::string why;
  if (!CheckIndexBytes(std::string_view(static_cast<const char*>(m), size), kind, &why)) {
    return InvalidArgument(why);
  }
  return text;
}

}  // namespace

PendingIndexFile StartReadIndexFile(const std::string& path, const IndexFileKind& kind) {
  return StartDetached([path, kind]() { return MapAndCheck(path, kind); });
}

std::optional<IndexFileText> FinishReadIndexFile(PendingIndexFile pending, const std::string& path,
                                                 const IndexFileKind& kind, TimePoint deadline,
                                                 std::string* why) {
  if (pending == nullptr) pending = StartReadIndexFile(path, kind);
  if (pending == nullptr || !pending->WaitUntil(deadline)) {
    if (pending != nullptr) CountAbandonedWorker();
    *why = InputTimeoutError(path).message();
    return std::nullopt;
  }
  Result<IndexFileText> result = pending->Take();
  if (!result.ok()) {
    *why = result.status().message();
    return std::nullopt;
  }
  return std::move(*result);
}

std::optional<IndexFileText> ReadIndexFile(const std::string& path, const IndexFileKind& kind,
                                           TimePoint deadline, std::string* why) {
  return FinishReadIndexFile(StartReadIndexFile(path, kind), path, kind, deadline, why);
}

}  // namespace gpudoctor::fleet
