// JSON of the kernel-log scanner's accounting (source, bytes, skipped/garbled lines, overruns,
// GPU identities from the log). Used by `gpudoctor logs --json`; `check --json` may embed it as
// its "kernel_log" section. Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "facts/kernel_facts.h"

namespace gpudoctor {

nlohmann::ordered_json KernelLogFactsToJson(const KernelLogFacts& k);

}  // namespace gpudoctor
