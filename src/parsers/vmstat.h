// Parser for /proc/vmstat (proc(5)): "name value" lines of counters since boot. Pure functions;
// thread-safe. Unknown counters are ignored; missing ones stay absent.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/status.h"

namespace gpudoctor {

// Counters of /proc/vmstat ("name value" lines), in pages or events since boot.
struct VmstatCounters {
  std::optional<uint64_t> pswpin;    // pages swapped in
  std::optional<uint64_t> pswpout;   // pages swapped out
  std::optional<uint64_t> oom_kill;  // OOM kills (kernel >= 4.13)
};

// Errors: parse_error when a used counter is not a number, or when none of them is present.
Result<VmstatCounters> ParseVmstat(std::string_view text);

// Rate of a monotonic counter between two samples `window_s` apart, per second. nullopt when a
// sample lacks the counter, the window is not positive, or the counter went backwards.
std::optional<double> CounterRate(std::optional<uint64_t> before, std::optional<uint64_t> after,
                                  double window_s);

}  // namespace gpudoctor
