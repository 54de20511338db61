// What `top --connect` accepts from a server before drawing it, and what it draws for outside
// text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <mutex>
#include <thread>

#include "bad_server.h"
#include "serve/http_server.h"
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

TEST(TopHistoryTest, ParseHistoryDocumentKeepsTheMetricsSeriesByGpu) {
  // One series: an object. A stored null is a missing sample, not 0.
  json one = json::parse(
      R"({"metric":"gpudoctor_gpu_utilization_ratio","gpu":2,"points":[[100,0.5],[110,null]]})");
  auto r = ParseHistoryDocument(one, kHistoryUtilMetric);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  const auto& pts = r->at(2);
  ASSERT_EQ(pts.size(), 2u);
  EXPECT_EQ(pts[0].unix_s, 100);
  EXPECT_EQ(pts[0].value, 0.5);
  EXPECT_FALSE(pts[1].value.has_value());
  // Several: a list; other metrics and host-level series (gpu null) are skipped; [] is none.
  json many = json::array(
      {one,
       {{"metric", "gpudoctor_gpu_utilization_ratio"}, {"gpu", 0}, {"points", {{100, 1}}}},
       {{"metric", "gpudoctor_gpu_temperature_celsius"}, {"gpu", 1}, {"points", {{100, 70}}}},
       {{"metric", "gpudoctor_gpu_utilization_ratio"}, {"gpu", nullptr}, {"points", {{1, 1}}}}});
  r = ParseHistoryDocument(many, kHistoryUtilMetric);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->size(), 2u);
  EXPECT_EQ(r->count(0), 1u);
  EXPECT_EQ(r->count(1), 0u);
  r = ParseHistoryDocument(json::array(), kHistoryUtilMetric);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
  // What a server may not send, named.
  json bad = many;
  bad[1]["points"][0][1] = "hot";
  EXPECT_THAT(ParseHistoryDocument(bad, kHistoryUtilMetric).status().message(),
              HasSubstr("history[1].points[0][1]"));
  bad = many;
  bad[2]["points"][0][1] = 1e300;  // checked also in a series top does not draw
  EXPECT_THAT(ParseHistoryDocument(bad, kHistoryUtilMetric).status().message(),
              HasSubstr("history[2].points[0][1]"));
  bad = many;
  bad[1]["points"][0][0] = 1.5;
  EXPECT_THAT(ParseHistoryDocument(bad, kHistoryUtilMetric).status().message(),
              HasSubstr("history[1].points[0][0]"));
  bad = many;
  bad[1]["gpu"] = 1e308;
  EXPECT_THAT(ParseHistoryDocument(bad, kHistoryUtilMetric).status().message(),
              HasSubstr("not a GPU index"));
  bad = many;
  bad[1]["points"] = {{1, 2, 3}};
  EXPECT_FALSE(ParseHistoryDocument(bad, kHistoryUtilMetric).ok());
  EXPECT_FALSE(ParseHistoryDocument(json("x"), kHistoryUtilMetric).ok());
}

// A history store stub: every GPU series of the asked metric over the asked range, one sample
// every 10 s; records what was asked.
class TopHistoryStub : public HistoryReader {
 public:
  struct Asked {
    std::mutex mu;
    std::vector<SeriesQuery> queries;
  };
  explicit TopHistoryStub(std::shared_ptr<Asked> asked) : asked_(std::move(asked)) {}
  Result<std::vector<Series>> QuerySeries(const SeriesQuery& q) override {
    {
      std::lock_guard<std::mutex> lock(asked_->mu);
      asked_->queries.push_back(q);
    }
    int64_t until = q.until_unix_s > 0 ? q.until_unix_s : std::time(nullptr);
    std::vector<Series> out;
    for (int gpu : {-1, 0, 1}) {
      Series s;
      s.metric = q.metric;
      s.gpu = gpu;
      bool util = q.metric == kHistoryUtilMetric;
      for (int64_t t = q.since_unix_s; t <= until; t += 10) {
        s.points.emplace_back(t, util ? 0.25 * (gpu + 1) : 60.0 + gpu);
      }
      if (!q.gpu || *q.gpu == gpu) out.push_back(std::move(s));
    }
    return out;
  }
  Result<std::vector<std::string>> ListMetrics() override { return std::vector<std::string>{}; }
  Result<std::string> Hostname() override { return std::string("node-1"); }
  Result<std::vector<StoredGpu>> QueryGpus(size_t) override { return std::vector<StoredGpu>{}; }
  Result<std::vector<TrackedFinding>> QueryFindings(const FindingsQuery&) override {
    return std::vector<TrackedFinding>{};
  }
  Result<std::vector<HistoryEvent>> QueryEvents(int64_t, size_t) override {
    return std::vector<HistoryEvent>{};
  }

 private:
  std::shared_ptr<Asked> asked_;
};

// The real watch HTTP server: the query top sends is one it accepts (two requests for every
// GPU), with the token; the answer lands per GPU and metric.
TEST(TopHistoryTest, DaemonHistoryFetcherReadsEveryGpuFromTheWatchApi) {
  auto asked = std::make_shared<TopHistoryStub::Asked>();
  HttpOptions o;
  o.listen = "127.0.0.1:0";
  o.token = "s3cret";
  auto server = WatchHttpServer::Start(
      o, [] { return std::shared_ptr<const TickResult>(); },
      [asked]() -> Result<std::unique_ptr<HistoryReader>> {
        return std::unique_ptr<HistoryReader>(new TopHistoryStub(asked));
      });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::string url = "http://127.0.0.1:" + std::to_string((*server)->port()) + "/";
  int64_t before = std::time(nullptr);
  auto r = DaemonHistoryFetcher(url, "s3cret", 5)();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->gpus.size(), 2u);  // the host-level series (gpu null) is not a GPU
  ASSERT_EQ(r->gpus.count(1), 1u);
  const GpuHistory& g1 = r->gpus.at(1);
  ASSERT_FALSE(g1.util.empty());
  ASSERT_FALSE(g1.temp.empty());
  EXPECT_EQ(g1.util.back().value, 0.5);
  EXPECT_EQ(g1.temp.back().value, 61.0);
  EXPECT_EQ(r->from_unix_s, r->to_unix_s - kHistoryWindowS);
  EXPECT_GE(r->to_unix_s, before - kHistoryWindowS);
  {
    std::lock_guard<std::mutex> lock(asked->mu);
    ASSERT_EQ(asked->queries.size(), 2u);
    EXPECT_EQ(asked->queries[0].metric, kHistoryUtilMetric);
    EXPECT_EQ(asked->queries[1].metric, kHistoryTempMetric);
    for (const SeriesQuery& q : asked->queries) {
      EXPECT_FALSE(q.gpu.has_value());
      EXPECT_EQ(q.max_points, 120);
      EXPECT_NEAR(static_cast<double>(q.since_unix_s), before - kHistoryWindowS, 5);
    }
  }
  // The token is the status fetch's: without it, the same 401 advice.
  auto denied = DaemonHistoryFetcher(url, "", 5)();
  ASSERT_FALSE(denied.ok());
  EXPECT_THAT(denied.status().message(), HasSubstr("HTTP 401"));
  EXPECT_NE(denied.status().code(), StatusCode::kUnsupported);
}

TEST(TopHistoryTest, ADaemonWithoutHistoryIsUnsupportedNotAnError) {
  HttpOptions o;
  o.listen = "127.0.0.1:0";
  auto server = WatchHttpServer::Start(o, nullptr, nullptr);  // no store: 503
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  auto r = DaemonHistoryFetcher("http://127.0.0.1:" + std::to_string((*server)->port()), "", 5)();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported) << r.status().message();
  EXPECT_THAT(r.status().message(), HasSubstr("serves no history (no history store)"));
  // A server that answers with something else than history: refused, naming the field.
  testing::BadServer junk(testing::BadServer::Mode::kFixed, R"({"metric":5,"points":[]})");
  auto j = DaemonHistoryFetcher(junk.url(), "", 5)();
  ASSERT_FALSE(j.ok());
  EXPECT_THAT(j.status().message(), HasSubstr("history refused: history.metric"));
}

// Polls until the poller applied a result (it never waits itself), at most ~5 s.
bool PollUntilApplied(HistoryPoller& poller, TopViewState* st, TimePoint now) {
  for (int i = 0; i < 500; ++i) {
    if (poller.Poll(st, now)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(TopHistoryTest, PollerFetchesAtMostEveryPeriodAndOnlyWhenShown) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  auto fail = std::make_shared<std::atomic<bool>>(false);
  HistoryPoller poller(
      [calls, fail]() -> Result<TopHistory> {
        ++*calls;
        if (*fail) return IoError("history down");
        TopHistory h;
        h.to_unix_s = 600;
        h.gpus[0].util = {{600, 0.5}};
        return h;
      },
      /*period_s=*/5, /*budget_s=*/60);
  TopViewState st;
  TimePoint t0 = SteadyClock::now();
  ASSERT_TRUE(PollUntilApplied(poller, &st, t0));
  ASSERT_TRUE(st.history.has_value());
  EXPECT_EQ(st.history->gpus.count(0), 1u);
  EXPECT_EQ(calls->load(), 1);
  // Redraws in between do not fetch.
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(poller.Poll(&st, t0 + std::chrono::seconds(4)));
  EXPECT_EQ(calls->load(), 1);
  // A failure goes to the error line; the last history stays.
  *fail = true;
  ASSERT_TRUE(PollUntilApplied(poller, &st, t0 + std::chrono::seconds(5)));
  EXPECT_EQ(calls->load(), 2);
  EXPECT_EQ(st.history_error, "history down");
  EXPECT_TRUE(st.history.has_value());
  // Hidden (`t`): no fetch.
  st.show_history = false;
  EXPECT_FALSE(poller.Poll(&st, t0 + std::chrono::seconds(60)));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(calls->load(), 2);
  // Shown again: fetches, and a success clears the error.
  st.show_history = true;
  *fail = false;
  ASSERT_TRUE(PollUntilApplied(poller, &st, t0 + std::chrono::seconds(61)));
  EXPECT_EQ(calls->load(), 3);
  EXPECT_TRUE(st.history_error.empty());
}

TEST(TopHistoryTest, PollerNotesADaemonWithoutHistoryNotAsAnError) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  HistoryPoller poller(
      [calls]() -> Result<TopHistory> {
        if (++*calls == 1) return Unsupported("the daemon serves no history");
        TopHistory h;
        h.to_unix_s = 600;
        return h;
      },
      5, 60);
  TopViewState st;
  st.history_error = "an old error";
  TimePoint t0 = SteadyClock::now();
  ASSERT_TRUE(PollUntilApplied(poller, &st, t0));
  EXPECT_EQ(st.history_note, "the daemon serves no history");
  EXPECT_TRUE(st.history_error.empty());
  EXPECT_FALSE(st.history.has_value());
  // Asked again after the period (a store may appear); history clears the note.
  EXPECT_FALSE(poller.Poll(&st, t0 + std::chrono::seconds(1)));
  ASSERT_TRUE(PollUntilApplied(poller, &st, t0 + std::chrono::seconds(5)));
  EXPECT_EQ(calls->load(), 2);
  EXPECT_TRUE(st.history_note.empty());
  EXPECT_TRUE(st.history.has_value());
}

}  // namespace
}  // namespace gpudoctor
