// Parser for /proc/meminfo (proc(5)). Pure functions on file contents;
// thread-safe.
//
// /proc/meminfo lines are "Key:   <value> kB" (a few keys, e.g. HugePages_Total, have no unit).
// Values are converted to bytes; a value whose byte count would overflow 64 bits is rejected as a
// parse error naming the key. Keys the parser does not use are ignored; missing keys stay absent.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/status.h"

namespace gpudoctor {

struct Meminfo {
  std::optional<uint64_t> total_bytes;      // MemTotal
  std::optional<uint64_t> available_bytes;  // MemAvailable (kernel >= 3.14)
  std::optional<uint64_t> free_bytes;       // MemFree
  std::optional<uint64_t> swap_total_bytes;
  std::optional<uint64_t> swap_free_bytes;
  std::optional<uint64_t> shmem_bytes;  // tmpfs + shared memory (/dev/shm counts here)
};

// Errors: parse_error when MemTotal is missing, or when a used key has a malformed or absurd
// value (not a number, unknown unit, overflow, MemAvailable/MemFree > MemTotal,
// SwapFree > SwapTotal).
Result<Meminfo> ParseMeminfo(std::string_view text);

}  // namespace gpudoctor
