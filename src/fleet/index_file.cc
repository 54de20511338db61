#include "fleet/index_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>

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

// The SIGBUS guard of mapped index files: a fixed table of mappings (begin != 0: in use), read
// by the handler without locks.
constexpr int kGuardSlots = 32;
struct GuardSlot {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> taken{false};
  std::atomic<bool> torn{false};
};
GuardSlot g_guard[kGuardSlots];
struct sigaction g_previous_sigbus;
std::atomic<bool> g_guard_installed{false};

void OnSigbus(int sig, siginfo_t* info, void* context) {
  const auto at = reinterpret_cast<uintptr_t>(info->si_addr);
  for (GuardSlot& g : g_guard) {
    const uintptr_t b = g.begin.load(std::memory_order_acquire);
    const uintptr_t e = g.end.load(std::memory_order_acquire);
    if (b == 0 || at < b || at >= e) continue;
    // The file was cut short under the mapping: zero pages over all of it (the access is
    // retried and reads zeros), and the reader told by intact().
    void* m = ::mmap(reinterpret_cast<void*>(b), e - b, PROT_READ,
                     MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED) {
      g.torn.store(true, std::memory_order_release);
      return;
    }
  }
  // Not a mapped index file: what SIGBUS did before (the default ends the process).
  if ((g_previous_sigbus.sa_flags & SA_SIGINFO) != 0 && g_previous_sigbus.sa_sigaction != nullptr) {
    g_previous_sigbus.sa_sigaction(sig, info, context);
    return;
  }
  if (g_previous_sigbus.sa_handler != SIG_DFL && g_previous_sigbus.sa_handler != SIG_IGN &&
      g_previous_sigbus.sa_handler != nullptr) {
    g_previous_sigbus.sa_handler(sig);
    return;
  }
  ::sigaction(SIGBUS, &g_previous_sigbus, nullptr);
  ::raise(sig);  // delivered at once (SA_NODEFER), with the previous action
}

void InstallGuard() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = OnSigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (::sigaction(SIGBUS, &sa, &g_previous_sigbus) == 0) g_guard_installed = true;
  });
}

// A guard slot for mapping [p, p + n), or -1 when none is free or no handler is installed.
int Guard(const void* p, size_t n) {
  InstallGuard();
  if (!g_guard_installed) return -1;
  for (int i = 0; i < kGuardSlots; ++i) {
    bool expected = false;
    if (!g_guard[i].taken.compare_exchange_strong(expected, true)) continue;
    g_guard[i].torn.store(false);
    g_guard[i].end.store(reinterpret_cast<uintptr_t>(p) + n, std::memory_order_release);
    g_guard[i].begin.store(reinterpret_cast<uintptr_t>(p), std::memory_order_release);
    return i;
  }
  return -1;
}

void Unguard(int slot) {
  if (slot < 0) return;  // -1: none, -2: a copy
  g_guard[slot].begin.store(0, std::memory_order_release);
  g_guard[slot].taken.store(false, std::memory_order_release);
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
    guard_ = std::exchange(o.guard_, -1);
  }
  return *this;
}

IndexFileText::~IndexFileText() { Reset(); }

bool IndexFileText::intact() const {
  return guard_ < 0 || !g_guard[guard_].torn.load(std::memory_order_acquire);
}

void IndexFileText::Reset() {
  if (guard_ == -2) delete[] data_;  // a copy (CopyAndCheck)
  Unguard(guard_);                   // before the unmap: the range may be mapped again by anyone
  guard_ = -1;
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

// Reads `path` into memory (new[]) and checks it: the fallback when no guard slot is free.
Result<IndexFileText> CopyAndCheck(const std::string& path, const IndexFileKind& kind) {
  struct stat st {};
  const int fd = OpenRegularFile(path, &st);
  if (fd < 0 && errno == EINVAL) return IoError(path + ": not a regular file of at most 1 GiB");
  if (fd < 0) return IoError(path + ": " + std::strerror(errno));
  if (static_cast<uint64_t>(st.st_size) > kMaxIndexBytes) {
    ::close(fd);
    return IoError(path + ": not a regular file of at most 1 GiB");
  }
  const auto size = static_cast<size_t>(st.st_size);
  char* buf = new char[size == 0 ? 1 : size];
  size_t got = 0;
  while (got < size) {
    const ssize_t r = ::pread(fd, buf + got, size - got, static_cast<off_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  IndexFileText text(buf, got, false, -2);  // -2: owned (new[])
  std::string why;
  if (!CheckIndexBytes(std::string_view(buf, got), kind, &why)) return InvalidArgument(why);
  return text;
}

// Maps `path` and checks it; blocking (runs on a deadline worker).
Result<IndexFileText> MapAndCheck(const std::string& path, const IndexFileKind& kind) {
  struct stat st {};
  const int fd = OpenRegularFile(path, &st);
  if (fd < 0 && errno == EINVAL) return IoError(path + ": not a regular file");
  if (fd < 0) return IoError(path + ": " + std::strerror(errno));
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
  // Guarded: a file cut short under the mapping reads as zeros (and fails its checksum, or is
  // seen by the reader's intact()), never SIGBUS. Without a free guard slot the file is copied.
  const int guard = Guard(m, size);
  if (guard < 0) {
    ::munmap(m, size);
    return CopyAndCheck(path, kind);
  }
  IndexFileText text(static_cast<const char*>(m), size, true, guard);
  std::string why;
  if (!CheckIndexBytes(std::string_view(static_cast<const char*>(m), size), kind, &why)) {
    return InvalidArgument(why);
  }
  if (!text.intact()) return InvalidArgument(std::string(kind.what) + ": cut short while read");
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
