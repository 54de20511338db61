#include "job/step_tracker.h"

#include <algorithm>
#include <cmath>

#include "core/median.h"

namespace gpudoctor {

StepTracker::StepTracker(int baseline_steps, std::optional<double> fixed_baseline_s)
    : baseline_steps_(std::max(1, baseline_steps)), fixed_baseline_s_(fixed_baseline_s) {}

void StepTracker::Record(int64_t unix_ms, double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds)) return;
  ++samples_;
  recent_.push_back({unix_ms, seconds});
  if (recent_.size() > kRecent) recent_.pop_front();
  if (!baseline_ && !fixed_baseline_s_) {
    first_.push_back(seconds);
    if (first_.size() >= static_cast<size_t>(baseline_steps_)) {
      baseline_ = Median(first_);
      first_.clear();
      first_.shrink_to_fit();
    }
  }
}

void StepTracker::Counter(int64_t step, int64_t unix_ms) {
  if (!anchor_step_ || step < *anchor_step_) {
    anchor_step_ = step;  // the first one, or the job restarted
    anchor_ms_ = unix_ms;
    return;
  }
  if (step == *anchor_step_) return;
  if (unix_ms > anchor_ms_) {
    Record(unix_ms, (unix_ms - anchor_ms_) / 1000.0 / static_cast<double>(step - *anchor_step_));
    anchor_ms_ = unix_ms;
  }
  // Lines read together (no stamps of their own) share one time: the next measure starts from
  // the newest of them.
  anchor_step_ = step;
}

void StepTracker::AddLine(const StepLine& line, int64_t read_unix_ms) {
  int64_t t = line.unix_ms.value_or(read_unix_ms);
  if (line.seconds_per_step) {
    if (line.step && last_step_ && *line.step == *last_step_) return;  // a redraw
    if (line.step) last_step_ = line.step;
    Record(t, *line.seconds_per_step);
    return;
  }
  if (line.step) {
    last_step_ = line.step;
    Counter(*line.step, t);
  }
}

void StepTracker::AddMark(int64_t unix_ms, std::optional<int64_t> step,
                          std::optional<double> seconds) {
  if (seconds) {
    if (step) last_step_ = step;
    Record(unix_ms, *seconds);
    return;
  }
  // A mark without a number is the next step.
  int64_t n = step ? *step : (anchor_step_ ? *anchor_step_ + 1 : 0);
  last_step_ = n;
  Counter(n, unix_ms);
}

void StepTracker::Fill(JobFacts& f) const {
  f.samples = samples_;
  f.step = last_step_;
  if (!recent_.empty()) {
    std::vector<double> tail;
    for (size_t i = recent_.size() - std::min(recent_.size(), kCurrentWindow); i < recent_.size();
         ++i) {
      tail.push_back(recent_[i].seconds);
    }
    f.step_seconds = Median(tail);
    f.last_sample_unix_ms = recent_.back().unix_ms;
  }
  if (fixed_baseline_s_) {
    f.baseline_seconds = fixed_baseline_s_;
    f.baseline_configured = true;
  } else if (baseline_) {
    f.baseline_seconds = baseline_;
    f.baseline_steps = baseline_steps_;
  }
  f.recent.assign(recent_.begin(), recent_.end());
}

}  // namespace gpudoctor
