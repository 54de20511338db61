// A job's own speed: the log presets on the fixture lines (tests/fixtures/job_logs), the step
// tracker and its baseline, the rotation-aware tail, [[job]] validation, the push query and inbox,
// and job.slowdown with "how much slower and since when".
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "config/config.h"
#include "core/time_spec.h"
#include "job/log_tail.h"
#include "job/step_inbox.h"
#include "job/step_line.h"
#include "job/step_tracker.h"
#include "probes/probe_entry_points.h"
#include "rules/engine.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using testing::FixturePath;
using ::testing::HasSubstr;
using testing::ReadFileOrDie;
using testing::TempDir;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == '\n' || c == '\r') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::vector<StepLine> ParseFixture(const std::string& name, StepPreset preset) {
  StepPattern p;
  p.preset = preset;
  std::vector<StepLine> out;
  for (const std::string& l : Lines(ReadFileOrDie(FixturePath("job_logs/" + name)))) {
    if (auto s = ParseStepLine(l, p)) out.push_back(*s);
  }
  return out;
}

JobFacts Track(const std::string& name, StepPreset preset, int baseline_steps) {
  StepTracker t(baseline_steps, std::nullopt);
  for (const StepLine& l : ParseFixture(name, preset)) t.AddLine(l, 1'700'000'000'000);
  JobFacts f;
  f.name = "train";
  t.Fill(f);
  return f;
}

TEST(StepLineTest, TqdmSecondsPerIterationAndRedraws) {
  for (StepPreset p : {StepPreset::kTqdm, StepPreset::kAuto}) {
    auto lines = ParseFixture("hf_trainer_tqdm.log", p);
    ASSERT_EQ(lines.size(), 40u);  // the {'loss': ...} dicts say nothing about steps
    EXPECT_EQ(*lines[0].step, 1);
    EXPECT_DOUBLE_EQ(*lines[0].seconds_per_step, 2.73);
    EXPECT_EQ(*lines[39].step, 40);
    EXPECT_DOUBLE_EQ(*lines[39].seconds_per_step, 8.19);
  }
  auto fast = ParseFixture("tqdm_it_per_s.log", StepPreset::kTqdm);
  ASSERT_EQ(fast.size(), 30u);
  EXPECT_NEAR(*fast[5].seconds_per_step, 1 / 1.76, 1e-9);
  // "?it/s" (no rate yet) is no step time.
  StepPattern tq{StepPreset::kTqdm, nullptr, StepCapture::kSeconds};
  EXPECT_FALSE(ParseStepLine("  0%|          | 0/500 [00:00<?, ?it/s]", tq));
}

TEST(StepLineTest, LightningBars) {
  for (const char* file : {"lightning_tqdm.log", "lightning_rich.log"}) {
    auto lines = ParseFixture(file, StepPreset::kLightning);
    ASSERT_EQ(lines.size(), 12u) << file;
    EXPECT_EQ(*lines[0].step, 440) << file;  // not the "1/9" of "Epoch 1/9"
    EXPECT_NEAR(*lines[0].seconds_per_step, 1 / 3.32, 1e-9) << file;
    EXPECT_EQ(ParseFixture(file, StepPreset::kAuto).size(), 12u) << file;
  }
  // The Lightning preset wants its "Epoch" prefix.
  StepPattern lp{StepPreset::kLightning, nullptr, StepCapture::kSeconds};
  EXPECT_FALSE(ParseStepLine(" 12%|█▏        | 60/500 [00:34<04:10,  1.76it/s]", lp));
}

TEST(StepLineTest, MegatronIterations) {
  auto lines = ParseFixture("megatron.log", StepPreset::kMegatron);
  ASSERT_EQ(lines.size(), 50u);
  EXPECT_EQ(*lines[0].step, 10);
  EXPECT_DOUBLE_EQ(*lines[0].seconds_per_step, 1.2345);
  EXPECT_EQ(*lines[49].step, 500);
  EXPECT_NEAR(*lines[49].seconds_per_step, 3.7028, 1e-9);
  EXPECT_EQ(*lines[0].unix_ms, *ParseLeadingTimestampMs("2024-03-01 12:00:12"));
  EXPECT_EQ(ParseFixture("megatron.log", StepPreset::kAuto).size(), 50u);
}

TEST(StepLineTest, DeepSpeedStepsFromStamps) {
  auto lines = ParseFixture("deepspeed.log", StepPreset::kDeepSpeed);
  // step= and global_step= lines (two per step; the "time (ms)" breakdown is not a step).
  ASSERT_EQ(lines.size(), 40u);
  EXPECT_EQ(*lines[0].step, 10);
  EXPECT_FALSE(lines[0].seconds_per_step);
  JobFacts f = Track("deepspeed.log", StepPreset::kDeepSpeed, 5);
  EXPECT_EQ(f.samples, 19u);  // 20 steps logged, the first is the anchor
  EXPECT_NEAR(*f.step_seconds, 4.2, 1e-6);
  EXPECT_EQ(*f.step, 200);
  EXPECT_NEAR(Track("deepspeed.log", StepPreset::kAuto, 5).step_seconds.value_or(0), 4.2, 1e-6);
}

TEST(StepLineTest, PlainStepLinesWithStamps) {
  JobFacts f = Track("plain_step.log", StepPreset::kStep, 5);
  EXPECT_EQ(f.samples, 20u);
  EXPECT_NEAR(*f.step_seconds, 0.85, 1e-6);
  EXPECT_NEAR(*f.baseline_seconds, 0.85, 1e-6);
  EXPECT_EQ(f.baseline_steps, 5);
  // Not a step: "steps", "global_stepping", no stamp.
  StepPattern sp{StepPreset::kStep, nullptr, StepCapture::kSeconds};
  EXPECT_FALSE(ParseStepLine("2024-03-01 12:00:01 warmup steps 100", sp));
  EXPECT_FALSE(ParseStepLine("step 100 loss 2.3", sp));
  auto l = ParseStepLine("2024-03-01T12:00:01.5+02:00 Step: 7", sp);
  ASSERT_TRUE(l);
  EXPECT_EQ(*l->step, 7);
  EXPECT_EQ(*l->unix_ms, (*ParseTimeSpec("2024-03-01T10:00:01Z", 0)) * 1000 + 500);
}

// Lines exactly as users posted them in public issues (tests/fixtures/job_logs/README.md cites
// each): the presets must read real output, not only our imitations of it.
TEST(StepLineTest, RealPublicLines) {
  auto megatron = ParseFixture("real/megatron_epfl_issue11.log", StepPreset::kMegatron);
  ASSERT_EQ(megatron.size(), 2u);
  EXPECT_EQ(*megatron[0].step, 201);
  EXPECT_NEAR(*megatron[0].seconds_per_step, 139.1134, 1e-9);
  EXPECT_NEAR(*megatron[1].seconds_per_step, 139.2214, 1e-9);
  EXPECT_EQ(ParseFixture("real/megatron_epfl_issue11.log", StepPreset::kAuto).size(), 2u);

  // GPT-NeoX prints the Megatron iteration line after a "samples/sec" field; DeepSpeed's own
  // step= and global_step= lines carry the step; the time (ms) breakdown is no step.
  auto neox = ParseFixture("real/neox_deepspeed_issue3742.log", StepPreset::kMegatron);
  ASSERT_EQ(neox.size(), 1u);
  EXPECT_EQ(*neox[0].step, 11);
  EXPECT_NEAR(*neox[0].seconds_per_step, 4.6229, 1e-9);
  auto neox_ds = ParseFixture("real/neox_deepspeed_issue3742.log", StepPreset::kDeepSpeed);
  ASSERT_EQ(neox_ds.size(), 2u);
  EXPECT_EQ(*neox_ds[0].step, 11);
  EXPECT_FALSE(neox_ds[0].seconds_per_step);

  // step=40 at 02:06:58.985, step=50 at 02:07:14.130: 15.145 s for 10 steps.
  JobFacts ds = Track("real/deepspeed_issue1825.log", StepPreset::kDeepSpeed, 1);
  ASSERT_TRUE(ds.step_seconds);
  EXPECT_NEAR(*ds.step_seconds, 1.5145, 1e-6);
  EXPECT_EQ(*ds.step, 50);

  // A bar pasted from a terminal: the closing ']' is cut off.
  auto hf = ParseFixture("real/hf_trainer_issue262.log", StepPreset::kTqdm);
  ASSERT_EQ(hf.size(), 2u);
  EXPECT_EQ(*hf[0].step, 2);
  EXPECT_DOUBLE_EQ(*hf[0].seconds_per_step, 5.01);
  EXPECT_DOUBLE_EQ(*hf[1].seconds_per_step, 5.97);

  auto pl = ParseFixture("real/lightning_issue4225.log", StepPreset::kLightning);
  ASSERT_EQ(pl.size(), 4u);  // "?it/s" says nothing yet
  EXPECT_EQ(*pl[0].step, 1);
  EXPECT_DOUBLE_EQ(*pl[0].seconds_per_step, 8.77);
  EXPECT_EQ(*pl[3].step, 4);
  EXPECT_DOUBLE_EQ(*pl[3].seconds_per_step, 4.47);

  auto slow = ParseFixture("real/lightning_anemoi_issue614.log", StepPreset::kLightning);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(*slow[0].step, 3744);
  EXPECT_NEAR(*slow[0].seconds_per_step, 1 / 0.32, 1e-9);
}

TEST(StepLineTest, CustomRegex) {
  std::string why;
  EXPECT_FALSE(CompileStepRegex("no group", &why));
  EXPECT_THAT(why, HasSubstr("capture group"));
  EXPECT_FALSE(CompileStepRegex("(unclosed", &why));
  EXPECT_THAT(why, HasSubstr("does not compile"));
  StepPattern p;
  p.preset = StepPreset::kRegex;
  p.regex = CompileStepRegex("step_time_ms=([0-9.]+)", &why);
  p.capture = StepCapture::kMilliseconds;
  auto l = ParseStepLine("rank0 step_time_ms=250.5 tokens=4096", p);
  ASSERT_TRUE(l);
  EXPECT_DOUBLE_EQ(*l->seconds_per_step, 0.2505);
  EXPECT_FALSE(ParseStepLine("rank0 step_time_ms=abc", p));
  EXPECT_FALSE(ParseStepLine(std::string(kMaxStepLineBytes + 1, 'x'), p));
  p.capture = StepCapture::kItPerSecond;
  EXPECT_DOUBLE_EQ(*ParseStepLine("step_time_ms=4", p)->seconds_per_step, 0.25);
}

TEST(StepTrackerTest, BaselineIsTheMedianOfTheFirstSteps) {
  JobFacts f = Track("hf_trainer_tqdm.log", StepPreset::kTqdm, 20);
  EXPECT_EQ(f.samples, 40u);
  EXPECT_DOUBLE_EQ(*f.baseline_seconds, 2.73);
  EXPECT_DOUBLE_EQ(*f.step_seconds, 8.19);
  EXPECT_EQ(f.recent.size(), 40u);
  // A configured baseline wins.
  StepTracker t(20, 1.0);
  t.AddLine({1, 1.5, std::nullopt}, 1000);
  JobFacts g;
  t.Fill(g);
  EXPECT_TRUE(g.baseline_configured);
  EXPECT_DOUBLE_EQ(*g.baseline_seconds, 1.0);
}

TEST(StepTrackerTest, CountersReadTogetherAndRestarts) {
  StepTracker t(3, std::nullopt);
  // Lines without stamps read in one poll: only the newest counts as the anchor.
  for (int s = 1; s <= 50; ++s) t.AddLine({s, std::nullopt, std::nullopt}, 10'000);
  JobFacts f;
  t.Fill(f);
  EXPECT_EQ(f.samples, 0u);
  t.AddLine({52, std::nullopt, std::nullopt}, 13'000);  // 2 steps in 3 s
  t.AddLine({2, std::nullopt, std::nullopt}, 14'000);   // restarted: a new anchor
  t.AddLine({3, std::nullopt, std::nullopt}, 15'000);
  t.Fill(f);
  ASSERT_EQ(f.samples, 2u);
  EXPECT_DOUBLE_EQ(f.recent[0].seconds, 1.5);
  EXPECT_DOUBLE_EQ(f.recent[1].seconds, 1.0);
  // Marks: without a number each is the next step.
  StepTracker m(3, std::nullopt);
  m.AddMark(1000, std::nullopt, std::nullopt);
  m.AddMark(3000, std::nullopt, std::nullopt);
  m.AddMark(3500, std::nullopt, 0.75);
  JobFacts mf;
  m.Fill(mf);
  ASSERT_EQ(mf.samples, 2u);
  EXPECT_DOUBLE_EQ(mf.recent[0].seconds, 2.0);
  EXPECT_DOUBLE_EQ(mf.recent[1].seconds, 0.75);
}

Snapshot WithJob(JobFacts f) {
  Snapshot s;
  s.jobs.push_back(std::move(f));
  return s;
}

TEST(JobSlowdownRuleTest, SaysHowMuchSlowerAndSinceWhen) {
  JobFacts f = Track("megatron.log", StepPreset::kMegatron, 10);
  std::vector<Finding> out;
  JobRules(WithJob(f), Thresholds(), out);
  ASSERT_EQ(out.size(), 1u);
  const Finding& x = out[0];
  EXPECT_EQ(x.id, "job.slowdown");
  EXPECT_EQ(x.subject, "train");
  EXPECT_THAT(x.summary, HasSubstr("steps take 3.703 s, x3 its baseline of 1.234 s"));
  // The first slow line is iteration 310: 300 × 1.2345 s + 3.7028 × 10 s after 12:00:00.
  int64_t t310 = *ParseTimeSpec("2024-03-01T12:00:00Z", 0) + 370 + 37;
  EXPECT_THAT(x.summary, HasSubstr("since " + FormatUtc(t310)));
  bool has_since = false;
  for (const auto& e : x.evidence) {
    if (e.name == "since_unix_s") has_since = std::get<int64_t>(e.value) == t310;
  }
  EXPECT_TRUE(has_since);
  // Below the factor: nothing. A raised factor (config) silences x3.
  JobFacts ok = Track("plain_step.log", StepPreset::kStep, 5);
  out.clear();
  JobRules(WithJob(ok), Thresholds(), out);
  EXPECT_TRUE(out.empty());
  ThresholdOverrides o;
  o.Set("job.slowdown", "factor", 3.5);
  out.clear();
  JobRules(WithJob(f), Thresholds(o), out);
  EXPECT_TRUE(out.empty());
}

TEST(LogTailTest, FollowsAppendsPartialLinesRotationAndTruncation) {
  TempDir dir;
  std::string path = dir.path() + "/train.log";
  LogTail tail(path);
  LogTailLimits lim;
  EXPECT_EQ(tail.Poll(lim).status().code(), StatusCode::kNotFound);
  dir.Write("train.log", "a\nb\rpart");
  auto r = tail.Poll(lim);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->lines, (std::vector<std::string>{"a", "b"}));
  FILE* f = std::fopen(path.c_str(), "a");
  std::fputs("ial\nc\n", f);
  std::fclose(f);
  r = tail.Poll(lim);
  EXPECT_EQ(r->lines, (std::vector<std::string>{"partial", "c"}));
  // logrotate: rename, then a new file; the old file's last lines come first.
  f = std::fopen(path.c_str(), "a");
  std::fputs("old-last\n", f);
  std::fclose(f);
  std::filesystem::rename(path, path + ".1");
  dir.Write("train.log", "new-1\n");
  r = tail.Poll(lim);
  EXPECT_EQ(r->lines, (std::vector<std::string>{"old-last", "new-1"}));
  EXPECT_EQ(r->rotations, 1u);
  // copytruncate: the same file, shorter: read from its start.
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  f = std::fopen(path.c_str(), "a");
  std::fputs("t\n", f);
  std::fclose(f);
  r = tail.Poll(lim);
  EXPECT_EQ(r->lines, (std::vector<std::string>{"t"}));
  EXPECT_EQ(r->rotations, 1u);
  // Bounded: an overlong line is dropped, max_bytes leaves the rest for the next poll.
  lim.max_line_bytes = 16;
  lim.max_bytes = 64;
  f = std::fopen(path.c_str(), "a");
  std::fputs((std::string(100, 'x') + "\nshort\n").c_str(), f);
  std::fclose(f);
  r = tail.Poll(lim);
  EXPECT_TRUE(r->more);
  EXPECT_EQ(r->dropped_lines, 1u);
  EXPECT_TRUE(r->lines.empty());
  r = tail.Poll(lim);
  EXPECT_EQ(r->lines, (std::vector<std::string>{"short"}));
}

TEST(JobConfigTest, ParsesAndNamesTheTableAndKey) {
  Settings s;
  auto ok = ApplyConfigText(
      "[[job]]\nname = \"pretrain\"\nlog = \"/scratch/train.log\"\npreset = \"megatron\"\n"
      "baseline_steps = 50\n[[job]]\nname = \"ft\"\npreset = \"regex\"\n"
      "regex = 'dt=([0-9.]+)ms'\ncapture = \"ms\"\nbaseline_s = 0.5\n",
      "t.toml", s);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ASSERT_EQ(s.jobs.size(), 2u);
  EXPECT_EQ(s.jobs[0].log, "/scratch/train.log");
  EXPECT_EQ(s.jobs[0].baseline_steps, 50);
  EXPECT_EQ(s.jobs[1].capture, "ms");
  EXPECT_DOUBLE_EQ(s.jobs[1].baseline_s, 0.5);
  struct Bad {
    const char* toml;
    const char* message;
  } bad[] = {
      {"[[job]]\nname = \"a\"\n[[job]]\nname = \"b\"\npreset = \"fast\"\n",
       "t.toml:5: [[job]] #2 key 'preset': must be one of"},
      {"[[job]]\nlog = \"/x\"\n", "[[job]] #1 needs name"},
      {"[[job]]\nname = \"a b\"\n", "[[job]] #1 key 'name'"},
      {"[[job]]\nname = \"a\"\n[[job]]\nname = \"a\"\n", "already the name of another"},
      {"[[job]]\nname = \"a\"\nlog = \"relative.log\"\n", "key 'log': must be an absolute path"},
      {"[[job]]\nname = \"a\"\npreset = \"regex\"\nregex = \"x\"\n", "capture group"},
      {"[[job]]\nname = \"a\"\npreset = \"regex\"\n", "needs the key regex"},
      {"[[job]]\nname = \"a\"\nbaseline_steps = 0\n", "key 'baseline_steps'"},
      {"job = 3\n", "must be an array of tables"},
  };
  for (const Bad& b : bad) {
    Settings t;
    auto r = ApplyConfigText(b.toml, "t.toml", t);
    ASSERT_FALSE(r.ok()) << b.toml;
    EXPECT_THAT(r.status().message(), HasSubstr(b.message)) << b.toml;
  }
  Settings w;
  auto warn = ApplyConfigText("[[job]]\nname = \"a\"\nlogg = \"/x\"\n", "t.toml", w);
  ASSERT_TRUE(warn.ok());
  ASSERT_EQ(warn->warnings.size(), 1u);
  EXPECT_THAT(warn->warnings[0], HasSubstr("[[job]] #1 key 'logg': unknown key"));
}

TEST(StepMarkTest, QueryAndInbox) {
  auto m = ParseStepMarkQuery("step=120&seconds=2.5");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(*m->step, 120);
  EXPECT_DOUBLE_EQ(*m->seconds, 2.5);
  EXPECT_TRUE(ParseStepMarkQuery("").ok());
  for (const char* bad : {"seconds=0", "seconds=-1", "seconds=nan", "seconds=1e9", "step=-1",
                          "step=1.5", "step=1&step=2", "who=1", "seconds=", "seconds=1x"}) {
    EXPECT_FALSE(ParseStepMarkQuery(bad).ok()) << bad;
  }
  JobInbox inbox;
  EXPECT_EQ(inbox.Push("train", {}).code(), StatusCode::kNotFound);
  inbox.SetKnownJobs({"train"});
  for (size_t i = 0; i < JobInbox::kMaxQueued + 3; ++i) {
    ASSERT_TRUE(inbox.Push("train", {static_cast<int64_t>(i), std::nullopt, 1.0}).ok());
  }
  uint64_t dropped = 0;
  auto marks = inbox.Take("train", &dropped);
  EXPECT_EQ(marks.size(), JobInbox::kMaxQueued);
  EXPECT_EQ(dropped, 3u);
  EXPECT_EQ(marks.front().unix_ms, 3);
  EXPECT_TRUE(inbox.Take("train").empty());
  EXPECT_TRUE(ValidJobName("llama-3.1_ft"));
  EXPECT_FALSE(ValidJobName("a/b"));
  EXPECT_FALSE(ValidJobName(""));
}

TEST(JobProbeTest, CheckReadsTheLogOnceAndTheRuleFires) {
  TempDir dir;
  dir.Write("scratch/train.log", ReadFileOrDie(FixturePath("job_logs/megatron.log")));
  auto s = std::make_shared<Settings>();
  s->fs = RootFs(dir.path() + "/proc", dir.path() + "/sys", dir.path());
  s->jobs.push_back({"pretrain", "/scratch/train.log", "auto", "", "seconds", 10, 0});
  s->jobs.push_back({"missing", "/scratch/none.log", "auto", "", "seconds", 10, 0});
  ProbeContext ctx;
  ctx.settings = s;
  ctx.deadline = SteadyClock::now() + std::chrono::seconds(5);
  ProbeOutput out = RunJobProbe(ctx);
  ASSERT_EQ(out.state, ProbeState::kOk) << out.reason;
  Snapshot snap;
  out.apply(snap);
  ASSERT_EQ(snap.jobs.size(), 2u);
  EXPECT_EQ(snap.jobs[0].samples, 50u);
  EXPECT_NEAR(*snap.jobs[0].baseline_seconds, 1.2345, 1e-9);
  EXPECT_THAT(snap.jobs[1].error, HasSubstr("none.log"));
  auto findings = EvaluateRules(snap, Thresholds());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "job.slowdown");
  // No [[job]]: skipped.
  ctx.settings = std::make_shared<Settings>();
  EXPECT_EQ(RunJobProbe(ctx).state, ProbeState::kSkipped);
}

}  // namespace
}  // namespace gpudoctor
