// `gpudoctor report bandwidth [--since 30d] [--until T] [--nic X] [--plan-mbps N] [--db PATH]
// [--json]`: the figures for the conversation with the bandwidth provider, from the watch
// history (bandwidth/bandwidth_report.h). Exit 0: reported (also "nothing stored"); 3: could not
// run.
#include <cstdio>
#include <ctime>
#include <optional>

#include "bandwidth/bandwidth_report.h"
#include "cli/commands.h"
#include "core/json_text.h"
#include "core/strings.h"
#include "core/time_spec.h"
#include "store/history_store.h"

namespace gpudoctor {

std::string HistoryDbPath(const CliOptions& o);  // history_command.cc

int ReportCommand(const CliOptions& o) {
  if (o.positional.size() != 1 || o.positional[0] != "bandwidth") {
    return CouldNotRun(o.positional.empty() ? "report needs a subject: gpudoctor report bandwidth"
                                            : "unknown report '" + Sanitize(o.positional[0], 40) +
                                                  "' (known: bandwidth)");
  }
  auto settings = BuildSettings(o);
  if (!settings.ok()) return CouldNotRun(settings.status().message());
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  int64_t since = now - 30 * 86400, until = now;
  if (auto v = o.Value("--since")) {
    auto t = ParseTimeSpec(*v, now);
    if (!t) return CouldNotRun("flag --since: bad time '" + Sanitize(*v, 40) + "'");
    since = *t;
  }
  if (auto v = o.Value("--until")) {
    auto t = ParseTimeSpec(*v, now);
    if (!t) return CouldNotRun("flag --until: bad time '" + Sanitize(*v, 40) + "'");
    until = *t;
  }
  if (until < since) {
    return CouldNotRun("--until " + FormatUtc(until) + " is before --since " + FormatUtc(since));
  }
  BandwidthOptions opt;
  if (auto v = o.Value("--nic")) opt.nic = *v;
  if (auto v = o.Value("--plan-mbps"))
    opt.plan_mbps_flag = ParseDouble(*v);  // validated by the flag
  std::string db = HistoryDbPath(o);
  if (Status s = CheckDbPath(db); !s.ok()) return CouldNotRun("history database " + s.message());
  auto reader = HistoryReader::Open(db, InputDeadline(o));
  if (!reader.ok()) return CouldNotRun("history database " + reader.status().message());
  Result<BandwidthReport> r =
      LoadBandwidthReport(**reader, since, until, opt, &(*settings)->thresholds);
  if (!r.ok()) return CouldNotRun(r.status().message());
  std::string out = o.json ? JsonText(BandwidthReportJson(*r), 2) + "\n" : BandwidthReportText(*r);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace gpudoctor
