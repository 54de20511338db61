// Job probe: the step time of each [[job]] (config/job_config.h). Sources: the job's training
// log, tailed across ticks (job/log_tail.h: bounded, rotation-aware; under `check` the log is read
// once from its start, up to 8 MiB), and marks pushed to `watch` (job/step_inbox.h). Lines are
// parsed with the job's preset (job/step_line.h) and turned into step times and a baseline by
// job/step_tracker.h. Units: see JobFacts. Failure modes: no [[job]] → skipped; a log that cannot
// be read is the job's `error` (the probe stays ok: the other jobs and the pushes still count).
#include <algorithm>
#include <chrono>
#include <map>

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
  }
};

bool SameSetting(const Settings::JobSetting& a, const Settings::JobSetting& b) {
  return a.name == b.name && a.log == b.log && a.preset == b.preset && a.regex == b.regex &&
         a.capture == b.capture && a.baseline_steps == b.baseline_steps &&
         a.baseline_s == b.baseline_s;
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
