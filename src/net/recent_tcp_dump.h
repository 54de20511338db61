// RecentTcpDump: one TCP socket table (DumpTcpSockets) for the probes of one `watch` round. The
// sockets probe (bytes per process and peer) and the suspicious probe (established connections,
// stratum ports) each dumped the table in the same round: the kernel walked its whole
// established-connection hash twice (its size, not the sockets', sets a dump's cost: about
// 1.3 ms each on a host with 262144 buckets), and on a host with thousands of connections two
// tables were alive at once. Now a dump that ended at most `max_age` before the call (and, with
// `newer_than`, after that time) and that a caller still holds is handed out again; otherwise a
// new one is taken. The cache holds no table itself (a weak reference): what the round's probes
// hold (probes/round_walk.h: RoundTcpDump keeps it for the tick) is all that is kept.
// A caller that cannot get the cache's lock before `deadline` takes a dump of its own.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "net/sock_diag.h"

namespace gpudoctor {

// A TCP socket table as dumped, and when the dump ended.
struct TcpTable {
  Result<std::vector<TcpSocketInfo>> sockets = std::vector<TcpSocketInfo>{};
  TimePoint at{};
};

// Never null. A failed dump (no sock_diag) is a table whose `sockets` holds the error; it is
// shared like a good one.
std::shared_ptr<const TcpTable> RecentTcpDump(std::chrono::milliseconds max_age,
                                              std::optional<TimePoint> deadline,
                                              std::optional<TimePoint> newer_than = {});

// Dumps RecentTcpDump has taken in this process (for tests and cost accounting).
uint64_t RecentTcpDumpsTaken();

}  // namespace gpudoctor
