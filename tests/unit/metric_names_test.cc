// One home for metric names: every gpudoctor_* or DCGM_FI_* name that the shipped Prometheus rules,
// the Grafana dashboard, the Alertmanager config, the web dashboard or the README mention must be
// a family the exporter writes (the metric table, src/metrics/metric_table.cc, and its
// dcgm-exporter twins). A renamed metric fails here instead of silently emptying a panel or
// disabling an alert.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <regex>
#include <set>
#include <string>

#include "metrics/metric_table.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

namespace fs = std::filesystem;

std::set<std::string> ExportedFamilies() {
  std::set<std::string> names = {"DCGM_FI_DEV_XID_ERRORS"};  // the exporter's own twin
  for (const MetricInfo* m : AllMetrics()) {
    if (!m->name.empty()) names.insert(std::string(m->name));
    if (!m->dcgm_name.empty()) names.insert(std::string(m->dcgm_name));
    if (!m->dcgm_alias.empty()) names.insert(std::string(m->dcgm_alias));
  }
  return names;
}

// Files that name metrics for an operator or a machine to use.
std::vector<std::string> FilesNamingMetrics() {
  const std::string root = GPUDOCTOR_SOURCE_DIR;
  std::vector<std::string> files = {root + "/README.md"};
  for (const char* dir : {"/deploy", "/web/src"}) {
    for (const auto& e : fs::recursive_directory_iterator(root + dir)) {
      if (e.is_regular_file()) files.push_back(e.path().string());
    }
  }
  return files;
}

TEST(MetricNamesTest, RulesDashboardsAndDocsNameOnlyExportedMetrics) {
  const std::set<std::string> exported = ExportedFamilies();
  // Names that look like metrics but are not (build targets, bench labels).
  const std::set<std::string> not_metrics = {"gpudoctor_lib", "gpudoctor_fleet_json"};
  std::regex name_re(R"(\b(gpudoctor_[a-z0-9_]+|DCGM_FI_[A-Z0-9_]+))");
  int seen = 0;
  for (const std::string& file : FilesNamingMetrics()) {
    std::string text = testing::ReadFileOrDie(file);
    for (std::sregex_iterator it(text.begin(), text.end(), name_re), end; it != end; ++it) {
      std::string name = (*it)[1];
      if (not_metrics.count(name)) continue;
      // Histogram/summary series and recording-rule names derive from a family.
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        if (name.ends_with(suffix) &&
            exported.count(name.substr(0, name.size() - strlen(suffix)))) {
          name = name.substr(0, name.size() - strlen(suffix));
        }
      }
      ++seen;
      if (name.ends_with('_')) {  // a prefix ("gpudoctor_gpu_*"): some family must have it
        bool any = false;
        for (const auto& e : exported) any = any || e.starts_with(name);
        EXPECT_TRUE(any) << file << " names the prefix " << name << ", which no family has";
        continue;
      }
      EXPECT_TRUE(exported.count(name))
          << file << " names " << name << ", which the exporter does not write";
    }
  }
  EXPECT_GT(seen, 40);  // the rules, the dashboards and the README do name metrics
}

}  // namespace
}  // namespace gpudoctor
