// Reads a watch history database through the store's reader (store/history_store.h) into
// FleetData: the node name (meta.hostname), the card ledger (table gpus: one Card per row, with
// samples at first_seen_s and last_seen_s that carry no values, where no measured sample falls
// in the same window) and the finding episodes (table
// findings: each episode is one finding at first_seen_ms, so each is an onset; an episode not
// resolved is also present at the database's latest time, so the health table shows it now),
// and the per-GPU metric series (SM clock, power, utilisation, temperature, clock event
// reasons, ECC and PCIe replay counters; max SM clock and power limit as card constants) through
// HistoryReader::QuerySeries, at least one point per `window_s` (at most 20,000 per series,
// downsampled by the store beyond), each point a sample of the card that held that GPU index at
// that time, so stragglers are judged from watch databases as from reports. Values outside
// physical ranges (fleet_model.h) are dropped and counted in one input problem.
// Errors (not a gpudoctor history, newer schema, unreadable) name the file; the database is
// opened read-only with a 2 s busy timeout (watch may be writing), only when it is a regular file
// (SQLite would block on a FIFO); reading ends at `deadline` (timeout) and at 1,000,000 rows per
// table (invalid_argument).
#pragma once

#include <string>

#include "core/deadline.h"
#include "core/status.h"
#include "fleet/fleet_model.h"

namespace gpudoctor::fleet {

Status ReadHistoryDb(const std::string& path, FleetData& data,
                     TimePoint deadline = SteadyClock::now() + std::chrono::seconds(10),
                     int64_t window_s = 300);

}  // namespace gpudoctor::fleet
