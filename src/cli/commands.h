// Subcommands. Each returns the process exit code (DESIGN.md: 0 ok, 1 warn, 2 crit, 3 could not
// run, with one line on stderr). Main() dispatches and leaves the process with std::_Exit after
// flushing, because abandoned probe workers may still be running.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "cli/cli_options.h"
#include "core/deadline.h"
#include "core/settings.h"
#include "findings/finding.h"

namespace gpudoctor {

inline constexpr int kExitCouldNotRun = 3;

int Main(int argc, char** argv);

// Defaults, then the config file (explicit --config, or the default path when present), then
// flag overrides. Prints config warnings to stderr. Errors name file, line and key.
Result<std::shared_ptr<Settings>> BuildSettings(const CliOptions& options);

// When reading the inputs a command was given (reports, traces, databases) must end: now plus
// --deadline (default 10 s). Every file read of a command's input is bounded by it.
TimePoint InputDeadline(const CliOptions& options);

// A history database path (--db, [watch] db) that exists must be a regular file: SQLite would
// block forever opening a FIFO. A missing path is Ok (watch creates it; readers say so).
Status CheckDbPath(const std::string& path);

// Prints "gpudoctor: <message>" to stderr and returns kExitCouldNotRun.
int CouldNotRun(const std::string& message);
bool UseColor(const CliOptions& options);

int CheckCommand(const CliOptions& options);
int ExplainCommand(const CliOptions& options);
int ConfigCommand(const CliOptions& options);
int ProbesCommand(const CliOptions& options);
int LogsCommand(const CliOptions& options);     // logs_command.cc (kernel log)
int WatchCommand(const CliOptions& options);    // watch_command.cc
int CompareCommand(const CliOptions& options);  // compare_command.cc
int TopCommand(const CliOptions& options);      // top_command.cc
int HistoryCommand(const CliOptions& options);  // history_command.cc (watch store)
int AckCommand(const CliOptions& options);      // ack_command.cc
int SilenceCommand(const CliOptions& options);  // ack_command.cc
// `plan` parses its own flags (plus the global ones): plan_command.cc.
bool IsPlanCommand(int argc, const char* const* argv);
int PlanMain(int argc, const char* const* argv);
int FleetCommand(const CliOptions& options);     // fleet_command.cc (many nodes)
int BundleCommand(const CliOptions& options);    // bundle_command.cc (support archive)
int NetcheckCommand(const CliOptions& options);  // netcheck_command.cc (the user's side)
int WhyCommand(const CliOptions& options);       // why_command.cc (when and why a job slowed)
int MarkCommand(const CliOptions& options);      // mark_command.cc (a job's step mark)
int ReportCommand(const CliOptions& options);    // report_command.cc (report bandwidth)
int ScanCommand(const CliOptions& options);      // scan_command.cc (a compromised host)

// The dispatcher's table (main_dispatch.cc): every command parsed by the shared flag table.
// CommandNames (cli_options.h) is these names plus "plan".
struct CommandEntry {
  std::string_view name;
  int (*run)(const CliOptions&);
};
const std::vector<CommandEntry>& CommandTable();

// check --slurm / --npd (sched_modes.cc): act on the findings per the scheduler's contract
// instead of printing the report. tool_error non-empty = the check could not run.
bool InSchedulerMode(const CliOptions& options);
// --npd together with --slurm is refused (the NPD way, below).
int FinishSchedulerMode(const CliOptions& options, const std::vector<Finding>& findings,
                        const std::string& tool_error);
// node-problem-detector reads exit 0/1/2 and one stdout line, whatever went wrong: when argv
// asks for --npd, a failure before the check runs (a bad flag, an unknown command) is answered
// with NpdCouldNotRun: the "unknown: ..." line on stdout, the reason on stderr, exit 2.
bool NpdRequested(int argc, const char* const* argv);
int NpdCouldNotRun(const std::string& why);
// check --npd --connect URL: the findings of the running watch at URL (cli/npd_connect.h)
// judged by FinishSchedulerMode, within settings.deadline_s; an unreachable, starting or stale
// watch is exit 2 with the reason. The token as `top --connect` (ConnectToken).
int NpdFromWatch(const CliOptions& options, const Settings& settings);
// The bearer token for --connect (check --npd, top): --token-file (must be readable and 0600,
// else an error), else $GPUDOCTOR_TOKEN, else the config's [watch] token_file when this user can
// read it (the daemon on this host), else none ("").
Result<std::string> ConnectToken(const CliOptions& options, const Settings& settings);

}  // namespace gpudoctor
