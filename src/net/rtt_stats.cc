#include "net/rtt_stats.h"

#include <algorithm>
#include <cmath>

namespace gpudoctor {
namespace {

double NearestRank(const std::vector<double>& sorted, double pct) {
  size_t rank = static_cast<size_t>(std::ceil(pct / 100.0 * sorted.size()));
  if (rank < 1) rank = 1;
  return sorted[std::min(rank, sorted.size()) - 1];
}

}  // namespace

RttStats ComputeRttStats(int sent, const std::vector<double>& rtts_ms) {
  RttStats s;
  std::vector<double> valid;
  for (double r : rtts_ms) {
    if (std::isfinite(r) && r >= 0) valid.push_back(r);
  }
  s.sent = std::max(sent, 0);
  s.received = std::min(static_cast<int>(valid.size()), s.sent);
  valid.resize(s.received);
  if (s.sent > 0) s.loss_pct = 100.0 * (s.sent - s.received) / s.sent;
  if (valid.empty()) return s;
  if (valid.size() >= 2) {
    double sum = 0;
    for (size_t i = 1; i < valid.size(); ++i) sum += std::fabs(valid[i] - valid[i - 1]);
    s.jitter_ms = sum / (valid.size() - 1);
  }
  std::vector<double> sorted = valid;
  std::sort(sorted.begin(), sorted.end());
  s.min_ms = sorted.front();
  s.max_ms = sorted.back();
  size_t n = sorted.size();
  s.median_ms = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  s.p95_ms = NearestRank(sorted, 95);
  return s;
}

}  // namespace gpudoctor
