// What `top --connect` accepts from a server before drawing it, and what it draws for outside
// text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bad_server.h"
#include "test_util.h"
#include "tui/status_check.h"
#include "tui/status_source.h"
#include "tui/top_model.h"

namespace gpudoctor {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

json Golden(const std::string& name) {
  return json::parse(
      testing::ReadFileOrDie(std::string(GPUDOCTOR_SOURCE_DIR) + "/tests/e2e/golden/" + name));
}

std::string Joined(const std::vector<TopLine>& lines) {
  std::string out;
  for (const auto& l : lines) out += l.text + "\n";
  return out;
}

TEST(TopStatusCheckTest, RealReportsPass) {
  for (const char* name : {"check_gpu_thermal.json", "check_gpu_ecc_dbe.json",
                           "check_gpu_h100_healthy.json", "check_gpu_remap_failed.json",
                           "check_gpu_gpu_missing.json", "check_gpu_persistence_off.json"}) {
    Status s = CheckStatusDocument(Golden(name));
    EXPECT_TRUE(s.ok()) << name << ": " << s.message();
  }
}

// The report this binary renders on a live host passes as well (what `watch` serves).
TEST(TopStatusCheckTest, ALiveLocalReportPasses) {
  auto settings = std::make_shared<Settings>();
  settings->sample_ms = 50;
  auto doc = LocalStatusFetcher(settings)();
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  Status s = CheckStatusDocument(*doc);
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(TopStatusCheckTest, AHugeGpuIndexIsRefusedNamingTheField) {
  json doc = Golden("check_gpu_thermal.json");
  doc["gpus"][3]["index"] = 1e308;
  Status s = CheckStatusDocument(doc);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("gpus[3].index"));
  EXPECT_THAT(s.message(), HasSubstr("not a GPU index"));
  doc["gpus"][3]["index"] = -1;
  EXPECT_FALSE(CheckStatusDocument(doc).ok());
  doc["gpus"][3]["index"] = 3;
  doc["gpus"][3]["temp_c"] = 1e300;
  EXPECT_THAT(CheckStatusDocument(doc).message(), HasSubstr("gpus[3].temp_c"));
}

TEST(TopStatusCheckTest, UnknownVerdictOrSeverityIsRefusedNotDrawnAsOk) {
  json doc = Golden("check_gpu_thermal.json");
  doc["verdict"] = 7;
  Status s = CheckStatusDocument(doc);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("verdict: 7 is not one of ok, info, warn, crit"));
  doc = Golden("check_gpu_thermal.json");
  doc["findings"][0]["severity"] = "fatal";
  EXPECT_THAT(CheckStatusDocument(doc).message(), HasSubstr("findings[0].severity"));
  doc = Golden("check_gpu_thermal.json");
  doc["findings"][0]["evidence"]["x"] = json::array({json::array({1})});
  EXPECT_THAT(CheckStatusDocument(doc).message(), HasSubstr("findings[0].evidence.x"));
}

TEST(TopStatusCheckTest, TooManyGpusOrFindingsAreRefused) {
  json doc = Golden("check_gpu_thermal.json");
  json gpu = doc["gpus"][0];
  doc["gpus"] = json::array();
  for (size_t i = 0; i < kMaxGpus + 1; ++i) doc["gpus"].push_back(gpu);
  Status s = CheckStatusDocument(doc);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("gpus: 1025 entries, more than 1024"));
  doc["gpus"] = "notalist";
  EXPECT_THAT(CheckStatusDocument(doc).message(), HasSubstr("is not a list"));
}

TEST(TopStatusCheckTest, DaemonFetcherShowsWhatWasWrong) {
  json doc = Golden("check_gpu_thermal.json");
  doc["gpus"][0]["index"] = 1e308;
  testing::BadServer server(testing::BadServer::Mode::kFixed, doc.dump());
  auto r = DaemonStatusFetcher(server.url(), "", 5)();
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("status refused: gpus[0].index"));
  testing::BadServer good(testing::BadServer::Mode::kFixed,
                          Golden("check_gpu_thermal.json").dump());
  EXPECT_TRUE(DaemonStatusFetcher(good.url(), "", 5)().ok());
}

TEST(TopStatusCheckTest, DaemonFetcherCapsAnEndlessAnswer) {
  testing::BadServer server(testing::BadServer::Mode::kEndless);
  auto r = DaemonStatusFetcher(server.url(), "", 10)();
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("larger than 8 MiB"));
}

TEST(TopStatusCheckTest, OutsideTextIsEscapedOnScreen) {
  json doc = Golden("check_gpu_thermal.json");
  doc["host"] = "evil\x1b[2J\nhost";
  doc["findings"][0]["summary"] = "ring\x07 the bell";
  TopViewState st;
  st.width = 300;
  std::string all = Joined(BuildTopLines(doc, st));
  EXPECT_EQ(all.find('\x1b'), std::string::npos);
  EXPECT_EQ(all.find('\x07'), std::string::npos);
  EXPECT_THAT(all, HasSubstr("evil\\x1b[2J\\nhost"));
  EXPECT_THAT(all, HasSubstr("ring\\x07 the bell"));
}

TEST(TopStatusCheckTest, TheDocumentVerdictCountsInTheTitle) {
  json doc = Golden("check_gpu_h100_healthy.json");
  doc["verdict"] = "crit";
  doc["findings"] = json::array();
  TopViewState st;
  st.width = 200;
  auto lines = BuildTopLines(doc, st);
  ASSERT_FALSE(lines.empty());
  EXPECT_THAT(lines[0].text, HasSubstr("verdict CRIT"));
}

}  // namespace
}  // namespace gpudoctor
