// The guide's language (issue 25 section 5): every finding id's title and next steps, every
// symptom, the runbook and the report labels have a Chinese translation in po/zh_CN.po (embedded
// .mo); the language follows LANGUAGE/LC_ALL/LC_MESSAGES/LANG; Chinese symptom words find the
// right entries; the text report of `check` renders in both languages.
#include "core/i18n.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>

#include "check/messages.h"
#include "check/run_check.h"
#include "host_fixture.h"
#include "report/report.h"
#include "rules/catalogue.h"
#include "rules/localize.h"
#include "rules/symptoms.h"

namespace gpudoctor {
namespace {

// Restores English after each test (the language is process-wide).
class I18nTest : public ::testing::Test {
 protected:
  void TearDown() override { SetLanguage(Language::kEnglish); }
};

TEST_F(I18nTest, EveryFindingIdHasATranslatedTitleAndNextSteps) {
  int missing = 0;
  for (const CatalogueEntry* e : Catalogue()) {
    if (!ChineseOf(e->title)) {
      ++missing;
      ADD_FAILURE() << e->id << ": no translation of its title '" << e->title << "'";
    }
    for (std::string_view s : e->next_steps) {
      if (!ChineseOf(s)) {
        ++missing;
        ADD_FAILURE() << e->id << ": no translation of next step '" << s.substr(0, 60) << "...'";
      }
    }
  }
  EXPECT_EQ(missing, 0);
}

TEST_F(I18nTest, EveryOtherTranslatableTextHasATranslation) {
  for (const TranslatableText& m : TranslatableMessages()) {
    auto zh = ChineseOf(m.text);
    EXPECT_TRUE(zh) << m.where << ": '" << m.text.substr(0, 60) << "'";
    // Commands and finding ids in backticks are kept verbatim in the translation.
    if (zh && m.text.find("`gpudoctor") != std::string_view::npos) {
      EXPECT_NE(zh->find("`gpudoctor"), std::string_view::npos) << m.where;
    }
  }
}

TEST_F(I18nTest, LanguageFromTheEnvironmentTheGettextWay) {
  EXPECT_EQ(ParseLanguage("zh_CN.UTF-8"), Language::kChinese);
  EXPECT_EQ(ParseLanguage("zh"), Language::kChinese);
  EXPECT_EQ(ParseLanguage("C.UTF-8"), Language::kEnglish);
  EXPECT_EQ(ParseLanguage("en_US.UTF-8"), Language::kEnglish);
  EXPECT_FALSE(ParseLanguage("de_DE.UTF-8"));
  for (const char* v : {"LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"}) unsetenv(v);
  EXPECT_EQ(LanguageFromEnvironment(), Language::kEnglish);
  setenv("LANG", "zh_CN.UTF-8", 1);
  EXPECT_EQ(LanguageFromEnvironment(), Language::kChinese);
  setenv("LC_MESSAGES", "en_US.UTF-8", 1);  // LC_MESSAGES before LANG
  EXPECT_EQ(LanguageFromEnvironment(), Language::kEnglish);
  setenv("LANGUAGE", "zh_CN:en", 1);  // LANGUAGE first
  EXPECT_EQ(LanguageFromEnvironment(), Language::kChinese);
  for (const char* v : {"LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"}) unsetenv(v);
}

TEST_F(I18nTest, TrFollowsTheLanguageAndFallsBackToEnglish) {
  const CatalogueEntry* e = FindCatalogueEntry("gpu.lost");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(Tr(e->title), e->title);
  SetLanguage(Language::kChinese);
  EXPECT_NE(Tr(e->title), e->title);
  EXPECT_EQ(Tr("a text nobody translated"), "a text nobody translated");
}

// A labelled step ("`input`: ...") kept by a rule loses its label (KeepStepsFor); its translation
// is found without the label too, and is shown without it.
TEST_F(I18nTest, LabelledStepKeptWithoutItsLabelIsTranslated) {
  const CatalogueEntry* e = FindCatalogueEntry("gpu.util.underused");
  ASSERT_NE(e, nullptr);
  std::string labelled(e->next_steps[0]);
  ASSERT_EQ(labelled.rfind("`input`: ", 0), 0u) << labelled;
  std::string kept = labelled.substr(std::string("`input`: ").size());
  SetLanguage(Language::kChinese);
  ASSERT_TRUE(ChineseOf(labelled));
  std::string_view zh = Tr(kept);
  EXPECT_NE(zh, kept);
  EXPECT_EQ(ChineseOf(labelled)->find(zh), ChineseOf(labelled)->size() - zh.size());
  EXPECT_EQ(zh.find("`input`"), std::string_view::npos) << zh;
  EXPECT_EQ(zh.rfind("\u52a0", 0), 0u) << zh;  // starts at the text: "加强输入流水线..."
}

TEST_F(I18nTest, ParseMoRejectsGarbage) {
  EXPECT_FALSE(ParseMo(""));
  EXPECT_FALSE(ParseMo(std::string(64, 'x')));
  std::string mo(28, '\0');
  uint32_t magic = 0x950412de, n = 1000000, off = 28;
  std::memcpy(mo.data(), &magic, 4);
  std::memcpy(mo.data() + 8, &n, 4);
  std::memcpy(mo.data() + 12, &off, 4);
  std::memcpy(mo.data() + 16, &off, 4);
  EXPECT_FALSE(ParseMo(mo));  // more entries than the file can hold
}

TEST_F(I18nTest, ChineseSymptomWordsFindTheirEntries) {
  auto key = [](std::string_view q) {
    const Symptom* s = FindSymptom(q);
    return s ? std::string(s->key) : std::string("none");
  };
  EXPECT_EQ(key("掉卡"), "gpu-lost");
  EXPECT_EQ(key("服务器掉卡了"), "gpu-lost");
  EXPECT_EQ(key("卡顿"), "game-lag");
  EXPECT_EQ(key("训练变慢"), "training-slow");
  EXPECT_EQ(key("训练卡顿"), "training-slow");
  EXPECT_EQ(key("nvidia-smi 卡住"), "nvidia-smi-hangs");
  EXPECT_EQ(key("显存满"), "vram-full");
  EXPECT_EQ(key("爆显存"), "vram-full");
  EXPECT_EQ(key("网页打不开"), "web-page-wont-open");
  EXPECT_EQ(key("游戏卡"), "game-lag");
  EXPECT_EQ(key("带宽跑满"), "bandwidth-full");
  EXPECT_EQ(key("过热"), "server-hot");
  EXPECT_EQ(key("中毒"), "server-compromised");
  EXPECT_EQ(key("服务器中毒往外发包"), "server-compromised");
  EXPECT_EQ(key("挖矿"), "server-compromised");
  EXPECT_EQ(key("咖啡凉了"), "none");
  // Entries name the newer findings that decide them.
  auto names = [](std::string_view k, std::string_view id) {
    for (const auto& s : Symptoms()) {
      if (s.key != k) continue;
      for (std::string_view f : s.finding_ids) {
        if (f == id) return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(names("nvidia-smi-hangs", "driver.nvml_slow"));
  EXPECT_TRUE(names("web-page-wont-open", "net.http.failing"));
  EXPECT_TRUE(names("game-lag", "net.target.jitter"));
  EXPECT_TRUE(names("server-hot", "host.inlet.temperature"));
  EXPECT_TRUE(names("bandwidth-full", "net.clients.degraded"));
}

TEST_F(I18nTest, CheckTextReportRendersInBothLanguages) {
  testing::HostFixture fx("apt-security-pending");
  auto s = std::make_shared<Settings>();
  s->fs = fx.fs();
  s->deadline_s = 5;
  s->only_probes = {"boot"};
  Report r = RunCheck(s);
  const Finding* updates = nullptr;
  for (const Finding& f : r.findings) {
    if (f.id == "host.updates.security") updates = &f;
  }
  ASSERT_NE(updates, nullptr) << "the fixture has 2 pending security updates";
  const CatalogueEntry* e = FindCatalogueEntry("host.updates.security");

  std::string en = RenderText(r, false);
  EXPECT_NE(en.find("SOFTWARE\n"), std::string::npos);
  EXPECT_NE(en.find("host.updates.security  2 security update(s) pending"), std::string::npos)
      << en;
  EXPECT_NE(en.find("-> " + std::string(e->next_steps[0])), std::string::npos);
  EXPECT_NE(en.find("verdict: "), std::string::npos);
  EXPECT_EQ(en.find("【"), std::string::npos);

  SetLanguage(Language::kChinese);
  Report shown = r;
  shown.findings = LocalizeFindings(shown.findings);
  std::string zh = RenderText(shown, false);
  EXPECT_NE(zh.find("软件\n"), std::string::npos) << zh;
  EXPECT_NE(zh.find("网络\n"), std::string::npos);
  EXPECT_NE(zh.find("host.updates.security  【" + std::string(*ChineseOf(e->title)) +
                    "】2 security update(s) pending"),
            std::string::npos)
      << zh;
  EXPECT_NE(zh.find("-> " + std::string(*ChineseOf(e->next_steps[0]))), std::string::npos);
  EXPECT_NE(zh.find("结论："), std::string::npos);
  EXPECT_EQ(zh.find("verdict:"), std::string::npos);
  EXPECT_EQ(zh.find("SOFTWARE"), std::string::npos);
  // The JSON and the findings themselves stay English.
  EXPECT_EQ(r.findings.front().summary.find("【"), std::string::npos);
}

TEST_F(I18nTest, RunbookInChinese) {
  std::string en = EmergencyRunbook();
  SetLanguage(Language::kChinese);
  std::string zh = EmergencyRunbook();
  EXPECT_NE(en, zh);
  EXPECT_NE(zh.find(std::string(*ChineseOf(RunbookParagraphs()[2]))), std::string::npos);
  for (const CatalogueEntry* e : Catalogue()) {
    if (e->max_severity == Severity::kCrit) {
      EXPECT_NE(zh.find("- " + std::string(e->id) + " ("), std::string::npos) << e->id;
    }
  }
}

}  // namespace
}  // namespace gpudoctor
