// XidLedger: one count of Xid errors per GPU and code for `gpudoctor watch`, from both sources
// that report them: the kernel log (NVRM: Xid lines, cumulative counts per tick from the tailing
// reader) and NVML's event API (events drained each tick). An Xid usually reaches both: a kernel
// line and an NVML event of the same GPU and code within `window` of each other are one
// occurrence. Each arrival that finds no unpaired partner from the other source within the
// window counts one and waits (up to the window) for its partner; so the tallies only grow, and
// an Xid that only one source sees (no /dev/kmsg in a container, an Xid NVML does not deliver:
// 79, 119, 120) still counts.
//
// The tallies feed gpudoctor_gpu_xid_errors_total, DCGM_FI_DEV_XID_ERRORS (the last code) and the
// "xid" history events. Kernel lines are timed by their wall-clock stamp (the tick's time when
// they carry none), NVML events by when they were drained. Not thread-safe: the tick thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>

#include "facts/snapshot.h"

namespace gpudoctor {

class XidLedger {
 public:
  explicit XidLedger(std::chrono::milliseconds window = std::chrono::seconds(10));

  // Folds this tick's kernel-log counts and NVML events into the tallies and stores all of them
  // in snap.gpu.xid_tallies.
  void Apply(Snapshot& snap, int64_t now_unix_ms);

 private:
  struct Entry {
    uint64_t kernel_lines = 0;  // the kernel log's cumulative count last seen
    uint64_t count = 0;
    int64_t last_unix_ms = 0;
    std::deque<int64_t> kernel_unpaired, nvml_unpaired;  // arrival times
  };
  // Counts one arrival at `t` unless the other source's unpaired list has a partner.
  void Arrive(Entry& e, int64_t t, bool from_kernel);

  int64_t window_ms_;
  std::map<std::pair<std::string, uint64_t>, Entry> entries_;  // (bus, xid)
};

}  // namespace gpudoctor
