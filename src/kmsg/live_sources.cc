#include "kmsg/live_sources.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "core/strings.h"
#include "kmsg/mapped_pages.h"

namespace gpudoctor {
namespace {

int64_t ClockUs(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

Status OpenError(const std::string& what, int err) {
  std::string m = what + ": " + std::strerror(err);
  if (err == ENOENT || err == ENXIO || err == ENODEV) return NotFound(m);
  if (err == EACCES || err == EPERM) return PermissionDenied(m);
  return IoError(m);
}

// Our own declarations of the few sd-journal calls we use (libsystemd's ABI, stable since v209).
struct SdId128 {
  uint8_t bytes[16];
};
struct SdJournal;
struct JournalApi {
  int (*open)(SdJournal**, int);
  int (*add_match)(SdJournal*, const void*, size_t);
  int (*seek_head)(SdJournal*);
  int (*next)(SdJournal*);
  int (*get_data)(SdJournal*, const char*, const void**, size_t*);
  int (*get_realtime_usec)(SdJournal*, uint64_t*);
  int (*get_monotonic_usec)(SdJournal*, uint64_t*, SdId128*);
  void (*close)(SdJournal*);
  int (*get_boot)(SdId128*);
};
constexpr int kSdJournalLocalOnly = 1;
constexpr int kSdJournalSystem = 4;

// Loaded once; nullptr when libsystemd or a symbol is missing. The handle is never closed.
const JournalApi* LoadJournalApi() {
  static const JournalApi* api = []() -> const JournalApi* {
    void* h = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return nullptr;
    static JournalApi a;
    bool ok = true;
    auto sym = [&](auto& fn, const char* name) {
      void* p = dlsym(h, name);
      if (p == nullptr) ok = false;
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    sym(a.open, "sd_journal_open");
    sym(a.add_match, "sd_journal_add_match");
    sym(a.seek_head, "sd_journal_seek_head");
    sym(a.next, "sd_journal_next");
    sym(a.get_data, "sd_journal_get_data");
    sym(a.get_realtime_usec, "sd_journal_get_realtime_usec");
    sym(a.get_monotonic_usec, "sd_journal_get_monotonic_usec");
    sym(a.close, "sd_journal_close");
    sym(a.get_boot, "sd_id128_get_boot");
    return ok ? &a : nullptr;
  }();
  return api;
}

}  // namespace

int64_t BootWallTimeUs() { return ClockUs(CLOCK_REALTIME) - ClockUs(CLOCK_MONOTONIC); }

Status ReadKmsgRecords(int fd, const std::string& path, KernelLogScanner& scanner,
                       const LiveReadLimits& limits, std::optional<uint64_t>& last_seq) {
  KernelLogFacts& facts = scanner.facts();
  constexpr size_t kRecordBuf = 16 * 1024;
  std::unique_ptr<char[]> buf(new char[kRecordBuf]);
  int einval = 0;
  for (;;) {
    if (facts.records_read >= limits.max_records || SteadyClock::now() >= limits.deadline) {
      facts.stopped_at_deadline = true;
      break;
    }
    ssize_t n = ::read(fd, buf.get(), kRecordBuf);
    if (n < 0) {
      int err = errno;
      if (err == EINTR) continue;
      if (err == EAGAIN) break;  // end of the ring
      if (err == EPIPE) {        // overwritten while we read: position moved to the oldest
        ++facts.kmsg_overruns;
        continue;
      }
      if (err == EINVAL && ++einval < 64) {  // record larger than the buffer (skipped)
        ++facts.truncated_lines;
        continue;
      }
      return IoError(path + ": read: " + std::strerror(err));
    }
    if (n == 0) break;
    ++facts.records_read;
    facts.bytes_scanned += static_cast<uint64_t>(n);
    std::string_view rec(buf.get(), static_cast<size_t>(n));
    // "prio,seq,usec,flags;text\n KEY=value\n": the first line is the message.
    if (size_t nl = rec.find('\n'); nl != std::string_view::npos) rec = rec.substr(0, nl);
    size_t c1 = rec.find(','), c2 = c1 == rec.npos ? rec.npos : rec.find(',', c1 + 1);
    if (c2 != rec.npos) {
      if (auto seq = ParseUint64(rec.substr(c1 + 1, c2 - c1 - 1))) {
        if (last_seq && *seq > *last_seq + 1) facts.kmsg_records_lost += *seq - *last_seq - 1;
        last_seq = seq;
      }
    }
    scanner.ScanText(rec);
  }
  return Status::Ok();
}

const SyslogRingApi& KernelSyslogRing() {
  // syslog(2)'s action numbers (glibc's <sys/klog.h> declares klogctl without them).
  constexpr int kReadAll = 3, kSizeBuffer = 10;
  static const SyslogRingApi api{
      +[]() -> int { return klogctl(kSizeBuffer, nullptr, 0); },
      +[](char* buf, int len) -> int { return klogctl(kReadAll, buf, len); }};
  return api;
}

bool ScanSyslogRing(KernelLogScanner& scanner, const SyslogRingApi& api, int64_t first_record_us) {
  constexpr int kMaxRing = 16 << 20;
  const int ring = api.size();
  if (ring <= 0 || ring > kMaxRing) return false;
  // The text is longer than the ring's data by each record's prefix ("<6>[   12.345678][  T123] ",
  // 15-31 bytes, on every line of a record of several lines): twice the ring holds it unless the
  // records are mostly a few bytes each. Where it does not, the kernel drops the oldest lines and
  // the first line no longer matches the first record: refused below. The buffer is in small
  // pages: the kernel writes only the text's pages (a 25 KiB ring text is 7 faults), where the
  // scanner's 2 MiB huge page used to be zeroed whole at the first byte written: ~1 ms of a
  // `check` on this VM (6% of its samples, all under syslog(2); docs/cost.md, 22nd round).
  const int cap = 2 * ring + (64 << 10);
  MappedPages pages(static_cast<size_t>(cap), MappedPages::Kind::kSmall);
  char* buf = pages.data();
  if (buf == nullptr) return false;
  const int n = api.read_all(buf, cap);
  if (n <= 0 || n >= cap) return false;
  std::string_view text(buf, static_cast<size_t>(n));
  std::string_view first = text.substr(0, text.find('\n'));
  LineFormatState probe_state;
  ParsedLine parsed = ParseLinePrefix(first, probe_state);
  // A stamp (printk.time on), and the same record as the ring's first: syslog(2) starts after
  // the last `dmesg -C`/`-c` where /dev/kmsg starts at the oldest record, and a text that did
  // not fit starts later.
  if (parsed.shape != LineShape::kDmesg || first[0] != '<' ||
      parsed.time.boot_us != first_record_us) {
    return false;
  }
  KernelLogFacts& facts = scanner.facts();
  facts.source = "kmsg";
  facts.records_read += static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n')) +
                        (text.back() == '\n' ? 0 : 1);
  facts.bytes_scanned += text.size();
  scanner.ScanText(text);
  return true;
}

namespace {

// The stamp (µs since boot) of the oldest record of an open /dev/kmsg, read with one read(2);
// the descriptor is set back to that record. nullopt: an empty ring, an unreadable record, or a
// descriptor that cannot be set back (the caller then reads the records as they come).
std::optional<int64_t> FirstRecordUs(int fd) {
  char rec[1024];
  ssize_t n;
  do {
    n = ::read(fd, rec, sizeof(rec));
  } while (n < 0 && (errno == EINTR || errno == EPIPE));
  // EINVAL: the first record is over 1 KiB; it is read whole by the records path.
  if (::lseek(fd, 0, SEEK_SET) != 0 || n <= 0) return std::nullopt;
  std::string_view line(rec, static_cast<size_t>(n));
  LineFormatState state;
  ParsedLine parsed = ParseLinePrefix(line.substr(0, line.find('\n')), state);
  if (parsed.shape != LineShape::kRawKmsg || !parsed.time.boot_us) return std::nullopt;
  return *parsed.time.boot_us;
}

}  // namespace

Status ReadKmsg(const std::string& path, KernelLogScanner& scanner, const LiveReadLimits& limits) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return OpenError(path, errno);
  KernelLogFacts& facts = scanner.facts();
  facts.source = "kmsg";
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  if (stat_ok && !S_ISCHR(st.st_mode)) {
    // A saved ring in a fixture tree: plain text, one record per line.
    Status s = ScanLogFd(fd, scanner, limits.deadline);
    ::close(fd);
    return s;
  }
  // The kernel's kmsg device, opened (so readable: the same permission as syslog(2)'s): the whole
  // ring in one call where it can stand in for the records.
  if (stat_ok && major(st.st_rdev) == 1 && minor(st.st_rdev) == 11) {
    if (auto first_us = FirstRecordUs(fd)) {
      if (ScanSyslogRing(scanner, KernelSyslogRing(), *first_us)) {
        ::close(fd);
        return Status::Ok();
      }
    }
  }
  std::optional<uint64_t> last_seq;
  Status s = ReadKmsgRecords(fd, path, scanner, limits, last_seq);
  ::close(fd);
  return s;
}

KmsgTail::KmsgTail(std::string path, KernelLogScanOptions options)
    : path_(std::move(path)), scanner_(std::make_unique<KernelLogScanner>(options)) {}

KmsgTail::~KmsgTail() {
  if (fd_ >= 0) ::close(fd_);
}

Result<KernelLogFacts> KmsgTail::Poll(const LiveReadLimits& limits) {
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) return OpenError(path_, errno);
    struct stat st {};
    is_text_ = ::fstat(fd_, &st) == 0 && !S_ISCHR(st.st_mode);
    scanner_->facts().source = "kmsg";
  }
  scanner_->facts().stopped_at_deadline = false;
  Status s = is_text_ ? ScanLogFd(fd_, *scanner_, limits.deadline)
                      : ReadKmsgRecords(fd_, path_, *scanner_, limits, last_seq_);
  if (!s.ok()) return s;
  return scanner_->Current();
}

Status ReadJournal(KernelLogScanner& scanner, const LiveReadLimits& limits) {
  const JournalApi* api = LoadJournalApi();
  if (api == nullptr) return Unsupported("libsystemd.so.0 (sd-journal) not available");
  SdJournal* j = nullptr;
  int r = api->open(&j, kSdJournalLocalOnly | kSdJournalSystem);
  if (r < 0) return OpenError("sd_journal_open", -r);
  KernelLogFacts& facts = scanner.facts();
  facts.source = "journal";
  static constexpr char kTransport[] = "_TRANSPORT=kernel";
  api->add_match(j, kTransport, sizeof(kTransport) - 1);
  SdId128 boot{};
  if (api->get_boot(&boot) >= 0) {
    char match[64] = "_BOOT_ID=";
    static constexpr char kHex[] = "0123456789abcdef";
    for (int k = 0; k < 16; ++k) {
      match[9 + 2 * k] = kHex[boot.bytes[k] >> 4];
      match[10 + 2 * k] = kHex[boot.bytes[k] & 15];
    }
    api->add_match(j, match, 9 + 32);
  }
  api->seek_head(j);
  while (api->next(j) > 0) {
    if (facts.records_read >= limits.max_records ||
        ((facts.records_read & 255) == 0 && SteadyClock::now() >= limits.deadline)) {
      facts.stopped_at_deadline = true;
      break;
    }
    ++facts.records_read;
    const void* data = nullptr;
    size_t len = 0;
    if (api->get_data(j, "MESSAGE", &data, &len) < 0 || len < 8) continue;
    std::string_view msg(static_cast<const char*>(data) + 8, len - 8);  // skip "MESSAGE="
    facts.bytes_scanned += msg.size();
    LogTime t;
    uint64_t usec = 0;
    if (api->get_realtime_usec(j, &usec) >= 0) t.wall_us = static_cast<int64_t>(usec);
    SdId128 entry_boot{};
    if (api->get_monotonic_usec(j, &usec, &entry_boot) >= 0) t.boot_us = static_cast<int64_t>(usec);
    scanner.ScanMessage(msg, t);
  }
  api->close(j);
  return Status::Ok();
}

}  // namespace gpudoctor
