// `gpudoctor ack ID` and `gpudoctor silence ID --for 2h`: operator writes into the watch history
// database through their own connection (bounded busy_timeout), also while the daemon runs; the
// daemon never undoes them. Exit 0, or 3 with one line (no such open finding, bad database).
#include <cstdio>
#include <ctime>

#include "cli/commands.h"
#include "core/strings.h"
#include "core/time_spec.h"
#include "store/history_store.h"

namespace gpudoctor {

std::string HistoryDbPath(const CliOptions& o);  // history_command.cc

namespace {

int Mark(const CliOptions& o, bool ack) {
  const char* cmd = ack ? "ack" : "silence";
  if (o.positional.size() != 1) {
    return CouldNotRun(std::string(cmd) +
                       " needs exactly one finding ID (see gpudoctor history "
                       "--findings)");
  }
  const std::string& id = o.positional[0];
  std::optional<int> gpu;
  if (auto g = o.Value("--gpu")) gpu = std::stoi(*g);
  std::string db = HistoryDbPath(o);
  if (Status s = CheckDbPath(db); !s.ok()) return CouldNotRun("history database " + s.message());
  int64_t now_ms = static_cast<int64_t>(std::time(nullptr)) * 1000;
  Result<int> n = 0;
  std::string what;
  if (ack) {
    n = AckFindings(db, id, gpu, now_ms, o.Value("--note").value_or(""));
    what = "acknowledged";
  } else {
    auto v = o.Value("--for");
    if (!v) return CouldNotRun("silence needs --for DURATION (90s, 15m, 2h, 7d)");
    int64_t until_ms = now_ms + ParseDurationS(*v).value_or(0) * 1000;
    n = SilenceFindings(db, id, gpu, until_ms, now_ms);
    what = "silenced until " + FormatUtc(until_ms / 1000);
  }
  if (!n.ok()) return CouldNotRun(std::string(cmd) + ": " + n.status().message());
  std::printf("%s %d finding(s) %s%s in %s\n", what.c_str(), *n, Sanitize(id, 80).c_str(),
              gpu ? (" on GPU " + std::to_string(*gpu)).c_str() : "", db.c_str());
  return 0;
}

}  // namespace

int AckCommand(const CliOptions& o) { return Mark(o, true); }
int SilenceCommand(const CliOptions& o) { return Mark(o, false); }

}  // namespace gpudoctor
