// `check --slurm` and `check --npd`: the scheduler contracts around one check (src/sched).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "cli/commands.h"
#include "cli/npd_connect.h"
#include "core/terminal_text.h"
#include "sched/npd.h"
#include "sched/slurm.h"
#include "sched/slurm_record.h"
#include "serve/http_server.h"

namespace gpudoctor {
namespace {

std::string ShortHostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  std::string h = buf;
  return h.substr(0, h.find('.'));
}

std::optional<Layer> LayerNamed(const std::optional<std::string>& name) {
  if (!name) return std::nullopt;
  for (Layer l : {Layer::kNetwork, Layer::kHardware, Layer::kSoftware, Layer::kResources}) {
    if (*name == LayerName(l)) return l;
  }
  return std::nullopt;
}

}  // namespace

bool InSchedulerMode(const CliOptions& o) {
  return o.Has("--slurm") || o.Has("--slurm-dry-run") || o.Has("--npd");
}

bool NpdRequested(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--") break;
    if (a == "--npd") return true;
  }
  return false;
}

int NpdCouldNotRun(const std::string& why) {
  NpdOutcome r = NpdResult({}, std::nullopt, why);
  std::printf("%s\n", r.message.c_str());
  std::fprintf(stderr, "gpudoctor: %s\n", TerminalSafe(why).c_str());
  return r.exit_code;
}

Result<std::string> ConnectToken(const CliOptions& o, const Settings& s) {
  if (auto path = o.Value("--token-file")) return ReadTokenFile(*path);
  if (const char* env = std::getenv("GPUDOCTOR_TOKEN"); env != nullptr && *env != '\0') {
    return std::string(env);
  }
  if (!s.watch_token_file.empty()) {
    if (auto t = ReadTokenFile(s.watch_token_file); t.ok()) return t;
  }
  return std::string();
}

int NpdFromWatch(const CliOptions& o, const Settings& s) {
  std::string url = o.Value("--connect").value_or("");
  auto token = ConnectToken(o, s);
  if (!token.ok()) return NpdCouldNotRun(token.status().message());
  // The whole exchange within the check's deadline: NPD's rule timeout must never fire first.
  TimePoint deadline = SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                                                std::chrono::duration<double>(s.deadline_s));
  auto findings = FetchWatchFindings(url, *token, deadline);
  if (!findings.ok()) return NpdCouldNotRun(findings.status().message());
  return FinishSchedulerMode(o, *findings, "");
}

int FinishSchedulerMode(const CliOptions& o, const std::vector<Finding>& findings,
                        const std::string& tool_error) {
  if (o.Has("--npd") && (o.Has("--slurm") || o.Has("--slurm-dry-run"))) {
    return NpdCouldNotRun("--npd and --slurm exclude each other (one check answers one scheduler)");
  }
  if (o.Has("--npd")) {
    if (!tool_error.empty()) return NpdCouldNotRun(tool_error);
    std::optional<Layer> layer = LayerNamed(o.Value("--npd-layer"));
    NpdOutcome r = o.Has("--npd-warnings") ? NpdWarnings(findings, layer, tool_error)
                                           : NpdResult(findings, layer, tool_error);
    std::printf("%s\n", r.message.c_str());
    return r.exit_code;
  }
  SlurmOptions so;
  so.node = o.Value("--slurm-node").value_or(ShortHostname());
  so.scontrol = o.Value("--scontrol").value_or("scontrol");
  so.drain_on_tool_failure = o.Has("--slurm-drain-on-failure");
  so.state_dir = o.Value("--state-dir").value_or(kDefaultStateDir);
  so.dry_run = o.Has("--slurm-dry-run");
  so.now_unix_s = static_cast<int64_t>(std::time(nullptr));
  SlurmOutcome r = RunSlurmMode(findings, tool_error, so);
  if (!r.stdout_line.empty()) std::printf("%s\n", r.stdout_line.c_str());
  if (!r.message.empty()) std::fprintf(stderr, "gpudoctor: slurm: %s\n", r.message.c_str());
  return r.exit_code;
}

}  // namespace gpudoctor
