#include "kmsg/scan_scratch.h"

#include <sys/mman.h>

#include <cstdint>

namespace gpudoctor {

ScanScratch::ScanScratch() {
  // Twice the size, then the unaligned ends returned: a 2 MiB-aligned 2 MiB region, the only
  // shape a huge page can back.
  const size_t span = 2 * kBytes;
  void* m = ::mmap(nullptr, span, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return;
  const auto begin = reinterpret_cast<uintptr_t>(m);
  const uintptr_t aligned = (begin + kBytes - 1) & ~(uintptr_t{kBytes} - 1);
  if (aligned > begin) ::munmap(m, aligned - begin);
  const uintptr_t end = begin + span;
  if (end > aligned + kBytes)
    ::munmap(reinterpret_cast<void*>(aligned + kBytes), end - aligned - kBytes);
  data_ = reinterpret_cast<char*>(aligned);
#ifdef MADV_HUGEPAGE
  ::madvise(data_, kBytes, MADV_HUGEPAGE);  // a hint: refused or ignored, 4 KiB pages back it
#endif
}

ScanScratch::~ScanScratch() {
  if (data_ != nullptr) ::munmap(data_, kBytes);
}

ScanScratch& ScanScratch::operator=(ScanScratch&& o) noexcept {
  if (this != &o) {
    if (data_ != nullptr) ::munmap(data_, kBytes);
    data_ = o.data_;
    o.data_ = nullptr;
  }
  return *this;
}

}  // namespace gpudoctor
