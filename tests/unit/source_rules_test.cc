// Conventions enforced on the source tree itself.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

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

// One definition rule: two headers must not define the same type name in namespace gpudoctor
// (two `gpudoctor::ScanOptions` once compiled silently into one binary). Google style does not
// indent namespace bodies, so a type defined at column 0 of a header is a namespace-scope type;
// nested types (indented) may share names.
TEST(SourceRulesTest, NoDuplicateTypeNamesAcrossHeaders) {
  namespace fs = std::filesystem;
  std::regex definition(R"(^(?:struct|class|union|enum\s+class|enum\s+struct|enum)\s+)"
                        R"((?:\[\[[^\]]*\]\]\s*)?([A-Za-z_]\w*)\s*(?:final\s*)?(?:[:{]|$))");
  std::map<std::string, std::string> first_seen;
  int types = 0;
  for (const auto& entry :
       fs::recursive_directory_iterator(std::string(GPUDOCTOR_SOURCE_DIR) + "/src")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".h") continue;
    std::string path = entry.path().string();
    std::istringstream in(gpudoctor::testing::ReadFileOrDie(path));
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, definition)) continue;
      ++types;
      auto [it, inserted] = first_seen.emplace(m[1].str(), path);
      EXPECT_TRUE(inserted) << "type " << m[1] << " is defined in both " << it->second << " and "
                            << path << ": give one of them a module-specific name";
    }
  }
  EXPECT_GT(types, 20);
}

}  // namespace
