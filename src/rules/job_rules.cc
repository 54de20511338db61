// Job rules: job.slowdown, one finding per [[job]] (subject = the job's name) whose current step
// time is at or above `factor` × its baseline. "Since": the oldest of the newest run of step times
// that are all at or above the factor (the onset as the job's own steps show it).
#include <string>

#include "core/strings.h"
#include "core/time_spec.h"
#include "rules/engine.h"
#include "rules/make_finding.h"
#include "rules/thresholds.h"

namespace gpudoctor {

void JobRules(const Snapshot& snap, const Thresholds& t, std::vector<Finding>& out) {
  double factor = t.Get("job.slowdown", "factor");
  for (const JobFacts& j : snap.jobs) {
    if (!j.step_seconds || !j.baseline_seconds || !(*j.baseline_seconds > 0)) continue;
    double ratio = *j.step_seconds / *j.baseline_seconds;
    if (!(ratio >= factor) || factor <= 0) continue;
    double limit = factor * *j.baseline_seconds;
    std::optional<int64_t> since_ms;
    int slow_steps = 0;
    for (auto it = j.recent.rbegin(); it != j.recent.rend() && it->seconds >= limit; ++it) {
      since_ms = it->unix_ms;
      ++slow_steps;
    }
    std::string base =
        j.baseline_configured
            ? "its configured baseline of " + FormatDouble(*j.baseline_seconds, 3) + " s"
            : "its baseline of " + FormatDouble(*j.baseline_seconds, 3) +
                  " s (median of its first " + std::to_string(j.baseline_steps) + " steps)";
    std::string summary = "job " + j.name + ": steps take " + FormatDouble(*j.step_seconds, 3) +
                          " s, x" + FormatDouble(ratio, 1) + " " + base;
    if (since_ms) summary += ", since " + FormatUtc(*since_ms / 1000);
    Finding f = MakeFinding("job.slowdown", Severity::kWarn, summary);
    f.subject = j.name;
    f.Add("job", j.name).Add("step_seconds", *j.step_seconds);
    f.Add("baseline_seconds", *j.baseline_seconds).Add("slowdown_factor", ratio);
    f.Add("factor", factor).Add("baseline", j.baseline_configured ? "configured" : "first_steps");
    if (since_ms) f.Add("since_unix_s", *since_ms / 1000).Add("slow_steps", slow_steps);
    if (j.step) f.Add("step", *j.step);
    f.Add("sources", j.sources);
    out.push_back(std::move(f));
  }
}

}  // namespace gpudoctor
