// Memory upkeep of the long-running `watch` daemon: keeps its resident set to what it uses.
// (Fixed malloc mmap/trim thresholds were tried and dropped: a tick's large buffers, from the
// store writer, sock_diag replies and file reads, were then mapped and unmapped every tick, about
// 65 page faults a tick, which cost more CPU on the development VM than the memory they saved;
// malloc_trim below returns free pages from inside the heap as well.)
//  - TrimHeap(): free heap memory of every malloc arena back to the kernel (malloc_trim).
//  - ReleaseCode(): drops this process's mappings of the pages of the read-only segments (code,
//    constants) of the program and its libraries (MADV_DONTNEED on these private file mappings;
//    the vDSO is left alone). The pages stay in the page cache: code that runs again faults back
//    in at its next use (a minor fault, mapping its 64 KiB neighbourhood), code that does not
//    (start-up, option parsing, the first tick's one-off reads, a slow round long past) stops
//    counting in the resident set. Writable segments (data, RELRO) are never touched, so no
//    state is lost: read-only file pages are re-read as they were.
// Nothing breaks when the kernel declines advice (EINVAL on odd ranges is ignored).
// Thread-safe (malloc_trim and madvise are); meant for once a minute or less, not per tick.
#pragma once

#include <cstddef>

namespace gpudoctor {

// True when some memory was given back.
bool TrimHeap();

// Bytes of read-only mappings released (0 when madvise refused every range).
size_t ReleaseCode();

// The watch loop's schedule, `tick` counting from 1; tick 0 is "set-up done, no tick yet".
// Heap and code at tick 0 (set-up: configuration, history database, HTTP server) and after
// tick 1 (the first tick's one-off reads); then both every kTrimEveryTicks ticks, which also
// drops the one-offs that come after tick 1 (the first slow round, the first acknowledgement
// poll's history reader) and whatever a rare path ran since. Every released page that runs again
// costs a page fault, so this relies on the code layout (cmake/layout.order, docs/cost.md "watch
// RSS"): what a tick runs sits together and comes back in about 80 faults of 64 KiB each
// (measured on the development VM, 9 minutes beside the same build releasing hourly: 3.0 instead
// of 1.7 minor faults a second, CPU per tick within the noise). With the code scattered as
// before the layout, releasing every 10 ticks cost ~900 faults and 3 ms a tick, hence the hourly
// release then.
inline constexpr unsigned long long kTrimEveryTicks = 60;
inline constexpr unsigned long long kReleaseCodeEveryTicks = 60;
void MemoryUpkeepAfterTick(unsigned long long tick);

}  // namespace gpudoctor
