#include "fleet/robust_stats.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace gpudoctor::fleet {
namespace {

constexpr size_t kSample = 1024;   // values sampled to place the band
constexpr size_t kMargin = 64;     // sample ranks each side of the middle (~5.6 sigma)
constexpr size_t kBandMin = 4096;  // below this, nth_element on everything is as fast

// MedianInPlace on any arithmetic type, the result in double.
template <typename T>
double MedianBySelection(T* v, size_t n) {
  const size_t mid = n / 2;
  std::nth_element(v, v + mid, v + n);
  const double hi = v[mid];
  if (n % 2 == 1) return hi;
  const double lo = *std::max_element(v, v + mid);
  return (lo + hi) / 2;
}

template <typename T>
double BandedMedian(std::span<T> values, std::vector<T>& scratch) {
  const size_t n = values.size();
  if (n == 0) return 0;
  T* v = values.data();
  if (n < kBandMin) return MedianBySelection(v, n);
  // The middle rank(s): r2 = n/2, and r1 = r2 - 1 as well for an even count.
  const size_t r2 = n / 2, r1 = n % 2 == 1 ? r2 : r2 - 1;
  // A spread-out sample (index k * a large odd constant, mod n: distinct for k < kSample) and
  // the sample values kMargin ranks either side of where the middle would be.
  T sample[kSample];
  for (size_t k = 0; k < kSample; ++k) {
    sample[k] = v[static_cast<size_t>((uint64_t{k} * 2654435761u) % n)];
  }
  size_t p1 = r1 * kSample / n, p2 = r2 * kSample / n;
  p1 = p1 > kMargin ? p1 - kMargin : 0;
  p2 = std::min(p2 + kMargin, kSample - 1);
  std::nth_element(sample, sample + p1, sample + kSample);
  const T lo = sample[p1];
  std::nth_element(sample + p1, sample + p2, sample + kSample);
  const T hi = sample[p2];
  // Counts below lo, equal to lo, equal to hi and above hi (a loop that vectorises); in sorted
  // order the values are [below][== lo][between][== hi][above].
  size_t below = 0, eq_lo = 0, eq_hi = 0, above = 0;
  for (size_t i = 0; i < n; ++i) {
    below += v[i] < lo;
    eq_lo += v[i] == lo;
    eq_hi += v[i] == hi;
    above += v[i] > hi;
  }
  if (!(lo < hi)) eq_hi = 0;  // lo == hi: counted once, as eq_lo
  const size_t k = n - below - eq_lo - eq_hi - above;
  if (r1 < below || r2 >= below + eq_lo + k + eq_hi) return MedianBySelection(v, n);
  // The values strictly between the bounds, copied only when a middle rank is among them.
  T* between = nullptr;
  const bool need_between = (r1 - below >= eq_lo && r1 - below - eq_lo < k) ||
                            (r2 - below >= eq_lo && r2 - below - eq_lo < k);
  if (need_between) {
    if (scratch.size() < k) scratch.resize(k);
    between = scratch.data();
    size_t j = 0;
    for (size_t i = 0; i < n && j < k; ++i) {
      between[j] = v[i];
      j += (v[i] > lo) & (v[i] < hi);
    }
  }
  // The value at rank r2 (and where it was found among `between`, if there).
  size_t a = r2 - below;
  double high;
  size_t high_at = SIZE_MAX;
  if (a < eq_lo) {
    high = lo;
  } else if (a - eq_lo < k) {
    high_at = a - eq_lo;
    std::nth_element(between, between + high_at, between + k);
    high = between[high_at];
  } else {
    high = hi;
  }
  if (n % 2 == 1) return high;
  // Rank r1 = r2 - 1 (>= below: checked above).
  a = r1 - below;
  double low;
  if (a < eq_lo) {
    low = lo;
  } else if (a - eq_lo < k) {
    // The largest of the values before rank r2 among `between`: partitioned by nth_element when
    // r2 is among them, else r2 is at hi and r1 is the largest of them all.
    low = *std::max_element(between, between + (high_at != SIZE_MAX ? high_at : k));
  } else {
    low = hi;
  }
  return (low + high) / 2;
}

}  // namespace

double MedianOf(std::span<float> values, std::vector<float>& scratch) {
  return BandedMedian(values, scratch);
}

double MedianOf(std::span<double> values, std::vector<double>& scratch) {
  return BandedMedian(values, scratch);
}

double RobustSpread(std::span<const float> values, double median, double floor,
                    std::vector<double>& deviations, std::vector<double>& scratch) {
  const size_t n = values.size();
  if (std::isfinite(median) && std::isfinite(floor) && floor > 0) {
    // MAD <= within  =>  1.4826 x MAD < floor, whatever the rounding (the 1e-9 margin).
    const double within = floor / 1.4826 * (1 - 1e-9);
    size_t close = 0;
    for (const float x : values) close += std::fabs(double{x} - median) <= within;
    // The (upper) middle deviation is within: so is the MAD.
    if (close >= n / 2 + 1) return floor;
  }
  if (deviations.size() < n) deviations.resize(n);
  for (size_t i = 0; i < n; ++i) deviations[i] = std::fabs(double{values[i]} - median);
  return std::max(1.4826 * MedianOf(std::span<double>(deviations.data(), n), scratch), floor);
}

}  // namespace gpudoctor::fleet
