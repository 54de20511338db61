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

// Reads the kmsg ring at `path` (RootPath("/dev/kmsg")). Errors: not_found, permission_denied
// (dmesg_restrict, printk.devkmsg=off), io_error.
Status ReadKmsg(const std::string& path, KernelLogScanner& scanner, const LiveReadLimits& limits);

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
