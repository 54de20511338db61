// Change points of one series: the single split that best explains it as two levels (least
// within-segment squared deviation, prefix sums, O(n)). Used by `gpudoctor why` for the onset of
// a slowdown (on log step time: a factor, robust to the scale) and for what else changed then.
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace gpudoctor {

using TimedPoints = std::vector<std::pair<int64_t, double>>;  // (unix s, value), oldest first

struct ChangePoint {
  size_t index = 0;         // first point of the second segment
  int64_t unix_s = 0;       // its time
  int64_t prev_unix_s = 0;  // the last point before it (the change happened in between)
  double before = 0;        // median of the first segment (original values)
  double after = 0;         // median of the second segment
  // Share of the series' squared deviation the split explains (0-1): 1 = two flat levels.
  double explained = 0;
  // |mean difference| / pooled standard deviation (large = clear step; capped at 1e3).
  double effect = 0;
};

// Best split with at least min_points on each side; nullopt when the series is shorter than
// 2 × min_points or constant. With log_scale, values <= 0 are skipped and the split is found on
// log(value) (a slowdown is a factor).
std::optional<ChangePoint> BestSplit(const TimedPoints& points, size_t min_points, bool log_scale);

// The onset of a slowdown in a step-time series: BestSplit on log scale where after/before is at
// least min_factor and the split explains at least min_explained of the variance.
std::optional<ChangePoint> SlowdownOnset(const TimedPoints& points, double min_factor,
                                         size_t min_points, double min_explained = 0.5);

}  // namespace gpudoctor
