// Exact robust statistics for the fleet analysis (outliers.cc): the median of a window's values
// and the spread max(1.4826 x MAD, floor), computed faster than sorting but with the same result,
// bit for bit, as MedianInPlace (outliers.h) on the values widened to double:
//   MedianOf: a strided sample of 1,024 values picks two bounds that bracket the middle rank(s);
//     one pass counts the values below, at and between them and copies those between; the median
//     is selected (nth_element) among those few. Values are only compared and copied, never
//     rounded, so float input gives the exact float order statistics. When the bounds miss (an
//     adversarial order), it falls back to nth_element on everything: same result, slower.
//   RobustSpread: the MAD only matters when 1.4826 x MAD exceeds the floor. One pass counts the
//     values within floor / 1.4826 (less a 1e-9 relative margin) of the median; when that is more
//     than half, the MAD is under the floor and the spread is the floor exactly. Otherwise the
//     MAD is computed as before (deviations in double, MedianOf).
// Input must be free of NaN (callers drop absent values); infinities are allowed (exact path).
// Pure functions; the scratch vectors are the caller's (reused between calls: no allocation once
// grown), so concurrent calls need their own scratch.
#pragma once

#include <span>
#include <vector>

namespace gpudoctor::fleet {

// The median of `values` (reordered); 0 for none. Equal to MedianInPlace of the values as
// doubles (the middle value; the mean, in double, of the two middle ones for an even count).
double MedianOf(std::span<float> values, std::vector<float>& scratch);
double MedianOf(std::span<double> values, std::vector<double>& scratch);

// max(1.4826 x MAD, floor), MAD = MedianInPlace of |double(v) - median| over `values`. Equal to
// that expression computed directly. `deviations` and `scratch`: reused buffers.
double RobustSpread(std::span<const float> values, double median, double floor,
                    std::vector<double>& deviations, std::vector<double>& scratch);

}  // namespace gpudoctor::fleet
