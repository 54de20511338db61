// The engine's own faults as findings with their real cause: gpudoctor.clock.step after the wall
// clock jumped against the monotonic clock. (The history's own faults are raised by its sink,
// store/history_sink.h.) One small detector; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "findings/finding.h"

namespace gpudoctor {

// The wall clock moved this much more or less than the monotonic clock between two ticks.
inline constexpr int64_t kClockStepMinMs = 5000;
inline constexpr double kClockStepNoticeS = 600;

// Compares successive (wall, monotonic) readings of one process.
class ClockStepDetector {
 public:
  // The step in ms (positive: the wall clock jumped forward) when this reading differs from the
  // last by more than kClockStepMinMs; nullopt otherwise (and on the first reading).
  std::optional<int64_t> Observe(int64_t unix_ms, int64_t mono_ms);
  // gpudoctor.clock.step while the last step is younger than kClockStepNoticeS.
  void AddFinding(int64_t mono_ms, std::vector<Finding>& findings) const;

 private:
  int64_t last_unix_ms_ = 0, last_mono_ms_ = 0;
  bool have_last_ = false;
  int64_t step_ms_ = 0, step_mono_ms_ = 0;
  bool stepped_ = false;
};

}  // namespace gpudoctor
