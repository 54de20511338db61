// `gpudoctor logs FILE|-`: scan a saved kernel log (any common shape), streaming, and print the
// kernel-log findings (text or --json). Exit code as for check: 0 ok/info, 1 warn, 2 crit, 3 the
// file could not be read.
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "core/json_text.h"
#include "core/strings.h"
#include "kmsg/log_scanner.h"
#include "report/json_report.h"
#include "report/kernel_log_json.h"
#include "report/report.h"
#include "rules/engine.h"
#include "rules/localize.h"

namespace gpudoctor {
namespace {

std::string RenderLogsText(const KernelLogFacts& k, const std::vector<Finding>& findings,
                           bool color) {
  std::string out =
      "gpudoctor logs: " + Sanitize(k.source, 200) + ": " + std::to_string(k.bytes_scanned) +
      " bytes, " + std::to_string(k.lines_examined) + " lines examined, " +
      std::to_string(findings.size()) + " finding(s), verdict " + Verdict(findings) + "\n";
  if (!findings.empty()) out += "\n";
  for (const auto& f : LocalizeFindings(findings)) out += RenderFindingText(f, color);
  if (k.garbled_lines || k.truncated_lines || k.non_kernel_lines || k.dropped_events) {
    out += "\nskipped: " + std::to_string(k.garbled_lines) + " garbled, " +
           std::to_string(k.truncated_lines) + " over-long, " + std::to_string(k.non_kernel_lines) +
           " from user space, " + std::to_string(k.dropped_events) + " beyond the event table\n";
  }
  if (k.repaired_lines) {
    out += "repaired: " + std::to_string(k.repaired_lines) +
           " line(s) with invalid UTF-8 or control bytes (shown with '?')\n";
  }
  return out;
}

// Writes `j` as dump(2) would at `depth` levels of nesting (2 spaces each): every line after the
// first indented by depth * 2 more spaces (JSON strings hold no raw newline).
void WriteNested(const nlohmann::ordered_json& j, int depth) {
  const std::string text = JsonText(j, 2);
  const std::string indent(static_cast<size_t>(depth) * 2, ' ');
  size_t from = 0;
  for (;;) {
    const size_t nl = text.find('\n', from);
    if (nl == std::string::npos) break;
    std::fwrite(text.data() + from, 1, nl + 1 - from, stdout);
    std::fwrite(indent.data(), 1, indent.size(), stdout);
    from = nl + 1;
  }
  std::fwrite(text.data() + from, 1, text.size() - from, stdout);
}

// The --json document, byte for byte what dump(2) of {verdict, kernel_log, findings} gives, but
// written a finding at a time: the whole tree and its text are never held at once (fewer fresh
// heap pages, each a page fault: the start-up cost of `logs` on a large file).
void WriteLogsJson(const KernelLogFacts& k, const std::vector<Finding>& findings) {
  std::fputs("{\n  \"verdict\": ", stdout);
  WriteNested(nlohmann::ordered_json(Verdict(findings)), 1);
  std::fputs(",\n  \"kernel_log\": ", stdout);
  WriteNested(KernelLogFactsToJson(k), 1);
  std::fputs(",\n  \"findings\": ", stdout);
  if (findings.empty()) {
    std::fputs("[]", stdout);
  } else {
    std::fputs("[\n", stdout);
    for (size_t i = 0; i < findings.size(); ++i) {
      std::fputs("    ", stdout);
      WriteNested(FindingToJson(findings[i]), 2);
      std::fputs(i + 1 < findings.size() ? ",\n" : "\n", stdout);
    }
    std::fputs("  ]", stdout);
  }
  std::fputs("\n}\n", stdout);
}

}  // namespace

int LogsCommand(const CliOptions& o) {
  // The log is the one operand, or --kmsg-file (the flag check, watch and bundle take for it).
  std::optional<std::string> flag_file = o.Value("--kmsg-file");
  if (o.positional.size() > 1 || (o.positional.empty() && !flag_file)) {
    return CouldNotRun("logs needs exactly one FILE (or - for stdin): gpudoctor logs FILE");
  }
  if (!o.positional.empty() && flag_file && *flag_file != o.positional[0]) {
    return CouldNotRun("logs got two files: " + o.positional[0] + " and --kmsg-file " + *flag_file +
                       "; give one");
  }
  const std::string path = o.positional.empty() ? *flag_file : o.positional[0];
  auto settings = BuildSettings(o);
  if (!settings.ok()) return CouldNotRun(settings.status().message());
  KernelLogScanOptions options;
  if ((*settings)->kmsg_since_unix_s) {
    options.since_wall_us = *(*settings)->kmsg_since_unix_s * 1000000;
  }
  options.current_boot_only = o.Has("--current-boot");
  // --deadline bounds the scan too: a FIFO or an endless device stops there (and says so).
  TimePoint deadline =
      SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                               std::chrono::duration<double>((*settings)->deadline_s));
  auto facts = ScanLogPath(path, options, deadline);
  if (!facts.ok()) return CouldNotRun(facts.status().message());

  Snapshot snap;
  snap.time = std::chrono::system_clock::now();
  snap.kernel = std::move(*facts);
  std::vector<Finding> findings = EvaluateRules(snap, (*settings)->thresholds);
  SortFindings(findings);
  if (o.json) {
    WriteLogsJson(snap.kernel, findings);
  } else {
    const std::string out = RenderLogsText(snap.kernel, findings, UseColor(o));
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return ExitCodeFor(findings);
}

}  // namespace gpudoctor
