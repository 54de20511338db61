// ScanScratch: the working memory of one scan of a large input (the read buffer and the Xid
// repeat cache's table) in one 2 MiB region, 2 MiB-aligned and advised MADV_HUGEPAGE, so that
// its first touch maps one huge page with one page fault instead of ~100 faults of 4 KiB pages.
// On virtual machines with shadow paging a page fault costs 10-15 µs (docs/cost.md), several
// times the scan of a 128 KiB buffer. Where transparent huge pages are off, or the kernel finds
// no free huge page, the region is backed by 4 KiB pages as any other memory (the same cost as
// before, never an error). Zero-filled until written. Only worth it for inputs of several MiB:
// 2 MiB of RSS (ScanLogFd uses it for regular files of kLargeInputBytes or more).
// Move-only; thread-compatible.
#pragma once

#include <cstddef>

namespace gpudoctor {

class ScanScratch {
 public:
  static constexpr size_t kBytes = size_t{2} << 20;
  // Maps the region (no page touched yet); data() is nullptr when the mapping failed.
  ScanScratch();
  ~ScanScratch();
  ScanScratch(ScanScratch&& o) noexcept : data_(o.data_) { o.data_ = nullptr; }
  ScanScratch& operator=(ScanScratch&& o) noexcept;
  ScanScratch(const ScanScratch&) = delete;
  ScanScratch& operator=(const ScanScratch&) = delete;

  // kBytes bytes, 2 MiB-aligned; nullptr when the mapping failed.
  char* data() const { return data_; }

 private:
  char* data_ = nullptr;
};

}  // namespace gpudoctor
