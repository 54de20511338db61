// `gpudoctor fleet`: many nodes at once. Inputs: --reports (check --json reports: directory,
// file or - for stdin, repeatable) and --prometheus URL. Output: health table, stragglers,
// lemons, failure statistics (text or --json); `fleet card SERIAL` / `fleet slot NODE:BUS`
// judge card vs slot (exit 1 on a verdict, or on a serial or slot not in the data: "no such
// serial", with the nearest ones; 0 undecided). Exit: 0 ok, 1 warn, 2 crit, 3 no usable input.
#include <sys/stat.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

#include "cli/commands.h"
#include "core/root_fs.h"
#include "core/strings.h"
#include "core/terminal_text.h"
#include "core/thread_name.h"
#include "fleet/analysis.h"
#include "fleet/db_input.h"
#include "fleet/onsets.h"
#include "fleet/prometheus_input.h"
#include "fleet/query_index.h"
#include "fleet/report_parse_module.h"
#include "fleet/report_reader.h"

namespace gpudoctor {
namespace {

// A secret (token, password) from a file: its first line without the line end; the file must be
// a regular file not readable by group or others. Errors name the flag and the file, never the
// content.
Result<std::string> ReadSecretFile(const std::string& flag, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return NotFound(flag + " " + path + ": cannot stat");
  if (!S_ISREG(st.st_mode)) return InvalidArgument(flag + " " + path + ": not a regular file");
  if (st.st_mode & 0077) {
    return PermissionDenied(flag + " " + path + ": readable by group or others; chmod 600 it");
  }
  if (st.st_size > 64 * 1024) return InvalidArgument(flag + " " + path + ": too large");
  std::ifstream in(path, std::ios::binary);
  if (!in) return PermissionDenied(flag + " " + path + ": cannot open");
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.pop_back();
  if (line.empty()) return InvalidArgument(flag + " " + path + ": the first line is empty");
  for (unsigned char c : line) {
    if (c < 0x20 || c == 0x7f) {
      return InvalidArgument(flag + " " + path + ": a control character in the first line");
    }
  }
  return line;
}

// --prometheus-ca, --prometheus-token-file, --prometheus-user + --prometheus-password-file.
Result<fleet::PrometheusAuth> PrometheusAuthFrom(const CliOptions& o) {
  fleet::PrometheusAuth auth;
  if (auto ca = o.Value("--prometheus-ca")) {
    std::ifstream in(*ca);
    if (!in) return NotFound("--prometheus-ca " + *ca + ": cannot read");
    auth.ca_file = *ca;
  }
  auto token = o.Value("--prometheus-token-file");
  auto user = o.Value("--prometheus-user");
  auto password = o.Value("--prometheus-password-file");
  if (token && user) {
    return InvalidArgument(
        "--prometheus-token-file and --prometheus-user: give one (bearer or basic)");
  }
  if (user.has_value() != password.has_value()) {
    return InvalidArgument("--prometheus-user and --prometheus-password-file go together");
  }
  if (token) {
    auto t = ReadSecretFile("--prometheus-token-file", *token);
    if (!t.ok()) return t.status();
    auth.bearer_token = *t;
  }
  if (user) {
    auto p = ReadSecretFile("--prometheus-password-file", *password);
    if (!p.ok()) return p.status();
    auth.basic_user = *user;
    auth.basic_password = *p;
  }
  return auth;
}

// Prints a card or slot verdict; the exit code: 0 undecided, 1 a verdict ("card" / "slot":
// something to act on) or "unknown" (the serial or slot was mistyped).
int PrintVerdict(const CliOptions& o, const std::string& mode, const fleet::Verdict& v,
                 size_t problems) {
  std::string out = o.json ? fleet::RenderVerdictJson(v) : fleet::RenderVerdictText(v);
  if (v.verdict == "unknown") {
    std::fprintf(stderr, "gpudoctor: fleet %s: %s\n", mode.c_str(), TerminalSafe(v.reason).c_str());
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (problems > 0) {
    std::fprintf(stderr, "gpudoctor: fleet: %zu input problem(s), listed in the output\n",
                 problems);
  }
  return v.verdict == "undecided" ? 0 : 1;
}

}  // namespace

int FleetCommand(const CliOptions& o) {
  using namespace fleet;
  std::string mode = o.positional.empty() ? "" : o.positional[0];
  if (!mode.empty() && mode != "card" && mode != "slot") {
    return CouldNotRun("fleet: unknown '" + Sanitize(mode, 40) +
                       "' (expected card SERIAL or slot NODE:BUS)");
  }
  if (!mode.empty() && o.positional.size() != 2) {
    return CouldNotRun("fleet " + mode + " takes exactly one argument");
  }
  auto reports = o.All("--reports");
  auto prom = o.Value("--prometheus");
  auto dbs = o.All("--db");
  if (reports.empty() && !prom && dbs.empty()) {
    return CouldNotRun("fleet needs an input: --reports DIR|FILE|-, --prometheus URL or --db FILE");
  }
  FleetOptions opt;
  if (auto w = o.Value("--window")) opt.outliers.window_s = *ParseInt64(*w);
  if (auto p = o.Value("--persist"))
    opt.outliers.persist_windows = static_cast<int>(*ParseInt64(*p));
  if (auto l = o.Value("--lemon-min")) opt.lemon_min_onsets = static_cast<int>(*ParseInt64(*l));
  int64_t now_s = static_cast<int64_t>(std::time(nullptr));
  // Every input is bounded by --deadline: each report file and each database is read within it,
  // and the Prometheus requests together end by it.
  TimePoint start = SteadyClock::now();
  auto per_input = InputDeadline(o) - start;
  // A card or slot query on one reports directory: answered from the query index when the
  // directory has not changed since it was built (query_index.h), else from the reports, and
  // the query index is saved for the next query.
  // A plain run on one reports directory writes the query index too, so the first query after
  // it is answered from the index.
  std::string query_index;
  if (reports.size() == 1 && reports[0] != "-" && dbs.empty() && !prom) {
    if (auto info = RootFs::Stat(reports[0]); info.ok() && info->is_dir) {
      query_index = QueryIndexPath(DefaultIndexPath(reports[0]));
    }
  }
  if (!mode.empty() && !query_index.empty()) {
    // --trust-dir-mtime: answered on the directories' stamps when none moved (no stat per
    // report; a report rewritten in place is not seen), else as by default.
    const Freshness freshness =
        o.Has("--trust-dir-mtime") ? Freshness::kDirectoryMtime : Freshness::kEveryFile;
    auto answer = QueryFromIndex(query_index, reports[0], mode == "card", o.positional[1], now_s,
                                 start + per_input, nullptr, freshness);
    if (answer) return PrintVerdict(o, mode, answer->verdict, answer->head.problems);
  }
  FleetData data;
  ReadStats read_stats;
  // Reports are parsed by a module loaded on first use (fleet/report_parse_module.h): without it
  // say so once, not once per report.
  if (!reports.empty()) {
    if (Status s = LoadFleetJsonModule(); !s.ok()) return CouldNotRun("fleet: " + s.message());
  }
  for (const auto& path : reports) {
    auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(per_input);
    // A directory's parsed reports are cached (report_index.h): card and slot queries and
    // repeated runs parse only the files that changed.
    std::string index = path == "-" ? "" : DefaultIndexPath(path);
    if (Status s = ReadReports(path, now_s, data, timeout, index, &read_stats); !s.ok()) {
      return CouldNotRun(s.message());
    }
  }
  for (const auto& db : dbs) {
    if (Status s = ReadHistoryDb(db, data, SteadyClock::now() + per_input, opt.outliers.window_s);
        !s.ok()) {
      data.problems.push_back({db, "", s.message()});
    }
  }
  if (prom) {
    auto settings = BuildSettings(o);
    if (!settings.ok()) return CouldNotRun(settings.status().message());
    auto auth = PrometheusAuthFrom(o);
    if (!auth.ok()) return CouldNotRun(auth.status().message());
    PrometheusQuery q;
    q.url = *prom;
    q.auth = *auth;
    q.end_s = now_s;
    q.start_s = (*settings)->kmsg_since_unix_s.value_or(now_s - 3600);
    q.step_s = opt.outliers.window_s;
    q.deadline = start + std::chrono::duration_cast<SteadyClock::duration>(
                             std::chrono::duration<double>((*settings)->deadline_s));
    if (Status s = ReadPrometheus(q, data); !s.ok()) {
      data.problems.push_back({UrlOrigin(*prom), "", s.message()});
    }
  }
  if (data.reports.empty()) {
    for (const auto& p : data.problems) {
      std::fprintf(stderr, "gpudoctor: %s\n", TerminalSafe(p.source + ": " + p.message).c_str());
    }
    return CouldNotRun("fleet: no usable report in the input (" +
                       std::to_string(data.problems.size()) + " problems above)");
  }
  std::string out;
  int code = 0;
  size_t problems = data.problems.size();
  if (mode.empty()) {
    // The query index's ledger and faults are built beside the analysis (both only read the
    // data), unless the index is already fresh for these reports.
    std::vector<Tenure> ledger;
    std::vector<Fault> faults;
    std::thread ledger_worker;
    const bool save_query_index =
        !query_index.empty() && !QueryIndexIsFresh(query_index, read_stats.fingerprint,
                                                   read_stats.stamp_hash, now_s, start + per_input);
    auto build_ledger = [&data, &ledger, &faults] {
      ledger = BuildLedger(data);
      faults = HardwareFaults(data, FindOnsets(data));
    };
    if (save_query_index) {
      try {
        ledger_worker = std::thread([&build_ledger] {
          NameThisThread("gd-ledger");
          build_ledger();
        });
      } catch (const std::system_error&) {
        build_ledger();  // no thread: on this one
      }
    }
    FleetAnalysis a = Analyze(data, opt);
    if (o.json) {  // written as it is made: the document is not held whole (~33 MB at 10k nodes)
      WriteFleetJson(data, a, [](std::string_view piece) {
        std::fwrite(piece.data(), 1, piece.size(), stdout);
      });
    } else {
      out = RenderFleetText(data, a);
    }
    code = FleetExitCode(a);
    problems += a.problems.size();  // found across reports (a serial in two slots at once)
    if (save_query_index) {
      if (ledger_worker.joinable()) ledger_worker.join();
      QueryIndexHead head{read_stats.fingerprint,    now_s,
                          read_stats.stable_until_s, data.reports.size(),
                          data.problems.size(),      read_stats.stamp_paths,
                          read_stats.stamp_hash};
      (void)SaveQueryIndex(query_index, head, ledger, faults);  // without one, queries just read
    }
  } else {
    auto ledger = BuildLedger(data);
    auto faults = HardwareFaults(data, FindOnsets(data));
    if (!query_index.empty()) {
      QueryIndexHead head{read_stats.fingerprint,    now_s,
                          read_stats.stable_until_s, data.reports.size(),
                          data.problems.size(),      read_stats.stamp_paths,
                          read_stats.stamp_hash};
      (void)SaveQueryIndex(query_index, head, ledger, faults);  // without one, queries just read
    }
    Verdict v = mode == "card" ? JudgeCard(o.positional[1], ledger, faults)
                               : JudgeSlot(o.positional[1], ledger, faults);
    return PrintVerdict(o, mode, v, problems);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (problems > 0) {
    std::fprintf(stderr, "gpudoctor: fleet: %zu input problem(s), listed in the output\n",
                 problems);
  }
  return code;
}

}  // namespace gpudoctor
