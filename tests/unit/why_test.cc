// `gpudoctor why`: the change point, and the ranking on recorded histories with a planted onset,
// planted causes and decoys that changed elsewhere in time (the true cause must rank first); a
// history without a change says so; without a job the GPU utilisation stands in.
#include "why/why.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "metrics/metric_table.h"
#include "store/history_store.h"
#include "store/synthetic_tick.h"
#include "test_util.h"
#include "why/why_load.h"

namespace gpudoctor {
namespace {

using ::testing::HasSubstr;
using testing::Noise;
using testing::TempDir;

constexpr int64_t kT0 = 1'700'000'000;
constexpr int64_t kOnset = kT0 + 3600;

double Jitter(int64_t t, uint64_t salt, double spread) {
  return spread * (Noise(static_cast<uint64_t>(t) * 31 + salt) - 0.5);
}

// A series sampled every `step` s over [kT0, kT0 + 2 h): `before` until `change_at`, then `after`,
// with relative noise.
Series Stepped(const std::string& metric, std::optional<int> gpu, const std::string& labels,
               double before, double after, int64_t change_at, double noise = 0.02, int step = 10) {
  Series s;
  s.metric = metric;
  s.gpu = gpu;
  s.labels = labels;
  uint64_t salt =
      std::hash<std::string>()(metric + labels) + static_cast<uint64_t>(gpu.value_or(-1));
  for (int64_t t = kT0; t < kT0 + 7200; t += step) {
    double base = t < change_at ? before : after;
    s.points.emplace_back(t, base * (1 + Jitter(t, salt, noise)));
  }
  return s;
}

TrackedFinding Tracked(const std::string& id, Severity sev, std::optional<int> gpu,
                       int64_t first_seen_s, const std::string& summary) {
  TrackedFinding f;
  f.key = id + (gpu ? "/" + std::to_string(*gpu) : "");
  f.last.id = id;
  f.last.severity = sev;
  f.last.summary = summary;
  if (gpu) {
    f.last.gpu = GpuRef{};
    f.last.gpu->index = gpu;
  }
  f.state = FindingState::kOpen;
  f.first_seen_ms = first_seen_s * 1000;
  f.opened_ms = f.first_seen_ms + 60000;
  f.last_seen_ms = (kT0 + 7200) * 1000;
  return f;
}

WhyInput PlantedHistory() {
  WhyInput in;
  in.from_job = true;
  in.subject = "job train";
  in.target = Stepped("gpudoctor_job_step_seconds", std::nullopt, "job=train", 1.0, 12.0, kOnset);
  // The cause: GPU 3 overheats 100 s before, throttles 30 s before the onset.
  in.candidates.push_back(
      Stepped("gpudoctor_gpu_temperature_celsius", 3, "", 62, 91, kOnset - 100, 0.01));
  in.candidates.push_back(
      Stepped("gpudoctor_gpu_sm_clock_hertz", 3, "", 1.98e9, 1.275e9, kOnset - 30, 0.001));
  in.candidates.push_back(
      Stepped("gpudoctor_gpu_throttle_active", 3, "reason=hw_thermal", 0, 1, kOnset - 30, 0));
  // Decoys: host CPU busy 50 min before; NIC traffic an hour after; GPU 0 power 10 s after; a
  // steady noisy series; a disk finding long before; an Xid 55 min before; a resolved finding.
  in.candidates.push_back(
      Stepped("gpudoctor_host_cpu_busy_ratio", std::nullopt, "", 0.2, 0.8, kT0 + 600));
  in.candidates.push_back(Stepped("gpudoctor_nic_receive_bytes_per_second", std::nullopt,
                                  "nic=eth0", 1e8, 9e8, kOnset + 1800));
  in.candidates.push_back(Stepped("gpudoctor_gpu_power_watts", 0, "", 650, 350, kOnset + 10));
  in.candidates.push_back(
      Stepped("gpudoctor_gpu_temperature_celsius", 1, "", 60, 60, kOnset, 0.05));
  in.findings.push_back(Tracked("gpu.thermal", Severity::kCrit, 3, kOnset - 25,
                                "GPU 3: HW thermal slowdown active at 91 C"));
  in.findings.push_back(
      Tracked("host.disk.full", Severity::kWarn, std::nullopt, kT0 + 500, "/scratch 97% full"));
  TrackedFinding resolved =
      Tracked("net.loss", Severity::kWarn, std::nullopt, kOnset - 1200, "loss to 10.0.0.1");
  resolved.state = FindingState::kResolved;
  resolved.resolved_ms = (kOnset - 900) * 1000;
  in.findings.push_back(resolved);
  in.findings.push_back(
      Tracked("job.slowdown", Severity::kWarn, std::nullopt, kOnset + 30, "job train slower"));
  HistoryEvent xid;
  xid.unix_ms = (kOnset - 3300) * 1000;
  xid.kind = "xid";
  xid.gpu_index = 5;
  xid.detail = "Xid 13";
  in.events.push_back(xid);
  HistoryEvent ack;
  ack.unix_ms = (kOnset - 5) * 1000;
  ack.kind = "ack";
  in.events.push_back(ack);
  return in;
}

TEST(ChangePointTest, FindsTheStepAndRefusesNoise) {
  Series s = Stepped("x", std::nullopt, "", 1.0, 3.0, kOnset);
  auto cp = SlowdownOnset(s.points, 1.3, 5);
  ASSERT_TRUE(cp);
  EXPECT_EQ(cp->unix_s, kOnset);
  EXPECT_NEAR(cp->before, 1.0, 0.02);
  EXPECT_NEAR(cp->after, 3.0, 0.06);
  EXPECT_GT(cp->explained, 0.9);
  // x1.2 is below the factor; noise alone is no change; a speed-up is no slowdown.
  EXPECT_FALSE(SlowdownOnset(Stepped("x", std::nullopt, "", 1.0, 1.2, kOnset).points, 1.3, 5));
  EXPECT_FALSE(SlowdownOnset(Stepped("x", std::nullopt, "", 1.0, 1.0, kOnset, 0.3).points, 1.3, 5));
  EXPECT_FALSE(SlowdownOnset(Stepped("x", std::nullopt, "", 3.0, 1.0, kOnset).points, 1.3, 5));
  EXPECT_FALSE(BestSplit({{1, 1.0}, {2, 1.0}}, 5, false));
}

TEST(WhyTest, TheTrueCauseRanksFirstWithItsEvidence) {
  WhyResult r = ExplainSlowdown(PlantedHistory());
  ASSERT_TRUE(r.onset);
  EXPECT_EQ(r.onset->unix_s, kOnset);
  EXPECT_NEAR(r.onset->after / r.onset->before, 12, 0.5);
  ASSERT_GE(r.causes.size(), 2u);
  const WhyCause& first = r.causes[0];
  EXPECT_EQ(first.kind, "finding");
  EXPECT_EQ(first.id, "gpu.thermal");
  EXPECT_EQ(first.gpu, 3);
  EXPECT_DOUBLE_EQ(first.lead_s, 25);
  std::string ev;
  for (const auto& e : first.evidence) ev += e + ";";
  EXPECT_THAT(ev, HasSubstr("sm clock 1980 MHz -> 1275 MHz"));
  EXPECT_THAT(ev, HasSubstr("throttle active {reason=hw_thermal} 0 -> 1"));
  EXPECT_FALSE(first.next_step.empty());
  // Decoys rank below, the job's own finding and acks not at all.
  for (size_t i = 1; i < r.causes.size(); ++i) {
    EXPECT_LT(r.causes[i].score, first.score);
    EXPECT_NE(r.causes[i].id, "job.slowdown");
    EXPECT_NE(r.causes[i].id, "ack");
    EXPECT_NE(r.causes[i].id, "net.loss");  // resolved before the onset
  }
  std::string text = WhyToText(r);
  EXPECT_THAT(text, HasSubstr("job train: slowdown began"));
  EXPECT_THAT(text, HasSubstr("s (x12)"));
  EXPECT_THAT(text, HasSubstr("1. "));
  auto j = WhyToJson(r);
  EXPECT_EQ(j["causes"][0]["id"], "gpu.thermal");
  EXPECT_EQ(j["onset"]["unix_s"], kOnset);
}

TEST(WhyTest, WithoutTheFindingTheMetricsStillNameTheGpu) {
  WhyInput in = PlantedHistory();
  in.findings.clear();
  WhyResult r = ExplainSlowdown(in);
  ASSERT_FALSE(r.causes.empty());
  EXPECT_EQ(r.causes[0].kind, "metric");
  EXPECT_EQ(r.causes[0].gpu, 3);
  EXPECT_THAT(r.causes[0].id,
              ::testing::AnyOf("gpudoctor_gpu_throttle_active", "gpudoctor_gpu_sm_clock_hertz"));
}

TEST(WhyTest, AGivenOnsetIsUsed) {
  WhyInput in = PlantedHistory();
  in.at_unix_s = kOnset + 5;
  WhyResult r = ExplainSlowdown(in);
  ASSERT_TRUE(r.onset);
  EXPECT_TRUE(r.onset_given);
  EXPECT_EQ(r.causes[0].id, "gpu.thermal");
}

TEST(WhyTest, AHistoryWithoutChangeSaysSo) {
  WhyInput in = PlantedHistory();
  in.target =
      Stepped("gpudoctor_job_step_seconds", std::nullopt, "job=train", 1.0, 1.0, kOnset, 0.1);
  WhyResult r = ExplainSlowdown(in);
  EXPECT_FALSE(r.onset);
  EXPECT_TRUE(r.causes.empty());
  EXPECT_THAT(WhyToText(r), HasSubstr("no slowdown found: no change point of x1.3 or more"));
  EXPECT_TRUE(WhyToJson(r)["onset"].is_null());
}

const MetricInfo* M(const char* name) {
  const MetricInfo* m = FindMetric(name);
  EXPECT_NE(m, nullptr) << name;
  return m;
}

// Through a real history file: ticks every 5 s, the same planted story, read by the loader.
void WriteHistory(const std::string& db, bool with_job) {
  StoreOptions o;
  o.max_queued_ticks = 1 << 20;
  auto store = HistoryStore::Open(db, o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (int64_t t = kT0; t < kT0 + 7200; t += 5) {
    auto tick = std::make_shared<TickResult>();
    tick->unix_ms = t * 1000;
    bool slow = t >= kOnset;
    bool hot = t >= kOnset - 30;
    if (with_job) {
      tick->points.push_back({M("gpudoctor_job_step_seconds"),
                              -1,
                              {{"job", "train"}},
                              (slow ? 12.0 : 1.0) * (1 + Jitter(t, 1, 0.04))});
    }
    for (int g = 0; g < 4; ++g) {
      bool this_hot = hot && g == 3;
      tick->points.push_back(
          {M("gpudoctor_gpu_sm_clock_hertz"), g, {}, this_hot ? 1.275e9 : 1.98e9});
      tick->points.push_back({M("gpudoctor_gpu_temperature_celsius"),
                              g,
                              {},
                              std::floor((this_hot ? 91 : 62) + Jitter(t, 10 + g, 2))});
      tick->points.push_back({M("gpudoctor_gpu_throttle_active"),
                              g,
                              {{"reason", "hw_thermal"}},
                              this_hot ? 1.0 : 0.0});
      // Utilisation: every GPU waits on the slow one.
      tick->points.push_back({M("gpudoctor_gpu_utilization_ratio"),
                              g,
                              {},
                              (slow ? 0.08 : 0.97) + Jitter(t, 20 + g, 0.02)});
    }
    // Decoy: the host got busy long before.
    tick->points.push_back({M("gpudoctor_host_cpu_busy_ratio"),
                            -1,
                            {},
                            (t >= kT0 + 600 ? 0.8 : 0.2) + Jitter(t, 30, 0.02)});
    if (t >= kOnset - 25) {
      TrackedFinding f = Tracked("gpu.thermal", Severity::kCrit, 3, kOnset - 25,
                                 "GPU 3: HW thermal slowdown active at 91 C");
      f.last_seen_ms = t * 1000;
      tick->findings.push_back(f);
    }
    (*store)->Append(tick);
  }
  (*store)->Flush();
  (*store)->Close();
}

TEST(WhyStoreTest, RanksFromARecordedHistory) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  WriteHistory(db, true);
  auto reader = HistoryReader::Open(db);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  WhyRequest req;
  req.since_unix_s = kT0;
  req.until_unix_s = kT0 + 7200;
  auto r = RunWhy(**reader, req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->onset);
  EXPECT_TRUE(r->from_job);
  EXPECT_NEAR(static_cast<double>(r->onset->unix_s), kOnset, 5);
  ASSERT_FALSE(r->causes.empty());
  EXPECT_EQ(r->causes[0].id, "gpu.thermal") << WhyToText(*r);
  EXPECT_EQ(r->causes[0].gpu, 3);
  // A job that is not stored is named with the ones that are.
  req.job = "other";
  auto missing = RunWhy(**reader, req);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("stored: train"));
}

TEST(WhyStoreTest, WithoutAJobItWorksFromUtilisationAndSaysSo) {
  TempDir dir;
  std::string db = dir.path() + "/history.db";
  WriteHistory(db, false);
  auto reader = HistoryReader::Open(db);
  ASSERT_TRUE(reader.ok());
  WhyRequest req;
  req.since_unix_s = kT0;
  req.until_unix_s = kT0 + 7200;
  auto r = RunWhy(**reader, req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->from_job);
  ASSERT_TRUE(r->onset);
  ASSERT_FALSE(r->causes.empty());
  EXPECT_EQ(r->causes[0].id, "gpu.thermal") << WhyToText(*r);
  EXPECT_THAT(WhyToText(*r), HasSubstr("working from GPU utilisation alone"));
}

}  // namespace
}  // namespace gpudoctor
