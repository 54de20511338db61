// Live kernel-log sources. /dev/kmsg: opened O_NONBLOCK (EAGAIN = end of the ring, EPIPE = the
// ring overran while reading: counted, reading goes on; sequence gaps counted as lost records),
// one record per read into a 16 KiB buffer; boot-relative stamps become wall time through
// CLOCK_REALTIME - CLOCK_MONOTONIC sampled at open. A regular file at that path (fixture trees)
// is scanned as text. The systemd journal: kernel entries (_TRANSPORT=kernel) of the current boot
// through libsystemd.so.0, loaded with dlopen (absent library = unsupported, never an error of
// the host). Both stop at the deadline or after max_records and say so in the facts.
// Not thread-safe per scanner; the functions themselves keep no global state.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/deadline.h"
#include "core/status.h"
#include "kmsg/log_scanner.h"

namespace gpudoctor {

struct LiveReadLimits {
  TimePoint deadline = TimePoint::max();
  uint64_t max_records = 2'000'000;
};

// Wall-clock time of boot in µs (CLOCK_REALTIME - CLOCK_MONOTONIC, now).
int64_t BootWallTimeUs();

// Reads the kmsg ring at `path` (RootPath("/dev/kmsg")). When `path` is the kernel's own kmsg
// device (character device 1:11), its oldest record is read and the ring is taken whole through
// syslog(2) (ScanSyslogRing: two system calls instead of one read(2) a record, ~1.5 µs each);
// when that cannot stand in, record by record from the oldest as before. Errors: not_found,
// permission_denied (dmesg_restrict, printk.devkmsg=off), io_error.
Status ReadKmsg(const std::string& path, KernelLogScanner& scanner, const LiveReadLimits& limits);

// Reads the records of an open /dev/kmsg descriptor (O_NONBLOCK) up to the end of the ring, one
// read(2) a record, counting overruns and sequence gaps against `last_seq` (updated). ReadKmsg and
// KmsgTail::Poll use it; exposed for tests.
Status ReadKmsgRecords(int fd, const std::string& path, KernelLogScanner& scanner,
                       const LiveReadLimits& limits, std::optional<uint64_t>& last_seq);

// The kernel's syslog(2) calls ScanSyslogRing needs: the ring's size in bytes
// (SYSLOG_ACTION_SIZE_BUFFER) and its whole text (SYSLOG_ACTION_READ_ALL: "<prio>[secs.usecs]
// text" lines, a PRINTK_CALLER id after the stamp where the kernel has one); both return < 0
// with errno set on failure. Tests pass their own.
struct SyslogRingApi {
  int (*size)();
  int (*read_all)(char* buf, int len);
};
const SyslogRingApi& KernelSyslogRing();  // klogctl(2)

// Scans the ring's text from one SYSLOG_ACTION_READ_ALL and returns true, or returns false
// having scanned nothing when the text cannot stand in for the records: the calls fail (no
// CAP_SYSLOG under dmesg_restrict, seccomp), the ring is over 16 MiB, the text filled the buffer,
// its first line has no time stamp (printk.time off: the records carry one whatever that
// setting), or that stamp is not `first_record_us`, the oldest /dev/kmsg record's (syslog(2)
// starts after the last `dmesg -C`, and a text too long for the buffer loses its oldest lines).
// records_read counts the text's lines (a record printed on several lines counts once per line);
// sequence gaps and overruns cannot occur in a text taken under the kernel's lock. The scan has
// no deadline of its own: at most 16 MiB of ring, tens of ms.
bool ScanSyslogRing(KernelLogScanner& scanner, const SyslogRingApi& api, int64_t first_record_us);

// A kernel-log reader kept open across the ticks of `watch`: /dev/kmsg stays open and each
// Poll reads only the records that arrived since the last one (a regular file at the path, as
// in fixture trees, is tailed from its last offset). Events accumulate in one scanner, so the
// facts cover the whole boot. Errors: as ReadKmsg, from the first open or a read.
// Not thread-safe: one Poll at a time (the watch runner never overlaps runs of a probe).
class KmsgTail {
 public:
  KmsgTail(std::string path, KernelLogScanOptions options);
  ~KmsgTail();
  KmsgTail(const KmsgTail&) = delete;
  KmsgTail& operator=(const KmsgTail&) = delete;

  Result<KernelLogFacts> Poll(const LiveReadLimits& limits);

 private:
  std::string path_;
  int fd_ = -1;
  bool is_text_ = false;
  std::optional<uint64_t> last_seq_;
  std::unique_ptr<KernelLogScanner> scanner_;
};

// Reads the current boot's kernel messages from the local journal. Errors: unsupported (no
// libsystemd or a symbol missing), not_found / permission_denied / io_error from sd_journal_open.
Status ReadJournal(KernelLogScanner& scanner, const LiveReadLimits& limits);

}  // namespace gpudoctor
