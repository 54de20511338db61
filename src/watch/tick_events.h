// History events derived by comparing one tick with the one before: reboots
// (boot id), driver version changes, GPUs appearing or leaving (by serial, else uuid, else bus
// id) and new Xid lines per GPU and code. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "facts/snapshot.h"
#include "watch/watch_types.h"

namespace gpudoctor {

// What the previous tick left for comparison.
struct EventBaseline {
  bool valid = false;  // false on the daemon's first tick: only a reboot seen in the store
  std::string boot_id;
  std::string driver_version;
  std::vector<std::string> gpu_keys;                         // GpuIdentityKey of every GPU seen
  std::vector<std::pair<std::string, uint64_t>> xid_counts;  // "<bus>|<xid>" -> lines
};

// Events of `now` against `before`; `stored_boot_id` is the last boot id the history knew
// (used on the first tick to notice a reboot while the daemon was down).
std::vector<HistoryEvent> DeriveEvents(const EventBaseline& before, const Snapshot& now,
                                       const std::string& boot_id,
                                       const std::string& stored_boot_id, int64_t unix_ms);

EventBaseline BaselineOf(const Snapshot& snap, const std::string& boot_id);

}  // namespace gpudoctor
