// The order in which the fleet's straggler scan (outliers.cc) visits the samples when storage
// order will not do: window by window (windows of `window_s` seconds, in time order) and, within a
// window, each card's samples in time order. Samples in time order per card (reports read in
// order, Prometheus series) are bucketed by window in one stable counting pass; otherwise, or
// when the windows spread too far for buckets, they are sorted by time. Pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "fleet/fleet_model.h"

namespace gpudoctor::fleet {

// floor(a / b) for b > 0, rounding towards minus infinity (a time's window number; / truncates).
inline int64_t FloorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

// Indices into `samples` in that order; empty when storage order already is (or no samples).
// n_cards: how many cards the samples' `card` fields index; window_s >= 1.
std::vector<uint32_t> OrderByWindow(const std::vector<GpuSample>& samples, size_t n_cards,
                                    int64_t window_s);

}  // namespace gpudoctor::fleet
