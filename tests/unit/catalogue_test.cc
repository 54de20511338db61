#include "rules/catalogue.h"

#include <gtest/gtest.h>

#include <set>

#include "rules/make_finding.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

TEST(CatalogueTest, IdsAreUniqueAndEntriesComplete) {
  std::set<std::string_view> ids;
  for (const auto* e : Catalogue()) {
    EXPECT_TRUE(ids.insert(e->id).second) << "duplicate id " << e->id;
    EXPECT_FALSE(e->title.empty()) << e->id;
    EXPECT_GT(e->description.size(), 20u) << e->id;
    EXPECT_FALSE(e->next_steps.empty()) << e->id << " has no next steps";
    std::set<std::string_view> keys;
    for (const auto& t : e->thresholds) {
      EXPECT_TRUE(keys.insert(t.key).second) << e->id << " repeats threshold " << t.key;
      EXPECT_NE(t.key, "enabled") << e->id;
      EXPECT_FALSE(t.help.empty());
    }
  }
  EXPECT_GT(ids.size(), 10u);
}

TEST(CatalogueTest, IdsAreLowercaseDotted) {
  for (const auto* e : Catalogue()) {
    for (char c : e->id) {
      EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_')
          << e->id;
    }
  }
}

// docs/findings.md is generated from the catalogue; this keeps the committed file in sync.
TEST(CatalogueTest, DocsFindingsMatchesCatalogue) {
  std::string committed =
      testing::ReadFileOrDie(std::string(GPUDOCTOR_SOURCE_DIR) + "/docs/findings.md");
  EXPECT_EQ(committed, CatalogueMarkdown())
      << "docs/findings.md is stale: run `make docs` (build/gpudoctor explain --markdown)";
}

TEST(CatalogueTest, MakeFindingTakesLayerAndStepsFromCatalogue) {
  Finding f = MakeFinding("host.disk.full", Severity::kWarn, "x");
  EXPECT_EQ(f.layer, Layer::kResources);
  EXPECT_FALSE(f.next_steps.empty());
}

}  // namespace
}  // namespace gpudoctor
