#include "cli/cli_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpudoctor {
namespace {

using ::testing::HasSubstr;

Result<CliOptions> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "gpudoctor");
  return ParseCommandLine(static_cast<int>(args.size()), args.data());
}

TEST(CliOptionsTest, CommandFlagsAndOverrides) {
  auto o =
      Parse({"check", "--json", "--deadline=2.5", "--sample-ms", "50", "--path.procfs", "/tmp/p"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->command, "check");
  EXPECT_TRUE(o->json);
  Settings s;
  for (auto& f : o->overrides) f(s);
  EXPECT_DOUBLE_EQ(s.deadline_s, 2.5);
  EXPECT_EQ(s.sample_ms, 50);
  EXPECT_EQ(s.fs.procfs(), "/tmp/p");
  EXPECT_EQ(s.fs.sysfs(), "/sys");
}

TEST(CliOptionsTest, RejectsUnknownFlagAndMissingValue) {
  auto a = Parse({"check", "--frobnicate"});
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("--frobnicate"));
  auto b = Parse({"check", "--deadline"});
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(), HasSubstr("needs a value"));
  auto c = Parse({"check", "--json=yes"});
  ASSERT_FALSE(c.ok());
  auto d = Parse({"check", "--deadline", "0"});
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr("--deadline"));
  auto e = Parse({"check", "--color", "purple"});
  ASSERT_FALSE(e.ok());
}

TEST(CliOptionsTest, SwitchesAndPositionals) {
  auto o = Parse({"explain", "host.disk.full", "--markdown"});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->command, "explain");
  ASSERT_EQ(o->positional.size(), 1u);
  EXPECT_EQ(o->positional[0], "host.disk.full");
  EXPECT_TRUE(o->Has("--markdown"));
  EXPECT_FALSE(o->Has("--list"));
}

TEST(CliOptionsTest, UsageListsEveryFlag) {
  std::string usage = UsageText();
  for (const auto& f : FlagTable()) EXPECT_THAT(usage, HasSubstr(std::string(f.name)));
}

}  // namespace
}  // namespace gpudoctor
