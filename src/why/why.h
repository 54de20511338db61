// `gpudoctor why`: when did the job become slow, and what changed then. Pure analysis over what
// the history holds (the loader in why_load.h reads it): the onset is a change point of the
// job's step time (or the time given with --at); the candidates are the findings that opened,
// the events (Xids, reboots, driver changes, GPUs lost) and the metric series with a change point
// of their own. Each is scored by
//   prior (what usually slows a job: a GPU throttling or failing > links > host pressure >
//          network > the rest)
//   × closeness (exp(-lead / tau) for a change up to `slack_s` after the onset or before it;
//          changes after that count for little: an effect, not a cause)
//   × size (a finding's severity; a metric's relative change and how clean its step is)
// Metric changes on the GPU of a finding become that finding's evidence. Thread-safe (pure).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "store/history_store.h"
#include "watch/watch_types.h"
#include "why/change_point.h"

namespace gpudoctor {

struct WhyOptions {
  double min_factor = 1.3;   // a slowdown is after/before at least this
  size_t min_points = 5;     // on each side of a change point
  double tau_s = 300;        // closeness decay before the onset
  double slack_s = 60;       // a change this long after the onset still counts as "at" it
  double lookback_s = 7200;  // candidates older than this before the onset are ignored
  size_t max_causes = 8;
};

struct WhyInput {
  // The series whose onset is sought: a job's step time (from_job) or, without a job, the
  // "slowness" of GPU work: 1 / utilisation of the GPU whose utilisation dropped the most.
  Series target;
  bool from_job = false;
  std::string subject;               // "job llama" or "GPU 3 utilisation"
  std::optional<int64_t> at_unix_s;  // --at: the onset given
  std::vector<Series> candidates;    // every other stored series in the window
  std::vector<TrackedFinding> findings;
  std::vector<HistoryEvent> events;
};

struct WhyCause {
  int64_t unix_s = 0;
  std::string kind;  // "finding", "event", "metric"
  std::string id;    // finding id, event kind, metric name
  std::optional<int> gpu;
  std::string what;  // one line
  std::vector<std::string> evidence;
  std::string next_step;
  double score = 0;
  double lead_s = 0;  // onset - unix_s (positive: before the onset)
};

struct WhyResult {
  std::string subject;
  bool from_job = false;
  bool onset_given = false;
  std::optional<ChangePoint> onset;  // absent: no slowdown found
  size_t target_points = 0;
  std::string no_change;  // why there is no onset (when absent)
  std::vector<WhyCause> causes;
};

WhyResult ExplainSlowdown(const WhyInput& in, const WhyOptions& opt = {});

// The text for a terminal and the JSON of `why --json` / GET /api/v1/why.
std::string WhyToText(const WhyResult& r);
nlohmann::ordered_json WhyToJson(const WhyResult& r);

// Prior weight of a finding id / event kind / metric name (0 = never a cause).
double FindingPrior(const std::string& id);
double EventPrior(const std::string& kind);
double MetricPrior(const std::string& metric, const std::string& labels);

}  // namespace gpudoctor
