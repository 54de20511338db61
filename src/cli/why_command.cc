// `gpudoctor why [--job NAME] [--at TIME] [--since 24h] [--until TIME] [--db PATH] [--json]`:
// when did the job become slow and what changed then, from the watch history (why/why.h).
// Exit 0: no slowdown; 1: a slowdown, explained as far as the history allows; 3: could not run.
#include <cstdio>
#include <ctime>

#include "cli/commands.h"
#include "core/json_text.h"
#include "core/strings.h"
#include "core/time_spec.h"
#include "store/history_store.h"
#include "why/why_load.h"

namespace gpudoctor {

std::string HistoryDbPath(const CliOptions& o);  // history_command.cc

int WhyCommand(const CliOptions& o) {
  if (!o.positional.empty()) {
    return CouldNotRun("why takes no arguments: '" + Sanitize(o.positional[0], 40) +
                       "' (use --job NAME, --at TIME, --since 24h)");
  }
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  WhyRequest req;
  req.since_unix_s = now - 86400;
  req.until_unix_s = now;
  if (auto v = o.Value("--since")) {
    auto t = ParseTimeSpec(*v, now);
    if (!t) return CouldNotRun("flag --since: bad time '" + Sanitize(*v, 40) + "'");
    req.since_unix_s = *t;
  }
  if (auto v = o.Value("--until")) req.until_unix_s = ParseTimeSpec(*v, now).value_or(now);
  if (auto v = o.Value("--at")) req.at_unix_s = ParseTimeSpec(*v, now);
  if (auto v = o.Value("--job")) req.job = *v;
  if (req.until_unix_s < req.since_unix_s) {
    return CouldNotRun("--until " + FormatUtc(req.until_unix_s) + " is before --since " +
                       FormatUtc(req.since_unix_s));
  }
  if (req.at_unix_s && (*req.at_unix_s < req.since_unix_s || *req.at_unix_s > req.until_unix_s)) {
    return CouldNotRun("--at " + FormatUtc(*req.at_unix_s) + " is outside --since/--until");
  }
  std::string db = HistoryDbPath(o);
  if (Status s = CheckDbPath(db); !s.ok()) return CouldNotRun("history database " + s.message());
  auto reader = HistoryReader::Open(db, InputDeadline(o));
  if (!reader.ok()) return CouldNotRun("history database " + reader.status().message());
  Result<WhyResult> r = RunWhy(**reader, req);
  if (!r.ok()) return CouldNotRun(r.status().message());
  std::string out = o.json ? JsonText(WhyToJson(*r), 2) + "\n" : WhyToText(*r);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return r->onset ? 1 : 0;
}

}  // namespace gpudoctor
