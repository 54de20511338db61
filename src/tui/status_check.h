// What `gpudoctor top` accepts as a status document (the `check --json` contract, also GET
// /api/v1/status of `watch`) before it draws anything from it: the server may be anyone's.
// Checked: types of every field top reads; verdict and severities from the known set (an
// unknown verdict never draws as ok); GPU indexes integers in [0, kMaxGpus); numbers finite and
// within +-1e18 (every conversion to an integer is defined); at most kMaxGpus GPUs, kMaxFindings
// findings, kMaxListItems NICs or targets; strings at most kMaxStringBytes; evidence values
// scalars. Unknown fields are ignored (newer versions). Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "core/status.h"

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

}  // namespace gpudoctor
