#include "fleet/window_order.h"

#include <algorithm>
#include <climits>

namespace gpudoctor::fleet {
namespace {

// Sample indices so that each card's samples come in time order: empty when storage order
// already is (reports read in order, Prometheus series), else sorted by time. Storage order
// reads memory sequentially, which is what makes 6 million samples cheap.
std::vector<uint32_t> TimeOrder(const std::vector<GpuSample>& samples, size_t n_cards) {
  std::vector<uint32_t> order;
  std::vector<int64_t> last_t(n_cards, INT64_MIN);
  for (const auto& s : samples) {
    if (s.time_s < last_t[s.card]) {
      order.resize(samples.size());
      for (uint32_t i = 0; i < samples.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return samples[a].time_s < samples[b].time_s;
      });
      return order;
    }
    last_t[s.card] = s.time_s;
  }
  return order;
}

}  // namespace

std::vector<uint32_t> OrderByWindow(const std::vector<GpuSample>& samples, size_t n_cards,
                                    int64_t window_s) {
  std::vector<uint32_t> index;
  const size_t n = samples.size();
  if (n == 0) return index;
  std::vector<uint32_t> by_time = TimeOrder(samples, n_cards);
  auto at = [&](size_t k) -> const GpuSample& { return samples[by_time.empty() ? k : by_time[k]]; };
  // Already in window order (the common case for generated and time-sliced input)?
  bool sorted = true;
  int64_t lo = INT64_MAX, hi = INT64_MIN, prev = INT64_MIN;
  for (size_t k = 0; k < n; ++k) {
    int64_t w = FloorDiv(at(k).time_s, window_s);
    if (w < prev) sorted = false;
    prev = w;
    lo = std::min(lo, w);
    hi = std::max(hi, w);
  }
  if (!sorted && static_cast<uint64_t>(hi - lo) < 4 * n + 1024) {
    // Counting sort by window, stable: each card's samples stay in time order.
    std::vector<size_t> start(static_cast<size_t>(hi - lo) + 2, 0);
    for (size_t k = 0; k < n; ++k) ++start[FloorDiv(at(k).time_s, window_s) - lo + 1];
    for (size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
    index.resize(n);
    for (size_t k = 0; k < n; ++k) {
      size_t& slot = start[FloorDiv(at(k).time_s, window_s) - lo];
      index[slot++] = by_time.empty() ? static_cast<uint32_t>(k) : by_time[k];
    }
  } else if (!sorted) {
    // Windows spread too far for buckets: a full sort by time.
    index.resize(n);
    for (uint32_t i = 0; i < n; ++i) index[i] = i;
    std::stable_sort(index.begin(), index.end(),
                     [&](uint32_t a, uint32_t b) { return samples[a].time_s < samples[b].time_s; });
  } else {
    index = std::move(by_time);
  }
  return index;
}

}  // namespace gpudoctor::fleet
