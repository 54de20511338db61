// The layering of src/: for every module folder, the folders it may include (an allow-list), so
// a new arrow between folders is a decision made in this list, not an accident. The data path
// runs one way (sources -> probes -> facts -> rules -> report -> watch engine -> its sinks ->
// cli); no arrow runs back up, and nothing includes cli.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "test_util.h"

namespace {

namespace fs = std::filesystem;

// Folder -> the folders (other than itself) it may include.
const std::map<std::string, std::set<std::string>>& Allowed() {
  static const std::map<std::string, std::set<std::string>> allowed = {
      // The bottom: status, RootFs, deadlines, strings, the time grammar, subprocesses.
      {"core", {}},
      // Finding, Severity, Action: plain data every layer speaks.
      {"findings", {"core"}},
      // The Snapshot and its parts (typed facts, PCI addresses, GPU identity).
      {"facts", {"core", "findings"}},
      // Pure parsers of /proc, /sys and tool output into facts.
      {"parsers", {"core", "facts"}},
      // One descriptor table per facts struct (JSON keys, metric names).
      {"metrics", {"core", "facts"}},
      // Jobs' own speed: log tail, step-line parsers, the push inbox.
      {"job", {"core", "facts"}},
      // Inference servers' own metrics: the Prometheus text parser and the engines' names.
      {"inference", {"core", "facts"}},
      // Sources: network measurements, NVML, the kernel log.
      {"net", {"core", "facts", "parsers"}},
      {"nvml", {"core", "facts", "parsers"}},
      {"kmsg", {"core", "facts", "findings", "parsers"}},
      // The KV planner and batching simulator: arithmetic on facts; advisors above it quote it.
      {"plan", {"core", "facts"}},
      // Probes gather (sources into facts); plan only for derived live-KV facts.
      {"probes",
       {"core", "facts", "findings", "parsers", "net", "nvml", "kmsg", "plan", "job", "inference"}},
      // Rules judge facts: pure, no sources, nothing above them.
      {"rules", {"core", "facts", "findings", "parsers"}},
      {"report", {"core", "facts", "findings", "metrics", "parsers"}},
      // The config file knows the probe registry and the catalogue (one key per probe/finding).
      {"config", {"core", "facts", "findings", "inference", "job", "net", "probes", "rules"}},
      // One pass of probes + rules + report.
      {"check", {"core", "config", "facts", "findings", "probes", "report", "rules"}},
      // The watch engine: scheduler, rules, lifecycle; it hands ticks to sinks it does not know.
      {"watch", {"core", "facts", "findings", "metrics", "probes", "report", "rules"}},
      // The engine's sinks and servers.
      {"store", {"core", "facts", "findings", "report", "rules", "watch"}},
      {"serve",
       {"bandwidth", "core", "facts", "findings", "job", "metrics", "report", "store", "watch",
        "why"}},
      // `gpudoctor why`: reads the history, ranks with the catalogue's next steps.
      {"why", {"core", "facts", "findings", "metrics", "rules", "store", "watch"}},
      // `gpudoctor report bandwidth`: reads the history (through its reader), pure figures.
      {"bandwidth", {"core", "store"}},
      {"notify", {"core", "findings", "report", "watch"}},
      // Acting on findings (Slurm, node-problem-detector).
      {"sched", {"core", "findings"}},
      // Many nodes: reports, Prometheus series, history files; the catalogue for old reports.
      {"fleet", {"core", "facts", "findings", "rules", "store"}},
      // A support bundle: a check, the history (through its reader), the config.
      {"bundle",
       {"check", "core", "facts", "findings", "parsers", "probes", "report", "rules", "store"}},
      {"tui", {"check", "core", "facts", "findings", "report"}},
  };
  return allowed;
}

TEST(LayeringTest, EveryFolderIncludesOnlyWhatItsEntryAllows) {
  const std::string src = std::string(GPUDOCTOR_SOURCE_DIR) + "/src";
  std::regex include_re("#include \"([a-z_]+)/[^\"]+\"");
  int checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    if (!entry.is_regular_file()) continue;
    std::string rel = fs::relative(entry.path(), src).string();
    std::string folder = rel.substr(0, rel.find('/'));
    if (folder == "cli") continue;  // the top: it wires everything
    auto rule = Allowed().find(folder);
    ASSERT_NE(rule, Allowed().end())
        << "src/" << folder << "/ has no entry in Allowed(): say what it may include";
    std::string text = gpudoctor::testing::ReadFileOrDie(entry.path().string());
    for (std::sregex_iterator it(text.begin(), text.end(), include_re), end; it != end; ++it) {
      ++checked;
      std::string target = (*it)[1];
      if (target == folder) continue;
      EXPECT_TRUE(rule->second.count(target))
          << rel << " includes " << it->str() << ": " << folder << " may include only "
          << ::testing::PrintToString(rule->second);
    }
  }
  EXPECT_GT(checked, 100);
}

// Every entry names a folder that exists, and every folder it allows exists: a stale list fails.
TEST(LayeringTest, TheListNamesOnlyRealFolders) {
  const std::string src = std::string(GPUDOCTOR_SOURCE_DIR) + "/src";
  for (const auto& [folder, allowed] : Allowed()) {
    EXPECT_TRUE(fs::is_directory(src + "/" + folder)) << folder;
    for (const auto& a : allowed) EXPECT_TRUE(fs::is_directory(src + "/" + a)) << a;
  }
}

// The allow-list has no cycle: following allowed arrows never comes back to the start.
TEST(LayeringTest, NoFolderCycle) {
  std::map<std::string, int> state;  // 0 unseen, 1 on the path, 2 done
  std::function<bool(const std::string&)> visit = [&](const std::string& f) {
    if (state[f] == 1) return false;
    if (state[f] == 2) return true;
    state[f] = 1;
    auto it = Allowed().find(f);
    if (it != Allowed().end()) {
      for (const auto& next : it->second) {
        if (!visit(next)) {
          ADD_FAILURE() << "cycle through " << f << " -> " << next;
          return false;
        }
      }
    }
    state[f] = 2;
    return true;
  };
  for (const auto& [folder, allowed] : Allowed()) EXPECT_TRUE(visit(folder)) << folder;
}

// Nothing outside cli includes cli; cli is the only folder that may reach every other.
TEST(LayeringTest, NothingIncludesCli) {
  for (const auto& [folder, allowed] : Allowed()) EXPECT_FALSE(allowed.count("cli")) << folder;
}

// toml++ is included through core/toml.h only: it replaces a toml++ function with undefined
// behaviour, and every unit must see that one definition (one rule for the whole program).
TEST(LayeringTest, TomlPlusPlusIsIncludedThroughTheWrapperOnly) {
  const std::regex direct(R"(#\s*include\s*[<"]toml\+\+/)");
  size_t units_with_toml = 0;
  for (const std::string top : {"src", "tests", "bench"}) {
    const fs::path root = fs::path(GPUDOCTOR_SOURCE_DIR) / top;
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
      const std::string text = gpudoctor::testing::ReadFileOrDie(entry.path().string());
      if (text.find("\"core/toml.h\"") != std::string::npos) ++units_with_toml;
      if (entry.path().lexically_relative(GPUDOCTOR_SOURCE_DIR) == fs::path("src/core/toml.h")) {
        continue;
      }
      EXPECT_FALSE(std::regex_search(text, direct)) << entry.path() << " includes toml++ itself";
    }
  }
  EXPECT_GE(units_with_toml, 5u);  // the walk saw the tree's users of the wrapper
}

}  // namespace
