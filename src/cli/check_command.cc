// `gpudoctor check`: run every enabled probe under the deadline, judge, report.
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "check/run_check.h"
#include "cli/commands.h"
#include "report/report.h"
#include "rules/localize.h"
#include "store/client_history.h"
#include "store/expected_gpus.h"

namespace gpudoctor {
namespace {

// --slurm / --npd: the same "could not run" rule as below, then the scheduler's contract.
int FinishCheckForScheduler(const CliOptions& o, const Report& report) {
  bool measured = false;
  for (const auto& p : report.snapshot.probes) measured = measured || p.state == ProbeState::kOk;
  for (const auto& f : report.findings) {
    if (f.severity != Severity::kInfo && f.id.rfind("gpudoctor.", 0) != 0) measured = true;
  }
  return FinishSchedulerMode(o, report.findings, measured ? "" : "no probe could measure anything");
}

}  // namespace

int CheckCommand(const CliOptions& o) {
  // Two malloc arenas for the whole check: glibc gives each new thread that allocates its own
  // arena (up to 8 per core), and every probe runs in a thread of its own, so a check created
  // about twenty arenas (a heap mapping each, their first pages faulted in) for a second's work:
  // about a tenth of its CPU on a 2-core VM (docs/cost.md, fifth round). Set before the probes'
  // threads start; arenas already made stay. Not for `watch`, whose threads live long.
  mallopt(M_ARENA_MAX, 2);
  if (!o.positional.empty()) {
    std::string why = "check takes no arguments: '" + o.positional[0] + "'";
    return InSchedulerMode(o) ? FinishSchedulerMode(o, {}, why) : CouldNotRun(why);
  }
  if (o.Has("--npd") && (o.Has("--slurm") || o.Has("--slurm-dry-run")))
    return FinishSchedulerMode(o, {}, "");
  if (o.Has("--npd-warnings") && !o.Has("--npd")) {
    return CouldNotRun("--npd-warnings is a form of check --npd");
  }
  if (o.Value("--connect").has_value() && !o.Has("--npd")) {
    return CouldNotRun(
        "check --connect asks a watch for node-problem-detector (with --npd); "
        "`gpudoctor top --connect URL` shows a watch's report");
  }
  TimePoint start = SteadyClock::now();
  auto settings = BuildSettings(o);
  if (!settings.ok()) {
    if (InSchedulerMode(o)) return FinishSchedulerMode(o, {}, settings.status().message());
    return CouldNotRun(settings.status().message());
  }
  // One watch per node serves node-problem-detector's rules: no probes here.
  if (o.Value("--connect").has_value()) return NpdFromWatch(o, **settings);
  // [gpu] expected_count unset: expect the GPUs the history last saw (store/expected_gpus.h).
  if (!(*settings)->thresholds.Find("gpu.missing", "expected_count")) {
    ApplyHistoryGpuCount(**settings, ReadLastSeenGpuCount((*settings)->db_path,
                                                          start + std::chrono::milliseconds(500)));
  }
  Report report = RunCheck(*settings, start);
  // net.clients.degraded with one or two client networks: each against its own stored history
  // (store/client_history.h), read within what is left of the deadline's last second.
  const auto& sockets = report.snapshot.network.sockets;
  bool compared = std::any_of(report.findings.begin(), report.findings.end(),
                              [](const Finding& f) { return f.id == "net.clients.degraded"; });
  if (sockets && !sockets->client_networks.empty() && !compared) {
    const Thresholds t((*settings)->thresholds);
    int64_t now = static_cast<int64_t>(std::time(nullptr));
    TimePoint limit =
        std::min(SteadyClock::now() + std::chrono::milliseconds(500),
                 start + std::chrono::duration_cast<SteadyClock::duration>(
                             std::chrono::duration<double>((*settings)->deadline_s + 0.5)));
    ClientHistory h = ReadClientHistory((*settings)->db_path, now,
                                        t.Get("net.clients.degraded", "history_days"), limit);
    size_t before = report.findings.size();
    if (!h.empty()) JudgeClientsAgainstHistory(*sockets, h, now, t, report.findings);
    if (report.findings.size() != before) SortFindings(report.findings);
  }

  if (InSchedulerMode(o)) return FinishCheckForScheduler(o, report);
  std::string out;
  if (o.json) {
    out = RenderJson(report);
  } else {
    Report shown = report;  // Chinese: the catalogue title before each summary (rules/localize.h)
    shown.findings = LocalizeFindings(std::move(shown.findings));
    out = RenderText(shown, UseColor(o));
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  // Nothing measured at all (every probe failed, was skipped or timed out): the tool could not
  // do its job, and "ok" would be a lie.
  int ok_probes = 0;
  for (const auto& p : report.snapshot.probes) ok_probes += p.state == ProbeState::kOk ? 1 : 0;
  // ... unless what did run found a fault (a hung NVML call is a crit finding, not a tool failure).
  bool found_fault = false;
  for (const auto& f : report.findings) {
    if (f.severity != Severity::kInfo && f.id.rfind("gpudoctor.", 0) != 0) found_fault = true;
  }
  if (ok_probes == 0 && !found_fault) {
    // Say why, probe by probe (the first three): "check the --path.* flags" alone sent a user
    // whose only probe was skipped for a silent gateway looking at the wrong thing.
    std::string why;
    size_t shown_reasons = 0;
    for (const auto& p : report.snapshot.probes) {
      if (p.reason.empty() || shown_reasons == 3) continue;
      why += std::string(shown_reasons++ ? "; " : ": ") + p.name + " " + ProbeStateName(p.state) +
             ": " + p.reason;
    }
    return CouldNotRun("no probe could measure anything (" +
                       std::to_string(report.snapshot.probes.size()) +
                       " probes failed, were skipped or timed out)" + why +
                       (report.snapshot.probes.size() > 1 ? "; check the --path.* flags" : ""));
  }
  return ExitCodeFor(report.findings);
}

}  // namespace gpudoctor
