// The symptom table (issue 8 item 17): every finding it names exists; queries find symptoms.
#include "rules/symptoms.h"

#include <gtest/gtest.h>

#include <set>

#include "rules/catalogue.h"

namespace gpudoctor {
namespace {

TEST(SymptomsTest, EveryFindingIdExistsInTheCatalogue) {
  std::set<std::string_view> keys;
  for (const auto& s : Symptoms()) {
    EXPECT_TRUE(keys.insert(s.key).second) << "duplicate symptom " << s.key;
    EXPECT_FALSE(s.finding_ids.empty()) << s.key;
    EXPECT_FALSE(s.commands.empty()) << s.key;
    for (std::string_view id : s.finding_ids) {
      EXPECT_NE(FindCatalogueEntry(id), nullptr) << s.key << " names unknown finding " << id;
    }
  }
  EXPECT_GE(Symptoms().size(), 8u);
}

TEST(SymptomsTest, QueriesFindTheGuideSymptoms) {
  auto key = [](std::string_view q) {
    const Symptom* s = FindSymptom(q);
    return s ? std::string(s->key) : std::string("none");
  };
  EXPECT_EQ(key("nvidia-smi hangs"), "nvidia-smi-hangs");
  EXPECT_EQ(key("NVIDIA-SMI is slow"), "nvidia-smi-hangs");
  EXPECT_EQ(key("training slow"), "training-slow");
  EXPECT_EQ(key("lost card"), "gpu-lost");
  EXPECT_EQ(key("VRAM full"), "vram-full");
  EXPECT_EQ(key("web page won't open"), "web-page-wont-open");
  EXPECT_EQ(key("game lag"), "game-lag");
  EXPECT_EQ(key("bandwidth full"), "bandwidth-full");
  EXPECT_EQ(key("server hot"), "server-hot");
  EXPECT_EQ(key("server-hot"), "server-hot");
  EXPECT_EQ(key("the coffee is cold"), "none");
}

// Issue 8 item 18: hardware findings carry the physical checklist and the swap test; the
// malware-like finding the keep-evidence, scan and reinstall path; the runbook covers every
// critical finding.
TEST(CatalogueAdviceTest, HardwareStepsAndRunbook) {
  auto has = [](std::string_view id, std::string_view text) {
    const CatalogueEntry* e = FindCatalogueEntry(id);
    if (e == nullptr) return false;
    for (std::string_view s : e->next_steps) {
      if (s.find(text) != std::string_view::npos) return true;
    }
    return false;
  };
  for (std::string_view id : {"gpu.lost", "gpu.missing", "pcie.aer"}) {
    EXPECT_TRUE(has(id, "Physical checklist")) << id;
    EXPECT_TRUE(has(id, "oxidised")) << id;
    EXPECT_TRUE(has(id, "Swap test")) << id;
  }
  EXPECT_TRUE(has("gpu.thermal", "heatsink seated"));
  EXPECT_TRUE(has("gpu.fan", "fan spinning"));
  EXPECT_TRUE(has("proc.suspicious", "reinstall"));
  std::string runbook = EmergencyRunbook();
  for (std::string_view phase : {"Drain", "Evidence", "Reset / reboot", "Swap", "RMA", "<NAME"}) {
    EXPECT_NE(runbook.find(phase), std::string::npos) << phase;
  }
  for (const CatalogueEntry* e : Catalogue()) {
    if (e->max_severity == Severity::kCrit) {
      EXPECT_NE(runbook.find("- " + std::string(e->id) + " "), std::string::npos) << e->id;
    }
  }
}

}  // namespace
}  // namespace gpudoctor
