// [gpu] expected_count from the history: when the config leaves it unset (0 is "not checked"
// only when written), `check` and `watch` expect the number of GPUs the history last saw, so a
// card that fell off the bus across a reboot is gpu.missing without any configuration.
//
// "Last seen": the GPU ledger (store_schema.h, table gpus) rows whose last_seen_s is within
// kLastSeenSlackS of the newest last_seen_s, counted by slot (PCI bus id; uuid or serial when the
// bus id is empty). `watch` reads it once at start, before its first tick writes the ledger, and
// keeps it for the whole run (so a card that falls off while it runs stays missing); `check`
// reads it each run. Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/settings.h"
#include "store/history_store.h"

namespace gpudoctor {

inline constexpr int64_t kLastSeenSlackS = 300;

// Pure: the count of slots seen at the ledger's last time; nullopt for an empty ledger.
std::optional<int> LastSeenGpuCount(const std::vector<StoredGpu>& ledger,
                                    int64_t slack_s = kLastSeenSlackS);

// Reads the ledger of the database at `db_path` (read-only) before `deadline`; nullopt when the
// file does not exist, cannot be read in time, or holds no GPU yet.
std::optional<int> ReadLastSeenGpuCount(const std::string& db_path, TimePoint deadline);

// Sets gpu.missing expected_count to `count` unless the config set it, and marks it as coming
// from the history (threshold key kExpectedFromHistoryKey = 1, read by the rule for evidence).
// Returns true when it applied.
bool ApplyHistoryGpuCount(Settings& settings, std::optional<int> count);

inline constexpr const char* kExpectedFromHistoryKey = "expected_count_from_history";

}  // namespace gpudoctor
