// Where `gpudoctor top` reads its status document (the `check --json` contract) from.
// - Local: runs the enabled probes and the rules once per call, with the same settings as
//   `check` (BuildSettings), each call bounded by settings.deadline_s. Safe to call from one
//   thread at a time.
// - Daemon: GET <base_url>/api/v1/status of a running `gpudoctor watch` (core/http_get): the
//   whole answer within timeout_s and at most kMaxStatusBytes; an optional bearer token. Errors:
//   io_error/timeout (connect, HTTP status other than 200, too slow, too large), parse_error
//   (body not JSON, or refused by CheckStatusDocument, naming the bad field).
// The daemon fetcher returns only documents that pass CheckStatusDocument (tui/status_check.h);
// the local one renders this binary's own report.
//
// And, with --connect only, the daemon's recent GPU history for the sparklines (DaemonHistory
// Fetcher, polled by HistoryPoller): the same HTTP client, token and bounds as the status.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/deadline.h"
#include "core/settings.h"
#include "core/status.h"
#include "tui/top_model.h"

namespace gpudoctor {

using StatusFetcher = std::function<Result<nlohmann::json>()>;

StatusFetcher LocalStatusFetcher(std::shared_ptr<const Settings> settings);
StatusFetcher DaemonStatusFetcher(std::string base_url, std::string token, double timeout_s);

// The metrics the history line draws (docs/metrics.md).
inline constexpr const char* kHistoryUtilMetric = "gpudoctor_gpu_utilization_ratio";
inline constexpr const char* kHistoryTempMetric = "gpudoctor_gpu_temperature_celsius";

// The daemon's recent GPU history: GET <base_url>/api/v1/history?metric=M&since=10m&max_points=120
// for M = kHistoryUtilMetric, then kHistoryTempMetric, each answer holding every GPU's series
// (no gpu= parameter: two requests for any number of GPUs). Same token and body bound
// (kMaxStatusBytes) as the status; both requests together within timeout_s. The window ends at
// the newest sample returned (the daemon's clock, so a skewed local clock does not shift the
// line) and spans kHistoryWindowS; no sample at all gives an empty window (nothing drawn).
// Errors: io_error/timeout as the status fetch (HTTP status other than 200, with the server's
// error text); parse_error naming the bad field (ParseHistoryDocument); unsupported, with the
// server's error text, when the daemon serves no history: 503 (no store, e.g. `watch --no-db`;
// or its store cannot be opened now) or 404 (a daemon older than the history API).
// Safe to call from any one thread at a time (each call has its own HTTP handle).
using HistoryFetcher = std::function<Result<TopHistory>()>;
HistoryFetcher DaemonHistoryFetcher(std::string base_url, std::string token, double timeout_s);

// Polls a HistoryFetcher for top's loop without ever waiting on it: each fetch runs on a detached
// worker (core/deadline.h); one that is still running after budget_s is abandoned (its result
// dropped) and reported. Not thread-safe: create and call it on top's loop thread only.
class HistoryPoller {
 public:
  // Fetches at most every period_s (counted from the start of the previous fetch).
  HistoryPoller(HistoryFetcher fetch, double period_s, double budget_s);

  // Call once per loop turn; returns at once. While state->show_history is on, no fetch runs and
  // period_s has passed, starts one. Applies a finished (or abandoned) one to *state: success
  // sets history and clears history_error and history_note; unsupported (the daemon serves no
  // history) sets history_note (dim, not an error), clears history and history_error, and polls
  // on (a store may appear); any other error sets history_error and keeps the last history on
  // screen. True when *state changed (redraw).
  bool Poll(TopViewState* state, TimePoint now = SteadyClock::now());

 private:
  HistoryFetcher fetch_;
  SteadyClock::duration period_, budget_;
  std::shared_ptr<PendingResult<Result<TopHistory>>> pending_;
  TimePoint started_{}, next_{};
};

}  // namespace gpudoctor
