// Command-line options shared by all subcommands. Flags are parsed first; settings they change
// are recorded as overrides and applied after the config file, so flags always win.
// Not thread-safe; used on the main thread only.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/settings.h"
#include "core/status.h"

namespace gpudoctor {

enum class ColorMode { kAuto, kAlways, kNever };

struct CliOptions {
  std::string command;                  // first positional argument: check, explain, config, ...
  std::vector<std::string> positional;  // the rest
  std::optional<std::string> config_path;
  bool json = false;
  bool help = false;
  bool version = false;
  ColorMode color = ColorMode::kAuto;
  // Command-specific boolean switches (e.g. --default, --markdown, --list) by name.
  std::vector<std::string> switches;
  // Command-specific flags with a value (--db, --metric, --gpu, ...) by name, validated by the
  // flag table; the command reads them with Value().
  std::map<std::string, std::string, std::less<>> values;
  // Every value of repeatable flags (fleet --reports, --db), in command-line order.
  std::vector<std::pair<std::string, std::string>> multi_values;
  std::vector<std::function<void(Settings&)>> overrides;

  void Override(std::function<void(Settings&)> f) { overrides.push_back(std::move(f)); }
  bool Has(std::string_view sw) const;
  std::optional<std::string> Value(std::string_view flag) const;
  // Every value given for a repeatable flag, in order.
  std::vector<std::string> All(std::string_view flag) const;
};

// One flag. `value_name` empty = a switch without value. `apply` validates the value and
// records it; an error message names what is wrong (the caller adds the flag name).
struct FlagSpec {
  std::string_view name;  // "--deadline"
  std::string_view value_name;
  std::string_view help;
  Status (*apply)(std::string_view value, CliOptions& options);
};

// The flag table (flags.cc): one entry per flag, shared by all subcommands.
const std::vector<FlagSpec>& FlagTable();
// Appends the fleet and scheduler (--slurm, --npd) flags (fleet_flags.cc).
std::vector<FlagSpec> WithFleetFlags(std::vector<FlagSpec> flags);
// Appends the job flags: --job, --at, --seconds, --step (job_flags.cc).
std::vector<FlagSpec> WithJobFlags(std::vector<FlagSpec> flags);

// Parses argv[1..]. Errors: invalid_argument naming the flag and the problem.
Result<CliOptions> ParseCommandLine(int argc, const char* const* argv);

// Every command of the dispatcher (and plan, which parses its own flags).
std::vector<std::string_view> CommandNames();

// All commands and all flags; one command's flags (FlagAppliesTo).
std::string UsageText();
std::string CommandUsageText(std::string_view command);

}  // namespace gpudoctor
