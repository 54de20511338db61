#include "core/median.h"

#include <algorithm>

namespace gpudoctor {

std::optional<double> MedianInPlace(std::span<double> values) {
  if (values.empty()) return std::nullopt;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double hi = values[mid];
  if (values.size() % 2 == 1) return hi;
  // The lower middle value: the largest of those nth_element put before `mid`.
  const double lo =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lo + hi) / 2;
}

}  // namespace gpudoctor
