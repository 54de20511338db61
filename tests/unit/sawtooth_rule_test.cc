// gpu.util.sawtooth: the static-batching saw-tooth detector and the rule the watch engine runs on
// each GPU's utilisation history.
#include "rules/sawtooth_rule.h"

#include <gtest/gtest.h>

namespace gpudoctor {
namespace {

std::vector<double> Square(int cycles, int high_len, int low_len, double high, double low) {
  std::vector<double> v;
  for (int c = 0; c < cycles; ++c) {
    v.insert(v.end(), high_len, high);
    v.insert(v.end(), low_len, low);
  }
  return v;
}

TEST(SawToothTest, SawToothOfStaticBatchingIsDetected) {
  SawTooth s = DetectStaticBatchingSawTooth(Square(6, 5, 5, 97, 3));
  EXPECT_TRUE(s.detected);
  EXPECT_EQ(s.cycles, 5);  // six high phases: five complete high -> low -> high alternations
  EXPECT_DOUBLE_EQ(s.high_fraction, 0.5);
  EXPECT_DOUBLE_EQ(s.mean_util_pct, 50);
  // A few samples on the edges between phases do not hide it.
  auto v = Square(5, 6, 4, 90, 10);
  v[5] = 50;
  v[15] = 45;
  EXPECT_TRUE(DetectStaticBatchingSawTooth(v).detected);
}

TEST(SawToothTest, SteadyOrNoisyUtilisationIsNotASawTooth) {
  EXPECT_FALSE(DetectStaticBatchingSawTooth(std::vector<double>(60, 95)).detected);
  EXPECT_FALSE(DetectStaticBatchingSawTooth(std::vector<double>(60, 2)).detected);
  EXPECT_FALSE(DetectStaticBatchingSawTooth({}).detected);
  // A job that started once: low, then high.
  std::vector<double> step(30, 0);
  step.insert(step.end(), 30, 100);
  EXPECT_FALSE(DetectStaticBatchingSawTooth(step).detected);
  // Utilisation spread over the whole range (a deterministic ramp 0..99, repeated).
  std::vector<double> ramp;
  for (int i = 0; i < 300; ++i) ramp.push_back((i * 37) % 100);
  EXPECT_FALSE(DetectStaticBatchingSawTooth(ramp).detected);
  // Too short to call.
  EXPECT_FALSE(DetectStaticBatchingSawTooth(Square(2, 2, 2, 99, 1)).detected);
  // Shallow: 60% <-> 30% is load following traffic, not idle/busy.
  EXPECT_FALSE(DetectStaticBatchingSawTooth(Square(6, 5, 5, 60, 30)).detected);
}

}  // namespace
}  // namespace gpudoctor

namespace gpudoctor {
namespace {

// Watch history showing static batching's busy/idle saw-tooth is a finding that
// quotes the planner command; steady load is not.
TEST(SawToothTest, AlternatingUtilisationOverTicksIsFlaggedSteadyIsNot) {
  UtilHistory history;
  std::vector<Finding> findings;
  for (int t = 0; t < 40; ++t) {
    Snapshot s;
    GpuFacts g;
    g.index = 1;
    g.serial = "S1";
    g.memory_total_bytes = 80ull << 30;
    g.util_gpu_pct = (t / 4) % 2 == 0 ? 98 : 3;  // 4 ticks busy, 4 idle
    s.gpu.gpus.push_back(g);
    findings.clear();
    AddSawToothFindings(s, history, findings);
  }
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "gpu.util.sawtooth");
  EXPECT_NE(findings[0].next_steps[0].find("gpudoctor plan batching"), std::string::npos);
  EXPECT_NE(findings[0].next_steps[0].find("--gpu-mem 80GiB"), std::string::npos);

  UtilHistory steady;
  for (int t = 0; t < 40; ++t) {
    Snapshot s;
    GpuFacts g;
    g.index = 1;
    g.serial = "S1";
    g.util_gpu_pct = 85;
    s.gpu.gpus.push_back(g);
    findings.clear();
    AddSawToothFindings(s, steady, findings);
  }
  EXPECT_TRUE(findings.empty());
}

}  // namespace
}  // namespace gpudoctor
