#include "why/change_point.h"

#include <algorithm>
#include <cmath>

#include "core/median.h"

namespace gpudoctor {

std::optional<ChangePoint> BestSplit(const TimedPoints& points, size_t min_points, bool log_scale) {
  min_points = std::max<size_t>(min_points, 1);
  std::vector<double> x;
  std::vector<size_t> src;  // index into points
  x.reserve(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    double v = points[i].second;
    if (!std::isfinite(v)) continue;
    if (log_scale) {
      if (!(v > 0)) continue;
      v = std::log(v);
    }
    x.push_back(v);
    src.push_back(i);
  }
  size_t n = x.size();
  if (n < 2 * min_points) return std::nullopt;
  std::vector<double> s(n + 1, 0), q(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    s[i + 1] = s[i] + x[i];
    q[i + 1] = q[i] + x[i] * x[i];
  }
  auto sse = [&](size_t a, size_t b) {  // [a, b)
    double m = static_cast<double>(b - a);
    double sum = s[b] - s[a];
    return std::max(0.0, (q[b] - q[a]) - sum * sum / m);
  };
  double total = sse(0, n);
  if (!(total > 1e-12)) return std::nullopt;
  size_t best_k = 0;
  double best = total;
  for (size_t k = min_points; k + min_points <= n; ++k) {
    double c = sse(0, k) + sse(k, n);
    if (c < best) {
      best = c;
      best_k = k;
    }
  }
  if (best_k == 0) return std::nullopt;
  ChangePoint cp;
  cp.index = src[best_k];
  cp.unix_s = points[src[best_k]].first;
  cp.prev_unix_s = points[src[best_k - 1]].first;
  std::vector<double> a, b;
  for (size_t i = 0; i < best_k; ++i) a.push_back(points[src[i]].second);
  for (size_t i = best_k; i < n; ++i) b.push_back(points[src[i]].second);
  cp.before = Median(std::move(a)).value_or(0);
  cp.after = Median(std::move(b)).value_or(0);
  cp.explained = 1.0 - best / total;
  double ma = (s[best_k]) / static_cast<double>(best_k);
  double mb = (s[n] - s[best_k]) / static_cast<double>(n - best_k);
  double pooled = std::sqrt(best / static_cast<double>(n));
  cp.effect = pooled > 0 ? std::min(1e3, std::fabs(mb - ma) / pooled) : 1e3;
  return cp;
}

std::optional<ChangePoint> SlowdownOnset(const TimedPoints& points, double min_factor,
                                         size_t min_points, double min_explained) {
  std::optional<ChangePoint> cp = BestSplit(points, min_points, true);
  if (!cp || !(cp->before > 0)) return std::nullopt;
  if (cp->after / cp->before < min_factor || cp->explained < min_explained) return std::nullopt;
  return cp;
}

}  // namespace gpudoctor
