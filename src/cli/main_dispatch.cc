#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "cli/commands.h"
#include "config/config.h"
#include "core/deadline.h"
#include "core/i18n.h"
#include "core/input_file.h"
#include "core/strings.h"
#include "core/terminal_text.h"
#include "core/version.h"
#include "probes/registry.h"

namespace gpudoctor {
namespace {

int Dispatch(int argc, char** argv) {
  if (IsPlanCommand(argc, argv)) return PlanMain(argc, argv);  // own flags (plan_command.cc)
  auto parsed = ParseCommandLine(argc, argv);
  if (!parsed.ok()) {
    if (NpdRequested(argc, argv)) return NpdCouldNotRun(parsed.status().message());
    return CouldNotRun(parsed.status().message());
  }
  const CliOptions& o = *parsed;
  auto lang = o.Value("--lang");
  SetLanguage(lang ? ParseLanguage(*lang).value_or(Language::kEnglish) : LanguageFromEnvironment());
  if (o.Has("--npd") && o.command != "check" && !o.help && !o.version) {
    return NpdCouldNotRun("--npd is a mode of `gpudoctor check`, not of '" +
                          Sanitize(o.command, 40) + "'");
  }
  if (o.version || o.command == "version") {
    std::printf("gpudoctor %s (%s)\n", GpudoctorVersion(), GpudoctorRevision());
    return 0;
  }
  if (o.command == "help" && !o.positional.empty()) {  // gpudoctor help COMMAND
    const std::string& c = o.positional[0];
    if (c == "plan") {
      const char* plan_help[] = {"gpudoctor", "plan", "--help"};
      return PlanMain(3, plan_help);
    }
    for (std::string_view name : CommandNames()) {
      if (name == c) {
        std::fputs(CommandUsageText(c).c_str(), stdout);
        return 0;
      }
    }
    return CouldNotRun("unknown command '" + Sanitize(c, 40) + "' (see gpudoctor --help)");
  }
  auto known = [](const std::string& c) {
    for (std::string_view name : CommandNames()) {
      if (name == c) return true;
    }
    return false;
  };
  if (o.help && known(o.command)) {
    std::fputs(CommandUsageText(o.command).c_str(), stdout);
    return 0;
  }
  if (o.help || o.command == "help") {
    std::fputs(UsageText().c_str(), stdout);
    return 0;
  }
  if (o.command.empty()) {
    std::fputs(UsageText().c_str(), stderr);
    return CouldNotRun("no command given (try: gpudoctor check)");
  }
  for (const auto& c : CommandTable()) {
    if (c.name == o.command) return c.run(o);
  }
  return CouldNotRun("unknown command '" + o.command + "' (see gpudoctor --help)");
}

}  // namespace

const std::vector<CommandEntry>& CommandTable() {
  static const std::vector<CommandEntry> commands = {
      {"check", CheckCommand},       {"explain", ExplainCommand},
      {"netcheck", NetcheckCommand}, {"config", ConfigCommand},
      {"probes", ProbesCommand},     {"logs", LogsCommand},  // kernel log (logs_command.cc)
      {"compare", CompareCommand},   {"watch", WatchCommand},
      {"history", HistoryCommand},   {"ack", AckCommand},
      {"silence", SilenceCommand},  // watch store
      {"top", TopCommand},           {"fleet", FleetCommand},
      {"bundle", BundleCommand},     {"why", WhyCommand},
      {"mark", MarkCommand},      // a job's speed (why/, job/)
      {"report", ReportCommand},  // report bandwidth (bandwidth/)
      {"scan", ScanCommand},      // a compromised host (scan_checks.h)
  };
  return commands;
}

int CouldNotRun(const std::string& message) {
  // Messages quote paths, flags and outside text: one line, no terminal controls.
  std::fprintf(stderr, "gpudoctor: %s\n", TerminalSafe(message).c_str());
  return kExitCouldNotRun;
}

bool UseColor(const CliOptions& o) {
  if (o.color == ColorMode::kAlways) return true;
  if (o.color == ColorMode::kNever) return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') return false;
  return isatty(STDOUT_FILENO) == 1;
}

namespace {

// The config file is outside input on a filesystem that may hang (a stale NFS mount, a FIFO):
// stat and read it under a deadline like every probe.
struct ConfigRead {
  bool present = false;
  Result<std::string> text = std::string();
};

}  // namespace

Result<std::shared_ptr<Settings>> BuildSettings(const CliOptions& o) {
  auto settings = std::make_shared<Settings>();
  // The flags' deadline (or the default) also bounds reading the config file itself.
  Settings flags_only;
  for (const auto& apply : o.overrides) apply(flags_only);
  double read_budget_s = std::min(1.0, flags_only.deadline_s);

  std::string path = o.config_path.value_or(kDefaultConfigPath);
  bool explicit_path = o.config_path.has_value();
  TimePoint read_deadline = SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                                                     std::chrono::duration<double>(read_budget_s));
  auto read = RunWithDeadline(
      [path, explicit_path, read_deadline] {
        ConfigRead r;
        r.present = explicit_path || RootFs::Exists(path);
        // A regular file only (a FIFO would block), never truncated.
        if (r.present) r.text = ReadInputFile(path, kMaxConfigBytes, read_deadline);
        return r;
      },
      read_deadline);
  if (!read) {
    return InvalidArgument("config file " + path + " did not answer within " +
                           FormatDouble(read_budget_s, 1) + " s (hung filesystem?)");
  }
  if (read->present) {
    if (!read->text.ok()) {
      if (read->text.status().code() == StatusCode::kNotFound) {
        return InvalidArgument("config file " + path + " not found");
      }
      return InvalidArgument("config " + read->text.status().message());
    }
    auto load = ApplyConfigText(*read->text, path, *settings);
    if (!load.ok()) return InvalidArgument("config " + load.status().message());
    for (const auto& w : load->warnings) std::fprintf(stderr, "gpudoctor: config %s\n", w.c_str());
  }
  for (const auto& apply : o.overrides) apply(*settings);
  if (Status s = ValidateProbeNames(*settings); !s.ok()) return s;
  // A mount point that was moved on purpose must exist: otherwise probes fail one by one (exit 1)
  // while others (NVML, the journal) still report the live host, a report of two machines.
  const RootFs defaults;
  const struct {
    const char* name;
    const std::string& dir;
    const std::string& default_dir;
  } moved[] = {{"procfs", settings->fs.procfs(), defaults.procfs()},
               {"sysfs", settings->fs.sysfs(), defaults.sysfs()},
               {"rootfs", settings->fs.rootfs(), defaults.rootfs()}};
  for (const auto& m : moved) {
    if (m.dir != m.default_dir && !RootFs::ListDir(m.dir).ok()) {
      return InvalidArgument(std::string(m.name) + " path " + m.dir + " (--path." + m.name +
                             " / [paths] " + m.name + ") is not a readable directory");
    }
  }
  // Probes sample over the window and then still need time to read and parse.
  if (settings->sample_ms > settings->deadline_s * 1000 / 2) {
    return InvalidArgument("sampling window of " + std::to_string(settings->sample_ms) +
                           " ms (check.sample_ms / --sample-ms) does not fit in the deadline of " +
                           FormatDouble(settings->deadline_s, 2) +
                           " s (check.deadline_s / --deadline): keep it at most half the deadline");
  }
  return settings;
}

TimePoint InputDeadline(const CliOptions& o) {
  Settings flags_only;
  for (const auto& apply : o.overrides) apply(flags_only);
  return SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                                  std::chrono::duration<double>(flags_only.deadline_s));
}

int Main(int argc, char** argv) {
  int code = Dispatch(argc, argv);
  // No command writes through iostreams (<iostream> is included nowhere: its static
  // std::ios_base::Init built the C++ locale and eight standard streams in every process,
  // about a tenth of a short command's CPU); stdio is flushed here.
  std::fflush(stdout);
  std::fflush(stderr);
  // Abandoned workers may still be blocked in the kernel or in a driver: leave without running
  // static destructors they might still use.
  std::_Exit(code);
}

}  // namespace gpudoctor
