#include <algorithm>
#include <cmath>

#include "plan/batch_sim.h"

namespace gpudoctor::plan {
namespace {

// Nearest rank: the smallest value with at least q of the samples at or below it.
double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * v.size()));
  size_t k = rank == 0 ? 0 : rank - 1;
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[k];
}

}  // namespace

void Summarise(PolicyResult& r) {
  std::vector<double> latency, ttft;
  latency.reserve(r.outcomes.size());
  ttft.reserve(r.outcomes.size());
  double queue_sum = 0;
  for (const auto& o : r.outcomes) {
    if (!o.served) continue;
    latency.push_back(o.latency_s);
    ttft.push_back(o.ttft_s);
    queue_sum += o.queue_s;
  }
  r.p50_latency_s = Percentile(latency, 0.50);
  r.p99_latency_s = Percentile(latency, 0.99);
  r.p50_ttft_s = Percentile(ttft, 0.50);
  r.p99_ttft_s = Percentile(ttft, 0.99);
  r.mean_queue_s = latency.empty() ? 0 : queue_sum / latency.size();
  if (r.span_s > 0) {
    r.gpu_busy_fraction = r.busy_s / r.span_s;
    r.gpu_active_fraction = r.active_s / r.span_s;
    r.throughput_tokens_per_s = r.output_tokens / r.span_s;
  }
}

}  // namespace gpudoctor::plan
