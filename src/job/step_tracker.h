// StepTracker: turns what a job's log lines and pushed marks say into step times, a baseline
// and the facts of one job. A line that carries its own step time (tqdm's s/it or it/s, Megatron's
// ms per iteration) is taken as is; a line or mark with only a step number gives the time since
// the previous numbered one divided by the steps between them (its stamp, else when it was
// read). A counter that goes back (the job restarted) starts a new measure but keeps the
// baseline; a repeated counter (tqdm redraws) is not a new step. Pure (times are given);
// not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "facts/job_facts.h"
#include "job/step_line.h"

namespace gpudoctor {

class StepTracker {
 public:
  // baseline_steps >= 1: the median of that many first step times is the baseline;
  // fixed_baseline_s (> 0) replaces it.
  StepTracker(int baseline_steps, std::optional<double> fixed_baseline_s);

  void AddLine(const StepLine& line, int64_t read_unix_ms);
  // A pushed mark: received at unix_ms, optionally with its step number and its own duration.
  void AddMark(int64_t unix_ms, std::optional<int64_t> step, std::optional<double> seconds);
  // Fills the measured fields of `f` (name, sources, paths are the caller's).
  void Fill(JobFacts& f) const;

  static constexpr size_t kRecent = 256;
  static constexpr size_t kCurrentWindow = 5;

 private:
  void Record(int64_t unix_ms, double seconds);
  void Counter(int64_t step, int64_t unix_ms);

  int baseline_steps_;
  std::optional<double> fixed_baseline_s_;
  std::vector<double> first_;  // until baseline_steps_ were seen
  std::optional<double> baseline_;
  std::deque<JobStepSample> recent_;
  uint64_t samples_ = 0;
  std::optional<int64_t> last_step_;
  std::optional<int64_t> anchor_step_;
  int64_t anchor_ms_ = 0;
};

}  // namespace gpudoctor
