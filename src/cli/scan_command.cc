// `gpudoctor scan [--since TIME] [--json]`: ClamAV on the executables of flagged and GPU
// processes, package integrity of system binaries, SSH authorized_keys and crontabs changed since
// TIME (default: 7 days ago). Each step is bounded (--tool-timeout per tool, default 120 s;
// --deadline for the /proc walk and the file reads) and ends in findings (cli/scan_checks.h).
// Exit like check: 0 nothing found (an absent tool is a note, as a skipped probe is for check),
// 1 warn (a changed file, or a tool that failed or ran out of time), 2 crit (malware found), 3
// could not run.
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/scan_checks.h"
#include "core/hostname.h"
#include "core/json_text.h"
#include "core/strings.h"
#include "core/time_spec.h"
#include "report/json_report.h"
#include "report/report.h"

namespace gpudoctor {

int ScanCommand(const CliOptions& o) {
  if (!o.positional.empty()) {
    return CouldNotRun("usage: gpudoctor scan [--since TIME] [--json] [--tool-timeout SECONDS]");
  }
  auto settings = BuildSettings(o);
  if (!settings.ok()) return CouldNotRun(settings.status().message());
  const Settings& s = **settings;
  SecurityScanOptions opts;
  opts.fs = s.fs;
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  opts.since_unix_s = s.kmsg_since_unix_s.value_or(now - 7 * 86400);
  if (auto it = o.values.find("--since"); it != o.values.end()) {
    opts.since_text = it->second;
  } else {
    opts.since_text = "7d (default)";
  }
  if (auto it = o.values.find("--tool-timeout"); it != o.values.end()) {
    opts.tool_timeout_s = ParseDouble(it->second).value_or(120);
  }

  std::vector<SecurityScanTarget> targets = CollectScanTargets(opts.fs, InputDeadline(o));
  std::vector<Finding> findings;
  if (opts.tool_timeout_s <= 0) {
    for (const char* step : {"clamav", "packages"}) {
      Finding f = MakeScanNotChecked(step, "external tools disabled by --tool-timeout 0",
                                     NotCheckedKind::kAbsent);
      findings.push_back(std::move(f));
    }
  } else {
    ScanWithClamav(opts, targets, findings);
    VerifyPackages(opts, findings);
  }
  opts.files_deadline = InputDeadline(o);  // counted from now: the tools took their own time
  CheckChangedFiles(opts, findings);

  std::string when = FormatUtc(std::chrono::system_clock::now());
  if (o.json) {
    nlohmann::ordered_json out;
    out["scan"] = LocalHostname();
    out["time"] = when;
    out["since"] = FormatUtc(opts.since_unix_s);
    out["targets"] = nlohmann::ordered_json::array();
    for (const auto& t : targets) {
      nlohmann::ordered_json j;
      j["exe"] = t.exe;
      j["pids"] = t.pids;
      j["comms"] = t.comms;
      j["why"] = t.why;
      out["targets"].push_back(j);
    }
    out["findings"] = nlohmann::ordered_json::array();
    for (const auto& f : findings) out["findings"].push_back(FindingToJson(f));
    std::string text = JsonText(out, 2) + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
    // stdout is for machines here: a step that did not run is also said to whoever watches.
    for (const auto& f : findings) {
      if (f.id == "scan.not_checked") std::fprintf(stderr, "gpudoctor: %s\n", f.summary.c_str());
    }
  } else {
    std::string out = "gpudoctor scan of " + LocalHostname() + " at " + when + " (changes since " +
                      FormatUtc(opts.since_unix_s) + ")\n";
    out += std::to_string(targets.size()) + " executable(s) of flagged or GPU processes\n\n";
    for (const auto& f : findings) out += RenderFindingText(f, UseColor(o)) + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return ExitCodeFor(findings);
}

}  // namespace gpudoctor
