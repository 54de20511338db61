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

// Integral of the number in system over time, swept over arrivals (+1) and completions (-1).
double InSystemArea(const std::vector<RequestOutcome>& outcomes) {
  std::vector<std::pair<double, int>> events;
  events.reserve(2 * outcomes.size());
  for (const auto& o : outcomes) {
    if (!o.served) continue;
    events.emplace_back(o.arrival_s, +1);
    events.emplace_back(o.arrival_s + o.latency_s, -1);
  }
  std::sort(events.begin(), events.end());
  double area = 0, last = events.empty() ? 0 : events.front().first;
  int64_t in_system = 0;
  for (const auto& [t, delta] : events) {
    area += static_cast<double>(in_system) * (t - last);
    last = t;
    in_system += delta;
  }
  return area;
}

void AssessStability(PolicyResult& r) {
  double first = 0, last = 0;
  bool any = false;
  for (const auto& o : r.outcomes) {
    if (!any) first = last = o.arrival_s;
    first = std::min(first, o.arrival_s);
    last = std::max(last, o.arrival_s);
    any = true;
  }
  const double fit = static_cast<double>(r.requests - r.rejected_too_long);
  r.arrival_rate_per_s = last > first && fit > 1 ? (fit - 1) / (last - first) : 0;
  r.in_system_at_last_arrival = 0;
  for (const auto& o : r.outcomes) {
    if (o.served && o.arrival_s <= last && o.arrival_s + o.latency_s > last) {
      ++r.in_system_at_last_arrival;
    }
  }
  r.overload_factor = r.completion_rate_per_s > 0 && r.arrival_rate_per_s > 0
                          ? r.arrival_rate_per_s / r.completion_rate_per_s
                          : 0;
  const double behind = fit * (1 - 1 / std::max(r.overload_factor, 1.0));
  bool backlog = r.in_system_at_last_arrival >= kMinBacklog &&
                 static_cast<double>(r.in_system_at_last_arrival) >= 0.5 * behind;
  r.stable = !(r.overload_factor >= kOverloadFactor && (r.rejected_queue_full > 0 || backlog));
}

}  // namespace

void Summarise(PolicyResult& r) {
  std::vector<double> latency, ttft;
  latency.reserve(r.outcomes.size());
  ttft.reserve(r.outcomes.size());
  double queue_sum = 0, latency_sum = 0;
  for (const auto& o : r.outcomes) {
    if (!o.served) continue;
    latency.push_back(o.latency_s);
    ttft.push_back(o.ttft_s);
    queue_sum += o.queue_s;
    latency_sum += o.latency_s;
  }
  r.p50_latency_s = Percentile(latency, 0.50);
  r.p99_latency_s = Percentile(latency, 0.99);
  r.p50_ttft_s = Percentile(ttft, 0.50);
  r.p99_ttft_s = Percentile(ttft, 0.99);
  r.mean_queue_s = latency.empty() ? 0 : queue_sum / latency.size();
  r.mean_latency_s = latency.empty() ? 0 : latency_sum / latency.size();
  if (r.span_s > 0) {
    r.gpu_busy_fraction = r.busy_s / r.span_s;
    r.gpu_active_fraction = r.active_s / r.span_s;
    r.fill_wait_fraction = r.fill_wait_s / r.span_s;
    r.padding_fraction = r.padding_s / r.span_s;
    r.head_of_line_fraction = r.head_of_line_s / r.span_s;
    r.idle_fraction = r.idle_s / r.span_s;
    r.prefill_fraction = r.prefill_s / r.span_s;
    r.throughput_tokens_per_s = r.output_tokens / r.span_s;
    r.completion_rate_per_s = r.completed / r.span_s;
    r.mean_in_system = InSystemArea(r.outcomes) / r.span_s;
  }
  AssessStability(r);
}

}  // namespace gpudoctor::plan
