// The command line of `gpudoctor plan`: plan flags, global flags in any position, errors that
// name the flag and the value.
#include "cli/plan_options.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpudoctor::plan {
namespace {

Result<PlanOptions> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "gpudoctor");
  return ParsePlanCommandLine(static_cast<int>(args.size()), args.data());
}

bool IsPlan(std::vector<const char*> args) {
  args.insert(args.begin(), "gpudoctor");
  return IsPlanCommandLine(static_cast<int>(args.size()), args.data());
}

TEST(PlanOptionsTest, RecognisesPlanBehindGlobalFlags) {
  EXPECT_TRUE(IsPlan({"plan", "kv"}));
  EXPECT_TRUE(IsPlan({"--json", "plan", "kv"}));
  EXPECT_TRUE(IsPlan({"--nvml-lib", "/x/libnvidia-ml.so.1", "plan"}));  // value skipped
  EXPECT_TRUE(IsPlan({"--nvml-lib=/x", "plan"}));
  EXPECT_FALSE(IsPlan({"check", "--json"}));
  EXPECT_FALSE(IsPlan({"explain", "plan"}));
  EXPECT_FALSE(IsPlan({"--config", "plan"}));  // "plan" is the config file here
  EXPECT_FALSE(IsPlan({}));
}

TEST(PlanOptionsTest, PlanAndGlobalFlags) {
  auto o = Parse({"--json", "plan", "kv", "--model", "llama-3-8b", "--tp=4", "--kv-dtype", "fp8",
                  "--gpu-mem", "80GiB", "--reserve", "5%", "--nvml-lib", "/x"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_TRUE(o->cli.json);
  EXPECT_EQ(o->cli.command, "plan");
  ASSERT_EQ(o->cli.positional.size(), 1u);
  EXPECT_EQ(o->cli.positional[0], "kv");
  EXPECT_EQ(*o->model, "llama-3-8b");
  EXPECT_EQ(o->tp, 4);
  EXPECT_EQ(o->kv_dtype, DType::kFp8);
  EXPECT_EQ(*o->gpu_mem_bytes, 80ull << 30);
  EXPECT_DOUBLE_EQ(*o->reserve_fraction, 0.05);
  EXPECT_EQ(o->cli.overrides.size(), 1u);  // --nvml-lib goes to the settings
}

TEST(PlanOptionsTest, BatchingFlags) {
  auto o = Parse(
      {"plan",         "batching", "--rate",          "0.6",      "--requests",      "5000",
       "--seed",       "9",        "--prompt-tokens", "256:2048", "--output-tokens", "exp:256:2048",
       "--batch-size", "16",       "--max-wait",      "5",        "--params",        "70b",
       "--step-ms",    "7"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_DOUBLE_EQ(o->rate_per_s, 0.6);
  EXPECT_EQ(o->requests, 5000u);
  EXPECT_EQ(o->seed, 9u);
  EXPECT_EQ(o->prompt.hi, 2048u);
  EXPECT_TRUE(o->output.exponential);
  EXPECT_EQ(o->batch_size, 16u);
  EXPECT_DOUBLE_EQ(o->max_wait_s, 5);
  EXPECT_DOUBLE_EQ(*o->params, 70e9);
  EXPECT_DOUBLE_EQ(*o->step_ms, 7);
}

TEST(PlanOptionsTest, ErrorsNameFlagAndValue) {
  auto e = Parse({"plan", "kv", "--context", "-512"});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(),
            "flag --context: expected context tokens in [1, 10000000], got '-512'");
  EXPECT_NE(Parse({"plan", "kv", "--tp", "0"}).status().message().find("flag --tp"),
            std::string::npos);
  EXPECT_NE(Parse({"plan", "kv", "--kv-dtype", "int4"}).status().message().find("not KV"),
            std::string::npos);
  EXPECT_NE(Parse({"plan", "kv", "--params", "12"}).status().message().find("at least 1M"),
            std::string::npos);
  EXPECT_NE(Parse({"plan", "kv", "--rate", "0"}).status().message().find("flag --rate"),
            std::string::npos);
  EXPECT_NE(Parse({"plan", "kv", "--model"}).status().message().find("needs a value"),
            std::string::npos);
  EXPECT_NE(Parse({"plan", "kv", "--list-models=yes"}).status().message().find("takes no value"),
            std::string::npos);
  EXPECT_NE(Parse({"plan", "kv", "--frobnicate"}).status().message().find("unknown flag"),
            std::string::npos);
}

TEST(PlanOptionsTest, MoeAndRooflineFlags) {
  auto o = Parse({"plan", "batching", "--params", "46.7B", "--active-params", "12.9B", "--experts",
                  "8:2", "--weights-ms", "4.5", "--gpu-type", "h100-pcie"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_DOUBLE_EQ(*o->active_params, 12.9e9);
  EXPECT_EQ(o->experts->first, 8);
  EXPECT_EQ(o->experts->second, 2);
  EXPECT_DOUBLE_EQ(*o->weights_ms, 4.5);
  EXPECT_EQ(*o->gpu_type, "h100-pcie");
  for (const char* bad : {"8", "2:8", "8:0", "8:8", "x:2"}) {
    EXPECT_NE(
        Parse({"plan", "batching", "--experts", bad}).status().message().find("flag --experts"),
        std::string::npos)
        << bad;
  }
}

TEST(PlanOptionsTest, UsageListsEveryPlanFlag) {
  std::string usage = PlanUsageText();
  for (const auto& f : PlanFlagTable()) {
    EXPECT_NE(usage.find(std::string(f.name)), std::string::npos) << f.name;
  }
}

}  // namespace
}  // namespace gpudoctor::plan
