// Reads what `gpudoctor why` needs from a history file (store/history_store.h's HistoryReader):
// the target series (a job's step time; without a job, the GPU whose utilisation dropped the
// most, as 1 / utilisation), every other stored series in the window around the onset, the
// findings and the events. Errors name what is missing: an unknown job lists the stored ones;
// several jobs without --job ask for one. Not thread-safe (the reader is not).
#pragma once

#include <optional>
#include <string>

#include "core/status.h"
#include "store/history_store.h"
#include "why/why.h"

namespace gpudoctor {

struct WhyRequest {
  std::string job;  // empty: the only stored job, else GPU utilisation
  std::optional<int64_t> at_unix_s;
  int64_t since_unix_s = 0;
  int64_t until_unix_s = 0;  // 0: now
  int max_points = 10000;    // per series
};

Result<WhyInput> LoadWhyInput(HistoryReader& reader, const WhyRequest& req,
                              const WhyOptions& opt = {});

// Everything at once: load, then ExplainSlowdown.
Result<WhyResult> RunWhy(HistoryReader& reader, const WhyRequest& req, const WhyOptions& opt = {});

}  // namespace gpudoctor
