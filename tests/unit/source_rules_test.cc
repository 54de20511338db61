// Conventions enforced on the source tree itself.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "test_util.h"

namespace {

// DESIGN.md convention 1: only the RootFs module spells the procfs/sysfs mount points.
TEST(SourceRulesTest, NoProcOrSysLiteralOutsideRootFs) {
  namespace fs = std::filesystem;
  std::regex literal("\"/(proc|sys)(/|\")");
  int files = 0;
  for (const auto& entry :
       fs::recursive_directory_iterator(std::string(GPUDOCTOR_SOURCE_DIR) + "/src")) {
    if (!entry.is_regular_file()) continue;
    std::string path = entry.path().string();
    if (path.size() < 3 ||
        (path.substr(path.size() - 3) != ".cc" && path.substr(path.size() - 2) != ".h")) {
      continue;
    }
    ++files;
    if (path.find("core/root_fs.") != std::string::npos) continue;
    std::string text = gpudoctor::testing::ReadFileOrDie(path);
    EXPECT_FALSE(std::regex_search(text, literal)) << path << " contains a /proc or /sys literal";
  }
  EXPECT_GT(files, 10);
}

}  // namespace
