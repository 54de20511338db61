// InferenceWindow: turns successive reads of one engine's metrics into InferenceFacts: the
// levels as read now, and what the counters and histograms say over the last `window_s`
// (preemptions, finished requests, Triton's queue time per request, TTFT and TPOT
// percentiles). Each read is differenced against the one before it; a counter (or a histogram's
// count) that went down means the engine restarted, and the new value is then the increase since
// the restart (as Prometheus' rate() treats a reset). The first read gives levels only. Times
// are caller-given seconds (steady clock). Pure; not thread-safe.
#pragma once

#include <deque>
#include <optional>

#include "facts/inference_facts.h"
#include "inference/engine_metrics.h"

namespace gpudoctor {

class InferenceWindow {
 public:
  explicit InferenceWindow(double window_s = 60) : window_s_(window_s) {}
  // Fills the measured fields of `f` (name, url, source, pids are the caller's).
  void Add(const EngineReading& r, double t_s, InferenceFacts& f);
  uint64_t restarts() const { return restarts_; }

 private:
  struct Step {
    double t = 0, dt = 0;
    std::optional<double> preemptions, requests, queue_us;
    std::optional<PromHistogram> ttft, tpot;
  };
  double window_s_;
  std::optional<EngineReading> prev_;
  double prev_t_ = 0;
  std::deque<Step> steps_;
  uint64_t restarts_ = 0;
};

// The difference cur - prev of a cumulative histogram (the current one when its count went
// down or its bounds changed: a restart).
PromHistogram HistogramDelta(const PromHistogram& prev, const PromHistogram& cur, bool* reset);

}  // namespace gpudoctor
