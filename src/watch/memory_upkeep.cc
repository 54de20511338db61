#include "watch/memory_upkeep.h"

#include <elf.h>
#include <link.h>
#include <malloc.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace gpudoctor {
namespace {

int ReleaseObject(struct dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* released = static_cast<size_t*>(data);
  // The vDSO is the kernel's own mapping, not a file's: left as it is.
  const uintptr_t vdso = static_cast<uintptr_t>(getauxval(AT_SYSINFO_EHDR));
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    // Read-only loadable segments only: code and constants, backed by the file and never
    // written. Writable ones (data, relocations made writable then read-only again by RELRO)
    // hold state and are left as they are.
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) != 0 || ph.p_memsz == 0) continue;
    const uintptr_t start = (info->dlpi_addr + ph.p_vaddr) & ~(page - 1);
    const uintptr_t end = (info->dlpi_addr + ph.p_vaddr + ph.p_memsz + page - 1) & ~(page - 1);
    if (vdso != 0 && vdso >= start && vdso < end) continue;
    if (madvise(reinterpret_cast<void*>(start), end - start, MADV_DONTNEED) == 0) {
      *released += end - start;
    }
  }
  return 0;
}

}  // namespace

bool TrimHeap() { return malloc_trim(0) != 0; }

size_t ReleaseCode() {
  size_t released = 0;
  dl_iterate_phdr(ReleaseObject, &released);
  return released;
}

void MemoryUpkeepAfterTick(unsigned long long tick) {
  const bool start = tick <= 1;  // set-up done, first tick done
  if (start || tick % kTrimEveryTicks == 0) TrimHeap();
  if (start || tick % kReleaseCodeEveryTicks == 0) ReleaseCode();
}

}  // namespace gpudoctor
