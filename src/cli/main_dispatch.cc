#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "cli/commands.h"
#include "core/config.h"
#include "probes/registry.h"

namespace gpudoctor {
namespace {

constexpr const char* kVersion = "0.1.0";

struct CommandEntry {
  std::string_view name;
  int (*run)(const CliOptions&);
};

constexpr CommandEntry kCommands[] = {
    {"check", CheckCommand},
    {"explain", ExplainCommand},
    {"config", ConfigCommand},
    {"probes", ProbesCommand},
};

int Dispatch(int argc, char** argv) {
  auto parsed = ParseCommandLine(argc, argv);
  if (!parsed.ok()) return CouldNotRun(parsed.status().message());
  const CliOptions& o = *parsed;
  if (o.version || o.command == "version") {
    std::printf("gpudoctor %s\n", kVersion);
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
  for (const auto& c : kCommands) {
    if (c.name == o.command) return c.run(o);
  }
  return CouldNotRun("unknown command '" + o.command + "' (see gpudoctor --help)");
}

}  // namespace

int CouldNotRun(const std::string& message) {
  std::fprintf(stderr, "gpudoctor: %s\n", message.c_str());
  return kExitCouldNotRun;
}

bool UseColor(const CliOptions& o) {
  if (o.color == ColorMode::kAlways) return true;
  if (o.color == ColorMode::kNever) return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') return false;
  return isatty(STDOUT_FILENO) == 1;
}

Result<std::shared_ptr<Settings>> BuildSettings(const CliOptions& o) {
  auto settings = std::make_shared<Settings>();
  std::string path = o.config_path.value_or(kDefaultConfigPath);
  bool explicit_path = o.config_path.has_value();
  if (explicit_path || RootFs::Exists(path)) {
    auto load = ApplyConfigFile(path, *settings);
    if (!load.ok()) {
      if (load.status().code() == StatusCode::kNotFound) {
        return InvalidArgument("config file " + path + " not found");
      }
      return InvalidArgument("config " + load.status().message());
    }
    for (const auto& w : load->warnings) std::fprintf(stderr, "gpudoctor: config %s\n", w.c_str());
  }
  for (const auto& apply : o.overrides) apply(*settings);
  if (Status s = ValidateProbeNames(*settings); !s.ok()) return s;
  return settings;
}

int Main(int argc, char** argv) {
  int code = Dispatch(argc, argv);
  std::cout.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  // Abandoned workers may still be blocked in the kernel or in a driver: leave without running
  // static destructors they might still use.
  std::_Exit(code);
}

}  // namespace gpudoctor
