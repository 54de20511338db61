#include "why/why_load.h"

#include <algorithm>
#include <cmath>

namespace gpudoctor {
namespace {

constexpr const char* kStepMetric = "gpudoctor_job_step_seconds";
constexpr const char* kUtilMetric = "gpudoctor_gpu_utilization_ratio";

std::string JobOf(const std::string& labels) {
  return labels.rfind("job=", 0) == 0 ? labels.substr(4) : labels;
}

}  // namespace

Result<WhyInput> LoadWhyInput(HistoryReader& reader, const WhyRequest& req, const WhyOptions& opt) {
  WhyInput in;
  in.at_unix_s = req.at_unix_s;
  SeriesQuery q;
  q.metric = kStepMetric;
  q.since_unix_s = req.since_unix_s;
  q.until_unix_s = req.until_unix_s;
  q.max_points = req.max_points;
  Result<std::vector<Series>> jobs = reader.QuerySeries(q);
  if (!jobs.ok()) return jobs.status();
  std::string names;
  for (const Series& s : *jobs) names += (names.empty() ? "" : ", ") + JobOf(s.labels);
  if (!req.job.empty()) {
    auto it = std::find_if(jobs->begin(), jobs->end(),
                           [&](const Series& s) { return JobOf(s.labels) == req.job; });
    if (it == jobs->end()) {
      return NotFound(
          "no step times of job '" + req.job + "' in the history in this range" +
          (names.empty() ? std::string(" (no job stored)") : " (stored: " + names + ")"));
    }
    in.target = *it;
    in.from_job = true;
    in.subject = "job " + req.job;
  } else if (jobs->size() > 1) {
    return InvalidArgument("the history has several jobs (" + names + "): choose one with --job");
  } else if (jobs->size() == 1) {
    in.target = jobs->front();
    in.from_job = true;
    in.subject = "job " + JobOf(in.target.labels);
  } else {
    // No job: the GPU whose utilisation fell the most, as "slowness" 1 / utilisation.
    q.metric = kUtilMetric;
    Result<std::vector<Series>> util = reader.QuerySeries(q);
    if (!util.ok()) return util.status();
    if (util->empty()) {
      return NotFound("the history has neither job step times nor GPU utilisation in this range");
    }
    double best = -1;
    for (const Series& s : *util) {
      Series slow = s;
      for (auto& p : slow.points) p.second = 1.0 / std::max(p.second, 0.01);
      std::optional<ChangePoint> cp = SlowdownOnset(slow.points, opt.min_factor, opt.min_points);
      double f = cp ? cp->after / cp->before : 0;
      if (f > best) {
        best = f;
        in.target = std::move(slow);
      }
    }
    in.from_job = false;
    in.subject = "GPU " + std::to_string(in.target.gpu.value_or(0)) + " utilisation";
  }

  std::optional<int64_t> onset = req.at_unix_s;
  if (!onset) {
    if (auto cp = SlowdownOnset(in.target.points, opt.min_factor, opt.min_points)) {
      onset = cp->unix_s;
    }
  }
  if (!onset) return in;  // no change: nothing else to read

  int64_t from = *onset - static_cast<int64_t>(opt.lookback_s);
  int64_t to = *onset + static_cast<int64_t>(opt.lookback_s / 4);
  Result<std::vector<std::string>> metrics = reader.ListMetrics();
  if (!metrics.ok()) return metrics.status();
  for (const std::string& m : *metrics) {
    if (m == kStepMetric || (MetricPrior(m, "") <= 0 && m != "gpudoctor_gpu_throttle_active")) {
      continue;
    }
    SeriesQuery cq;
    cq.metric = m;
    cq.since_unix_s = from;
    cq.until_unix_s = to;
    cq.max_points = 2000;
    Result<std::vector<Series>> series = reader.QuerySeries(cq);
    if (!series.ok()) return series.status();
    for (Series& s : *series) {
      if (s.points.size() >= 2 * opt.min_points) in.candidates.push_back(std::move(s));
    }
  }
  FindingsQuery fq;
  fq.since_unix_s = from;
  Result<std::vector<TrackedFinding>> findings = reader.QueryFindings(fq);
  if (!findings.ok()) return findings.status();
  in.findings = std::move(*findings);
  Result<std::vector<HistoryEvent>> events = reader.QueryEvents(from, 2000);
  if (!events.ok()) return events.status();
  in.events = std::move(*events);
  return in;
}

Result<WhyResult> RunWhy(HistoryReader& reader, const WhyRequest& req, const WhyOptions& opt) {
  Result<WhyInput> in = LoadWhyInput(reader, req, opt);
  if (!in.ok()) return in.status();
  return ExplainSlowdown(*in, opt);
}

}  // namespace gpudoctor
