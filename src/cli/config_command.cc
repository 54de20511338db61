// `gpudoctor config --default`: the commented default file; `config` alone: validate the config
// in effect and print where it came from.
#include <cstdio>

#include "cli/commands.h"
#include "config/config.h"

namespace gpudoctor {

int ConfigCommand(const CliOptions& o) {
  if (o.Has("--default")) {
    std::fputs(DefaultConfigText().c_str(), stdout);
    return 0;
  }
  auto settings = BuildSettings(o);
  if (!settings.ok()) return CouldNotRun(settings.status().message());
  std::string path = o.config_path.value_or(kDefaultConfigPath);
  bool used = o.config_path.has_value() || RootFs::Exists(path);
  std::printf("config: %s\n", used ? (path + " is valid").c_str()
                                   : ("no config file (" + path + " absent): defaults").c_str());
  return 0;
}

}  // namespace gpudoctor
