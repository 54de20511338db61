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
// Watch and fleet metadata comes from each entry's traits, with the layer as the default.
TEST(CatalogueTraitsTest, WatchDefaultsComeFromTheEntry) {
  auto defaults = [](std::string_view id) {
    const CatalogueEntry* e = FindCatalogueEntry(id);
    EXPECT_NE(e, nullptr) << id;
    return e ? WatchDefaultsFor(*e) : WatchDefaults{};
  };
  // A resources-layer entry without traits: sustained by its layer.
  EXPECT_EQ(defaults("host.disk.full").for_s, 60);
  EXPECT_EQ(defaults("host.disk.full").resolve_after_s, 60);
  // A hardware entry marked sustained (a thermal blip must not page).
  EXPECT_EQ(defaults("gpu.thermal").for_s, 60);
  // A hardware error: at once, resolves after 300 s clear.
  EXPECT_EQ(defaults("gpu.ecc.dbe").for_s, 0);
  EXPECT_EQ(defaults("gpu.ecc.dbe").resolve_after_s, 300);
  EXPECT_FALSE(defaults("gpu.ecc.dbe").latched);
  WatchDefaults xid = defaults("gpu.xid");
  EXPECT_TRUE(xid.latched);
  EXPECT_TRUE(xid.cleared_by_driver_reload);
  EXPECT_TRUE(xid.reboot_fixable);
  WatchDefaults aer = defaults("pcie.aer");
  EXPECT_TRUE(aer.latched);
  EXPECT_FALSE(aer.cleared_by_driver_reload);
  EXPECT_TRUE(defaults("driver.mismatch").reboot_fixable);
  EXPECT_FALSE(defaults("host.disk.full").reboot_fixable);
}

TEST(CatalogueTraitsTest, EveryEntryHasAFleetClassAndLatchedOnesComeFromTheKernelLog) {
  for (const CatalogueEntry* e : Catalogue()) {
    EXPECT_NE(FleetClassOf(*e), FleetClass::kFromLayer) << e->id;
    WatchDefaults d = WatchDefaultsFor(*e);
    // Only a latched entry may be cleared by a driver reload.
    if (d.cleared_by_driver_reload) {
      EXPECT_TRUE(d.latched) << e->id;
    }
  }
  EXPECT_EQ(FleetClassOf(*FindCatalogueEntry("gpu.memory.full")), FleetClass::kSoftware);
  EXPECT_EQ(FleetClassOf(*FindCatalogueEntry("gpu.remap.failed")), FleetClass::kGpuMemory);
  EXPECT_EQ(FleetClassOf(*FindCatalogueEntry("net.link")), FleetClass::kNetwork);
  EXPECT_STREQ(FleetClassName(FleetClass::kNvlinkPcie), "nvlink_pcie");
}

// Labelled steps are well formed ("`label`: Text"), and a rule keeps the unlabelled ones plus
// those of its labels, without the label.
TEST(CatalogueTraitsTest, LabelledStepsAreSelectedByLabel) {
  for (const CatalogueEntry* e : Catalogue()) {
    for (std::string_view step : e->next_steps) {
      if (!step.starts_with("`")) continue;
      size_t end = step.find('`', 1);
      if (end == std::string_view::npos || step.substr(end, 3) != "`: ") continue;  // a command
      EXPECT_GT(end, 1u) << e->id << ": empty label";
      EXPECT_GT(step.size(), end + 3) << e->id << ": label without text";
    }
  }
  Finding f = MakeFinding("net.clients.degraded", Severity::kWarn, "x");
  KeepStepsFor(f, "some");
  ASSERT_EQ(f.next_steps.size(), 2u);
  EXPECT_TRUE(f.next_steps[0].starts_with("Only some networks")) << f.next_steps[0];
  EXPECT_TRUE(f.next_steps[1].starts_with("See the connections")) << f.next_steps[1];
  Finding xid = MakeFinding("gpu.xid", Severity::kWarn, "x");
  KeepStepsFor(xid, {"several processes", "memory Xid"});
  ASSERT_EQ(xid.next_steps.size(), 4u);
  EXPECT_TRUE(xid.next_steps[2].starts_with("Several processes")) << xid.next_steps[2];
  EXPECT_TRUE(xid.next_steps[3].starts_with("Memory Xids")) << xid.next_steps[3];
  KeepStepsFor(xid, "");
  EXPECT_EQ(xid.next_steps.size(), 4u) << "steps already stripped of their labels stay";
}

}  // namespace gpudoctor
