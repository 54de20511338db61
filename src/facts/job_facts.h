// Facts about the training/inference jobs configured in [[job]] tables: how long their steps take
// now and at the start (the baseline), from their log, pushed marks or a metric they expose.
// Units: seconds per step; unix milliseconds. Absent (nullopt) until the first step time is known.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpudoctor {

struct JobStepSample {
  int64_t unix_ms = 0;  // when the step ended (the line's stamp, else when it was read)
  double seconds = 0;   // its duration
};

struct JobFacts {
  std::string name;
  std::string sources;   // "log", "push", "log+push": what fed it
  std::string log_path;  // as configured; empty without a log
  std::string error;     // why the log (or metric) could not be read this tick; "" when fine
  std::optional<double> step_seconds;  // median of the newest (up to 5) step times
  std::optional<int64_t> step;         // the newest step number seen
  uint64_t samples = 0;                // step times measured since watch started
  std::optional<int64_t> last_sample_unix_ms;
  // The baseline: the configured baseline_s, else the median of the first baseline_steps step
  // times once that many were measured (absent before).
  std::optional<double> baseline_seconds;
  bool baseline_configured = false;
  int baseline_steps = 0;  // how many step times the median took (0 when configured)
  // The newest step times, oldest first (at most 256): the rule finds "since when" in them.
  std::vector<JobStepSample> recent;
};

}  // namespace gpudoctor
