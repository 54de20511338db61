// Names for gpudoctor's threads, so that an operator can tell them apart where the kernel shows
// a thread: `top -H`, `ps -L`, /proc/PID/task/TID/comm, and the hung-task report of a thread stuck
// in a driver call ("task gd-worker:4242 blocked for more than 120 seconds"). The main thread
// keeps the program's name (pgrep, systemd and the process probes match it).
//
// The names in use, one per role:
//   gd-worker     deadline pool (core/deadline.h): probes, NVML calls, fleet file reads
//   gd-store      the history store's writer (store/history_store.h)
//   gd-http       the HTTP listener's event loop (serve/http_loop.h)
//   gd-http-work  its request workers
//   gd-notify     one per notifier (notify/notifier.h)
//   gd-ledger     fleet's ledger builder (cli/fleet_command.cc)
// bench/watch_one_cpu.sh sums `watch`'s CPU by these names.
#pragma once

#include <string_view>

namespace gpudoctor {

// The kernel keeps at most this many bytes of a thread's name (TASK_COMM_LEN less the NUL).
inline constexpr size_t kMaxThreadNameBytes = 15;

// Names the calling thread `name`, cut to kMaxThreadNameBytes. A name is only a label: failure
// (no procfs, a seccomp filter) is ignored. Thread-safe: names the calling thread only.
void NameThisThread(std::string_view name);

}  // namespace gpudoctor
