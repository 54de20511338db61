// Report: the outcome of one check (snapshot + findings) and its renderings. Rendering is pure:
// text for people, JSON for machines. Thread-safe (no shared state).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/time_spec.h"  // FormatUtc, used by every report writer
#include "facts/snapshot.h"
#include "findings/finding.h"

namespace gpudoctor {

struct Report {
  Snapshot snapshot;
  std::vector<Finding> findings;  // sorted with SortFindings
  double duration_ms = 0;
};

// Troubleshooting order: layer (network, hardware, software, resources), then worst first, then
// id and subject for a stable order.
void SortFindings(std::vector<Finding>& findings);

// "ok" (no findings or info only), "warn", "crit".
const char* Verdict(const std::vector<Finding>& findings);
// 0 ok/info, 1 warn, 2 crit.
int ExitCodeFor(const std::vector<Finding>& findings);
// The node's action, as the reports print it ("action" in JSON, the text report's last line):
// the most disruptive action among the warn and crit findings, kNone when there are none. Info
// findings never set it, as they never set the verdict or the exit code: an info finding's
// action (driver.release.old's fix_config) is advice about that finding, not about the node.
Action NodeAction(const std::vector<Finding>& findings);

// {"verdict","host","time","duration_ms","findings":[...],"probes":[...], ...layer sections}
std::string RenderJson(const Report& report);
// In the current language (core/i18n.h): labels, next steps and action phrases are translated;
// summaries and evidence (built by the rules) stay as they are. The caller prefixes the
// catalogue's translated title to each summary first (LocalizeFindings, rules/localize.h).
std::string RenderText(const Report& report, bool color);
// The fixed texts RenderText translates (msgids of po/zh_CN.po).
const std::vector<std::string_view>& TextReportLabels();
// One finding as in the text report: severity, id, GPU, summary, evidence line, next steps.
std::string RenderFindingText(const Finding& f, bool color);

}  // namespace gpudoctor
