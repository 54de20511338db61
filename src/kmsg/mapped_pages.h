// MappedPages: an anonymous private mapping for the kernel-log scanners' buffers, zero-filled
// until written, unmapped when destroyed, backed by the page kind its use asks for:
//  - kHuge: the working memory of one scan of a large input (the read buffer and the Xid repeat
//    cache's table), a whole number of 2 MiB huge pages, 2 MiB-aligned and advised
//    MADV_HUGEPAGE, so that its first touch maps one huge page with one page fault instead of
//    ~100 faults of 4 KiB pages. On virtual machines with shadow paging a page fault costs
//    10-15 µs (docs/cost.md), several times the scan of a 128 KiB buffer. The kernel zeroes the
//    whole huge page at the first byte written: only worth it for inputs of several MiB
//    (ScanLogFd uses it for regular files of kLargeInputBytes or more).
//  - kSmall: advised MADV_NOHUGEPAGE, so that only the 4 KiB pages written are faulted in and
//    zeroed: a buffer sized for the worst case of which a little is used (the syslog(2) ring
//    text: 25 KiB written of a 2 MiB buffer is 7 faults, where a huge page cleared all of it,
//    ~1 ms of a `check`, docs/cost.md 22nd round).
// Advice the kernel refuses or ignores (no transparent huge pages, none free) leaves ordinary
// pages: the same cost as any other memory, never an error.
// Move-only; thread-compatible.
#pragma once

#include <cstddef>

namespace gpudoctor {

class MappedPages {
 public:
  enum class Kind { kSmall, kHuge };
  static constexpr size_t kHugePageBytes = size_t{2} << 20;

  // Maps `bytes` (kHuge: rounded up to whole huge pages); no page is touched yet. data() is
  // nullptr when the mapping failed or `bytes` is 0.
  MappedPages(size_t bytes, Kind kind);
  ~MappedPages();
  MappedPages(MappedPages&& o) noexcept : data_(o.data_), size_(o.size_) {
    o.data_ = nullptr;
    o.size_ = 0;
  }
  MappedPages& operator=(MappedPages&& o) noexcept;
  MappedPages(const MappedPages&) = delete;
  MappedPages& operator=(const MappedPages&) = delete;

  // size() bytes (kHuge: kHugePageBytes-aligned); nullptr when nothing is mapped.
  char* data() const { return data_; }
  // Bytes mapped: 0 when nothing is.
  size_t size() const { return size_; }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace gpudoctor
