// The layering of src/: which module folders each folder may include. Keeps the data path
// (sources -> probes -> facts -> rules -> report/watch/fleet -> cli) free of cycles.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "test_util.h"

namespace {

// Folders that a folder must not include from. Anything not listed is allowed.
const std::map<std::string, std::set<std::string>>& Forbidden() {
  static const std::map<std::string, std::set<std::string>> rules = {
      // core is the bottom: it includes nothing of ours but itself.
      {"core",
       {"config", "facts", "findings", "parsers", "kmsg", "net", "nvml", "probes", "rules",
        "report", "watch", "fleet", "plan", "tui", "cli", "metrics", "check"}},
      {"facts", {"config", "nvml", "probes", "rules", "report", "watch", "fleet", "cli", "kmsg"}},
      {"findings", {"config", "nvml", "probes", "rules", "report", "watch", "fleet", "cli"}},
      {"parsers", {"config", "nvml", "probes", "rules", "report", "watch", "fleet", "cli"}},
      // rules judge facts: no sources (NVML, probes) and nothing above them.
      {"rules", {"nvml", "probes", "report", "watch", "fleet", "cli", "config", "tui", "check"}},
      // probes gather: no judging, no output.
      {"probes", {"rules", "report", "watch", "fleet", "cli", "tui", "check"}},
      // check runs probes and rules once: nothing above it.
      {"check", {"watch", "fleet", "cli", "tui", "sched", "bundle"}},
      {"nvml", {"rules", "probes", "report", "watch", "fleet", "cli"}},
      {"metrics", {"rules", "probes", "nvml", "watch", "fleet", "cli"}},
      // fleet reads reports and series of many nodes: no local probing, no CLI.
      {"fleet", {"probes", "nvml", "rules", "watch", "cli", "tui", "sched"}},
      // bundle packs a check, the history and the config for support: no CLI, no terminal.
      {"bundle", {"cli", "tui", "fleet", "sched"}},
      // sched acts on findings for Slurm / NPD: no probing, no CLI.
      {"sched", {"probes", "nvml", "rules", "watch", "fleet", "cli", "tui"}},
  };
  return rules;
}

// Single headers a forbidden folder may still include: the catalogue is the one home of finding
// metadata (actions, classes), which fleet needs to read findings of older reports by their id.
bool AllowedException(const std::string& folder, const std::string& include) {
  return folder == "fleet" && include == "#include \"rules/catalogue.h\"";
}

TEST(LayeringTest, NoFolderIncludesAForbiddenLayer) {
  namespace fs = std::filesystem;
  const std::string src = std::string(GPUDOCTOR_SOURCE_DIR) + "/src";
  std::regex include_re("#include \"([a-z_]+)/[^\"]+\"");
  int checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    if (!entry.is_regular_file()) continue;
    std::string rel = fs::relative(entry.path(), src).string();
    std::string folder = rel.substr(0, rel.find('/'));
    auto rule = Forbidden().find(folder);
    if (rule == Forbidden().end()) continue;
    std::string text = gpudoctor::testing::ReadFileOrDie(entry.path().string());
    for (std::sregex_iterator it(text.begin(), text.end(), include_re), end; it != end; ++it) {
      ++checked;
      std::string target = (*it)[1];
      if (AllowedException(folder, it->str())) continue;
      EXPECT_FALSE(rule->second.count(target))
          << rel << " includes " << it->str() << ": " << folder << " must not depend on " << target;
    }
  }
  EXPECT_GT(checked, 50);
}

}  // namespace
