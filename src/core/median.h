// The median of a list of values (step times, the two sides of a change point, a straggler's
// flagged values): the middle value, or the mean (in double) of the two middle ones for an even
// count, whatever the input order. Selection (nth_element), not a sort: O(n). Values must be
// free of NaN. Pure functions.
#pragma once

#include <optional>
#include <span>
#include <vector>

namespace gpudoctor {

// Reorders `values`; nullopt when there are none.
std::optional<double> MedianInPlace(std::span<double> values);

// The median of a copy of `values`; nullopt when there are none.
inline std::optional<double> Median(std::vector<double> values) { return MedianInPlace(values); }

}  // namespace gpudoctor
