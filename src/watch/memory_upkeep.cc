#include "watch/memory_upkeep.h"

#include <elf.h>
#include <link.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21  // linux/mman.h, Linux 5.4
#endif

namespace gpudoctor {
namespace {

int PageOutObject(struct dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* advised = static_cast<size_t*>(data);
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    // Read-only loadable segments only: code and constants, backed by the file. Writable ones
    // (data, relocations made writable then read-only again by RELRO) are left as they are.
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) != 0 || ph.p_memsz == 0) continue;
    const uintptr_t start = (info->dlpi_addr + ph.p_vaddr) & ~(page - 1);
    const uintptr_t end = (info->dlpi_addr + ph.p_vaddr + ph.p_memsz + page - 1) & ~(page - 1);
    if (madvise(reinterpret_cast<void*>(start), end - start, MADV_PAGEOUT) == 0) {
      *advised += end - start;
    }
  }
  return 0;
}

}  // namespace

bool TrimHeap() { return malloc_trim(0) != 0; }

size_t PageOutCode() {
  size_t advised = 0;
  dl_iterate_phdr(PageOutObject, &advised);
  return advised;
}

void MemoryUpkeepAfterTick(unsigned long long tick) {
  if (tick == 1) {  // start-up is over: its code and heap are not needed again
    TrimHeap();
    PageOutCode();
    return;
  }
  if (tick == 0 || tick % 60 != 0) return;
  TrimHeap();
  if (tick % 3600 == 0) PageOutCode();
}

}  // namespace gpudoctor
