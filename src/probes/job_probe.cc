// Job probe: the step time of each [[job]] (config/job_config.h). Sources: the job's training
// log, tailed across ticks (job/log_tail.h: bounded, rotation-aware; under `check` the log is read
// once from its start, up to 8 MiB), a metric of the job's own Prometheus endpoint (prometheus_url,
// metric, selector: read each run with HttpGet under the probe's deadline and parsed by
// inference/prom_text.h), and marks pushed to `watch` (job/step_inbox.h). Lines are
// parsed with the job's preset (job/step_line.h) and turned into step times and a baseline by
// job/step_tracker.h. Units: see JobFacts. Failure modes: no [[job]] → skipped; a log that cannot
// be read is the job's `error` (the probe stays ok: the other jobs and the pushes still count).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "core/http_get.h"
#include "inference/prom_text.h"
#include "job/log_tail.h"
#include "job/step_inbox.h"
#include "job/step_line.h"
#include "job/step_tracker.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"

namespace gpudoctor {
namespace {

struct JobState {
  Settings::JobSetting setting;
  StepPattern pattern;
  std::unique_ptr<LogTail> tail;
  StepTracker tracker;
  std::vector<PromMatcher> matchers;
  std::optional<double> prev_sum, prev_count;  // histogram/summary metric: the last read
  JobState(const Settings::JobSetting& s, const RootFs& fs)
      : setting(s),
        tracker(s.baseline_steps, s.baseline_s > 0 ? std::optional(s.baseline_s) : std::nullopt) {
    pattern.preset = ParseStepPreset(s.preset).value_or(StepPreset::kAuto);
    if (pattern.preset == StepPreset::kRegex) {
      std::string why;
      pattern.regex = CompileStepRegex(s.regex, &why);
      pattern.capture = ParseStepCapture(s.capture).value_or(StepCapture::kSeconds);
    }
    if (!s.log.empty()) tail = std::make_unique<LogTail>(fs.RootPath(s.log));
    if (auto m = ParsePromSelector(s.selector); m.ok()) matchers = std::move(*m);
  }
};

bool SameSetting(const Settings::JobSetting& a, const Settings::JobSetting& b) {
  return a.name == b.name && a.log == b.log && a.preset == b.preset && a.regex == b.regex &&
         a.capture == b.capture && a.baseline_steps == b.baseline_steps &&
         a.baseline_s == b.baseline_s && a.prometheus_url == b.prometheus_url &&
         a.metric == b.metric && a.selector == b.selector;
}

// Reads the job's metric from its Prometheus endpoint and feeds the tracker: a counter (or
// capture = "step") is the step number; a histogram or summary gives the mean step time of the
// steps since the last read (d sum / d count; a count that went down is a restart, the new values
// count from zero); a gauge is a step time (capture "seconds" or "ms"), one sample per read.
// Several matching series are summed (counters, histograms) or averaged (gauges). "" or why not.
std::string ReadPrometheusStep(JobState& st, TimePoint deadline, int64_t now_ms) {
  const Settings::JobSetting& js = st.setting;
  HttpGetRequest req;
  req.url = js.prometheus_url;
  req.deadline = deadline;
  req.max_body_bytes = 8u << 20;
  req.connect_timeout_s = 1;
  Result<HttpGetAnswer> answer = HttpGet(req);
  if (!answer.ok()) return answer.status().message();
  if (answer->status < 200 || answer->status > 299) {
    return js.prometheus_url + ": HTTP status " + std::to_string(answer->status);
  }
  auto families = ParsePromText(answer->body);
  if (!families.ok()) return js.prometheus_url + ": " + families.status().message();
  const PromTextFamily* fam = FindPromFamily(*families, js.metric);
  std::string sample_name = js.metric;
  if (fam == nullptr) {  // a counter's x_total, or a histogram's x_sum given by its sample name
    for (const auto& f : *families) {
      for (const auto& smp : f.samples) {
        if (smp.name == js.metric) fam = &f;
      }
      if (fam) break;
    }
  }
  if (fam == nullptr) return js.prometheus_url + ": no metric " + js.metric;
  bool histo = fam->type == "histogram" || fam->type == "summary";
  std::optional<double> value, sum, count;
  int n = 0;
  for (const auto& smp : fam->samples) {
    if (!PromMatches(smp.labels, st.matchers)) continue;
    if (histo) {
      if (smp.name == fam->name + "_sum") sum = sum.value_or(0) + smp.value;
      if (smp.name == fam->name + "_count") count = count.value_or(0) + smp.value;
    } else if (smp.name == sample_name || smp.name == fam->name ||
               smp.name == fam->name + "_total") {
      value = value.value_or(0) + smp.value;
      ++n;
    }
  }
  if (histo) {
    if (!sum || !count)
      return js.prometheus_url + ": no series of " + js.metric + " match " +
             (js.selector.empty() ? "" : js.selector);
    if (st.prev_count) {
      bool reset = *count < *st.prev_count;
      double dc = reset ? *count : *count - *st.prev_count;
      double ds = reset ? *sum : *sum - st.prev_sum.value_or(0);
      if (dc > 0 && ds >= 0) st.tracker.AddMark(now_ms, std::nullopt, ds / dc);
    }
    st.prev_sum = sum;
    st.prev_count = count;
    return "";
  }
  if (!value || !std::isfinite(*value)) {
    return js.prometheus_url + ": no series of " + js.metric + " match " + js.selector;
  }
  bool counter = js.capture == "step" || fam->type == "counter";
  if (counter) {
    if (*value >= 0 && *value < 4e18) {
      st.tracker.AddMark(now_ms, static_cast<int64_t>(*value), std::nullopt);
    }
  } else {
    double seconds = *value / n;
    if (js.capture == "ms") seconds /= 1000;
    if (seconds > 0) st.tracker.AddMark(now_ms, std::nullopt, seconds);
  }
  return "";
}

struct JobCarry : ProbeCarry {
  std::map<std::string, std::shared_ptr<JobState>> jobs;
};

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

ProbeOutput RunJobProbe(const ProbeContext& ctx) {
  const Settings& s = *ctx.settings;
  if (s.jobs.empty()) return ProbeSkipped("no [[job]] configured");
  auto prev = std::dynamic_pointer_cast<JobCarry>(ctx.previous);
  auto carry = std::make_shared<JobCarry>();
  std::vector<std::string> names;
  for (const auto& js : s.jobs) names.push_back(js.name);
  if (ctx.continuous) GlobalJobInbox().SetKnownJobs(names);

  LogTailLimits limits;
  // Leave the runner time to apply the facts, but always read a little: a short tick (0.3 s)
  // must not leave the log unread forever.
  TimePoint now = SteadyClock::now();
  limits.deadline = std::clamp(ctx.deadline - std::chrono::milliseconds(50),
                               now + std::chrono::milliseconds(20), now + std::chrono::seconds(2));
  if (!ctx.continuous) limits.max_bytes = 8u << 20;
  std::vector<JobFacts> facts;
  for (const auto& js : s.jobs) {
    std::shared_ptr<JobState> st;
    if (prev) {
      auto it = prev->jobs.find(js.name);
      if (it != prev->jobs.end() && SameSetting(it->second->setting, js)) st = it->second;
    }
    if (!st) st = std::make_shared<JobState>(js, ctx.fs());
    carry->jobs[js.name] = st;
    JobFacts f;
    f.name = js.name;
    f.log_path = js.log;
    std::string sources;
    if (st->tail) {
      sources = "log";
      Result<LogTailRead> read = st->tail->Poll(limits);
      int64_t now_ms = NowUnixMs();
      if (read.ok()) {
        for (const std::string& line : read->lines) {
          if (auto parsed = ParseStepLine(line, st->pattern)) st->tracker.AddLine(*parsed, now_ms);
        }
      } else {
        f.error = read.status().message();
      }
    }
    if (!js.prometheus_url.empty()) {
      sources += sources.empty() ? "prometheus" : "+prometheus";
      std::string why = ReadPrometheusStep(*st, limits.deadline, NowUnixMs());
      if (!why.empty() && f.error.empty()) f.error = why;
    }
    if (ctx.continuous) {
      std::vector<StepMark> marks = GlobalJobInbox().Take(js.name);
      if (!marks.empty()) sources += sources.empty() ? "push" : "+push";
      for (const StepMark& m : marks) st->tracker.AddMark(m.unix_ms, m.step, m.seconds);
    }
    f.sources = sources.empty() ? "push" : sources;
    st->tracker.Fill(f);
    facts.push_back(std::move(f));
  }
  ProbeOutput out = ProbeOk([f = std::move(facts)](Snapshot& snap) { snap.jobs = f; });
  if (ctx.continuous) out.next = std::move(carry);
  return out;
}

}  // namespace gpudoctor
