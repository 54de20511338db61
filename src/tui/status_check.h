// What `gpudoctor top` accepts as a status document (the `check --json` contract, also GET
// /api/v1/status of `watch`) before it draws anything from it: the server may be anyone's.
// Checked: types of every field top reads; verdict and severities from the known set (an
// unknown verdict never draws as ok); GPU indexes integers in [0, kMaxGpus); numbers finite and
// within +-1e18 (every conversion to an integer is defined); at most kMaxGpus GPUs, kMaxFindings
// findings, kMaxListItems NICs or targets; strings at most kMaxStringBytes; evidence values
// scalars. Unknown fields are ignored (newer versions). Pure; thread-safe.
//
// Also what top accepts from GET /api/v1/history (ParseHistoryDocument), same rules.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "tui/top_model.h"

namespace gpudoctor {

inline constexpr size_t kMaxGpus = 1024;
inline constexpr size_t kMaxFindings = 10000;
inline constexpr size_t kMaxListItems = 4096;
inline constexpr size_t kMaxStringBytes = 16384;
// The largest status answer top reads (1024 GPUs of a real report are about 3 MB).
inline constexpr size_t kMaxStatusBytes = 8u << 20;

// Ok, or invalid_argument naming the first bad field: `gpus[3].index: 1e308 is not a GPU index
// (0..1023)`.
Status CheckStatusDocument(const nlohmann::json& doc);

// The most points top reads of one history series (the API's own max_points limit).
inline constexpr size_t kMaxHistoryPoints = 10000;

// The series of `metric` in an answer of GET /api/v1/history (store/history_json.cc: one series
// {"metric": NAME, "gpu": N|null, "labels": "...", "points": [[unix_s, value|null], ...]}, or a
// list of them, [] for none), by GPU index. A null value stays a missing sample (nullopt). Series
// of other metrics and without a GPU (gpu null) are skipped; of several series of one GPU (labels)
// the first is kept. Checked: the shape; gpu an index in [0, kMaxGpus); times integers in
// [0, 1e12); values numbers within +-1e18 or null; at most kMaxListItems series and
// kMaxHistoryPoints points in each. Errors: invalid_argument naming the first bad field
// (`history[1].points[7][1]: "hot" is not a number or null`). Pure; thread-safe.
Result<std::map<int, std::vector<HistoryPoint>>> ParseHistoryDocument(const nlohmann::json& doc,
                                                                      std::string_view metric);

}  // namespace gpudoctor
