#include "kmsg/mapped_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace gpudoctor {

MappedPages::MappedPages(size_t bytes, Kind kind) {
  if (bytes == 0) return;
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  if (kind == Kind::kSmall) {
    void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (m == MAP_FAILED) return;
#ifdef MADV_NOHUGEPAGE
    (void)::madvise(m, bytes, MADV_NOHUGEPAGE);  // a kernel without THP refuses: no matter
#endif
    data_ = static_cast<char*>(m);
    size_ = bytes;
    return;
  }
  const size_t size = (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  // One huge page more, then the unaligned ends returned: a 2 MiB-aligned region, the only
  // shape huge pages can back.
  const size_t span = size + kHugePageBytes;
  void* m = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (m == MAP_FAILED) return;
  const auto begin = reinterpret_cast<uintptr_t>(m);
  const uintptr_t aligned = (begin + kHugePageBytes - 1) & ~(uintptr_t{kHugePageBytes} - 1);
  if (aligned > begin) ::munmap(m, aligned - begin);
  const uintptr_t end = begin + span;
  if (end > aligned + size) ::munmap(reinterpret_cast<void*>(aligned + size), end - aligned - size);
  data_ = reinterpret_cast<char*>(aligned);
  size_ = size;
#ifdef MADV_HUGEPAGE
  (void)::madvise(data_, size_, MADV_HUGEPAGE);  // a hint: refused or ignored, 4 KiB pages back it
#endif
}

MappedPages::~MappedPages() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

MappedPages& MappedPages::operator=(MappedPages&& o) noexcept {
  if (this != &o) {
    if (data_ != nullptr) ::munmap(data_, size_);
    data_ = o.data_;
    size_ = o.size_;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

}  // namespace gpudoctor
