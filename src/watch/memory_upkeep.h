// Memory upkeep of the long-running `watch` daemon: gives back what its resident set holds but
// no longer uses.
//  - TrimHeap(): free heap memory of every malloc arena back to the kernel (malloc_trim).
//  - PageOutCode(): asks the kernel (MADV_PAGEOUT, Linux >= 5.4) to reclaim the resident pages of
//    the read-only segments (code, constants) of the program and the libraries it has loaded.
//    Start-up code (option parsing, config, the first tick's one-off reads) is resident after the
//    first minute but never runs again; pages that do run again fault back in at their next use
//    (from the page cache). Pages shared with another process are left alone by the kernel.
// Both only advise: nothing breaks when the kernel declines (older kernels: EINVAL, ignored).
// Thread-safe (malloc_trim and madvise are); meant for once a minute or less, not per tick.
#pragma once

#include <cstddef>

namespace gpudoctor {

// True when some memory was given back.
bool TrimHeap();

// Bytes of read-only mappings advised (0 when madvise refused every range).
size_t PageOutCode();

// The watch loop's schedule: both after the first tick (start-up is over), then the heap every 60
// ticks and the code every 3600. `tick` counts from 1.
void MemoryUpkeepAfterTick(unsigned long long tick);

}  // namespace gpudoctor
