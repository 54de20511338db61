// RoundWalk and RoundTcpDump: the /proc walk (fd and exe links) and the TCP socket table of a
// `watch` round, shared by the probes of one tick that need them (the walk: sockets, suspicious,
// inference discovery; the table: sockets, suspicious) through RecentFullScan (net/proc_scan.h)
// and RecentTcpDump (net/recent_tcp_dump.h), and held for the rest of the tick in
// ProbeContext::tick_share so that the round's next probe gets the same one instead of taking its
// own. Thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "core/deadline.h"
#include "net/proc_scan.h"
#include "net/recent_tcp_dump.h"
#include "probes/probe.h"

namespace gpudoctor {

// A walk that started at most `max_age` before this call (and, with `newer_than`, after it),
// else a new one; as RecentFullScan. Never null.
std::shared_ptr<const ProcessScan> RoundWalk(const ProbeContext& ctx,
                                             std::chrono::milliseconds max_age,
                                             std::optional<TimePoint> deadline,
                                             std::optional<TimePoint> newer_than = {});

// A TCP table dumped at most `max_age` before this call (and, with `newer_than`, after it),
// else a new one; as RecentTcpDump, bounded by the context's deadline less 200 ms. Never null.
std::shared_ptr<const TcpTable> RoundTcpDump(const ProbeContext& ctx,
                                             std::chrono::milliseconds max_age,
                                             std::optional<TimePoint> newer_than = {});

}  // namespace gpudoctor
