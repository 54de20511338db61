#include "inference/inference_window.h"

#include <cmath>

namespace gpudoctor {
namespace {

bool SameBounds(const PromHistogram& a, const PromHistogram& b) {
  if (a.buckets.size() != b.buckets.size()) return false;
  for (size_t i = 0; i < a.buckets.size(); ++i) {
    if (a.buckets[i].first != b.buckets[i].first) return false;
  }
  return true;
}

// Counter increase; *reset when it went down (the new value counts from zero).
std::optional<double> CounterDelta(const std::optional<double>& prev,
                                   const std::optional<double>& cur, bool* reset) {
  if (!cur || !std::isfinite(*cur)) return std::nullopt;
  if (!prev || !std::isfinite(*prev)) return std::nullopt;
  if (*cur < *prev) {
    *reset = true;
    return *cur;
  }
  return *cur - *prev;
}

void AddInto(std::optional<PromHistogram>& acc, const PromHistogram& h) {
  if (!acc) {
    acc = h;
    return;
  }
  if (!SameBounds(*acc, h)) {  // bounds changed: the newer histogram wins
    acc = h;
    return;
  }
  for (size_t i = 0; i < h.buckets.size(); ++i) acc->buckets[i].second += h.buckets[i].second;
  acc->sum += h.sum;
  acc->count += h.count;
}

LatencyWindow Quantiles(const std::optional<PromHistogram>& h) {
  LatencyWindow w;
  if (!h || h->buckets.empty()) return w;
  w.observations = h->buckets.back().second;
  if (!(w.observations > 0)) return w;
  w.p50_s = PromHistogramQuantile(*h, 0.5);
  w.p95_s = PromHistogramQuantile(*h, 0.95);
  w.p99_s = PromHistogramQuantile(*h, 0.99);
  return w;
}

}  // namespace

PromHistogram HistogramDelta(const PromHistogram& prev, const PromHistogram& cur, bool* reset) {
  bool went_down = cur.count < prev.count;
  for (size_t i = 0; !went_down && SameBounds(prev, cur) && i < cur.buckets.size(); ++i) {
    went_down = cur.buckets[i].second < prev.buckets[i].second;
  }
  if (went_down || !SameBounds(prev, cur)) {
    if (went_down && reset) *reset = true;
    return cur;
  }
  PromHistogram d = cur;
  for (size_t i = 0; i < d.buckets.size(); ++i) d.buckets[i].second -= prev.buckets[i].second;
  d.sum -= prev.sum;
  d.count -= prev.count;
  return d;
}

void InferenceWindow::Add(const EngineReading& r, double t_s, InferenceFacts& f) {
  f.engine = InferenceEngineName(r.engine);
  f.model = r.model;
  f.kv_cache_usage = r.kv_usage_ratio;
  f.requests_waiting = r.waiting;
  f.requests_running = r.running;
  f.preemptions_total = r.preemptions;
  if (r.prompt_tokens && r.prompt_tokens->count > 0) {
    f.prompt_tokens_mean = r.prompt_tokens->sum / r.prompt_tokens->count;
    f.prompt_tokens_p95 = PromHistogramQuantile(*r.prompt_tokens, 0.95);
  } else if (r.prompt_tokens_total && r.requests && *r.requests > 0) {
    f.prompt_tokens_mean = *r.prompt_tokens_total / *r.requests;
  }
  if (r.generation_tokens && r.generation_tokens->count > 0) {
    f.generation_tokens_mean = r.generation_tokens->sum / r.generation_tokens->count;
  }
  if (prev_ && prev_->engine == r.engine) {
    Step s;
    s.t = t_s;
    s.dt = t_s - prev_t_;
    bool reset = false;
    s.preemptions = CounterDelta(prev_->preemptions, r.preemptions, &reset);
    s.requests = CounterDelta(prev_->requests, r.requests, &reset);
    s.queue_us = CounterDelta(prev_->queue_us, r.queue_us, &reset);
    if (prev_->ttft && r.ttft) s.ttft = HistogramDelta(*prev_->ttft, *r.ttft, &reset);
    if (prev_->tpot && r.tpot) s.tpot = HistogramDelta(*prev_->tpot, *r.tpot, &reset);
    if (reset) ++restarts_;
    steps_.push_back(std::move(s));
  }
  prev_ = r;
  prev_t_ = t_s;
  while (!steps_.empty() && steps_.front().t - steps_.front().dt < t_s - window_s_ - 1e-9 &&
         steps_.size() > 1) {
    steps_.pop_front();
  }
  f.restarts = restarts_;
  if (steps_.empty()) return;
  f.window_s = 0;
  std::optional<double> pre, req, queue;
  std::optional<PromHistogram> ttft, tpot;
  auto add = [](std::optional<double>& acc, const std::optional<double>& v) {
    if (v) acc = acc.value_or(0) + *v;
  };
  for (const Step& s : steps_) {
    f.window_s += s.dt;
    add(pre, s.preemptions);
    add(req, s.requests);
    add(queue, s.queue_us);
    if (s.ttft) AddInto(ttft, *s.ttft);
    if (s.tpot) AddInto(tpot, *s.tpot);
  }
  f.preemptions_window = pre;
  f.requests_window = req;
  if (queue && req && *req > 0) f.queue_seconds_mean = *queue / *req / 1e6;
  f.ttft = Quantiles(ttft);
  f.tpot = Quantiles(tpot);
}

}  // namespace gpudoctor
