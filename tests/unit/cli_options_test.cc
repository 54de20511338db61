#include "cli/cli_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "cli/flag_scopes.h"

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

TEST(CliFlagsTest, EveryFlagHasAScopeOfRealCommands) {
  std::set<std::string_view> commands;
  for (std::string_view c : CommandNames()) commands.insert(c);
  for (const auto& f : FlagTable()) {
    auto scope = FlagCommands(f.name);
    ASSERT_TRUE(scope) << f.name << " has no entry in cli/flag_scopes.cc";
    if (*scope == "*") continue;
    std::istringstream words{std::string(*scope)};
    for (std::string c; words >> c;) EXPECT_TRUE(commands.count(c)) << f.name << ": " << c;
  }
}

// `check --ticks 5 --for 2h --reports /tmp` used to exit 0 having ignored all three.
TEST(CliFlagsTest, AFlagOfAnotherCommandIsRefusedNamingIt) {
  auto a = Parse({"check", "--ticks", "5"});
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("--ticks is not a flag of `check`"));
  EXPECT_THAT(a.status().message(), HasSubstr("watch"));
  auto b = Parse({"history", "--db", "/tmp/h.db", "--reports", "/tmp"});
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(), HasSubstr("--reports"));
  auto c = Parse({"--listen", "127.0.0.1:0", "fleet"});  // flags before the command count too
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("--listen"));
  EXPECT_TRUE(Parse({"watch", "--ticks", "5", "--listen", "off"}).ok());
  EXPECT_TRUE(Parse({"top", "--interval", "2", "--json"}).ok());  // global flags everywhere
  EXPECT_TRUE(Parse({"fleet", "--help"}).ok());
}

TEST(CliFlagsTest, CommandHelpListsOnlyItsFlagsAndUsageEveryCommand) {
  std::string watch = CommandUsageText("watch");
  EXPECT_THAT(watch, HasSubstr("--listen"));
  EXPECT_THAT(watch, HasSubstr("--config"));
  EXPECT_THAT(watch, ::testing::Not(HasSubstr("--reports")));
  std::string usage = UsageText();
  for (std::string_view c : CommandNames()) {
    EXPECT_THAT(usage, HasSubstr("  " + std::string(c) + " ")) << c;
  }
}

// The README's flag table and the flag table agree both ways.
TEST(CliFlagsTest, ReadmeTableMatchesTheFlagTable) {
  std::ifstream in(std::string(GPUDOCTOR_SOURCE_DIR) + "/README.md");
  std::string line, table;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line == "### Flags")
      inside = true;
    else if (inside && line.rfind("### ", 0) == 0)
      break;
    else if (inside && line.rfind("| `", 0) == 0)
      table += line.substr(0, line.find(" | ", 2)) + "\n";
  }
  ASSERT_FALSE(table.empty());
  std::set<std::string> in_readme;
  std::regex flag_re("`(--?[a-z][a-z.-]*)");
  for (std::sregex_iterator it(table.begin(), table.end(), flag_re), end; it != end; ++it) {
    in_readme.insert((*it)[1]);
  }
  std::set<std::string> in_table;
  for (const auto& f : FlagTable()) in_table.insert(std::string(f.name));
  for (const auto& f : in_table) EXPECT_TRUE(in_readme.count(f)) << f << " missing in README";
  for (const auto& f : in_readme) EXPECT_TRUE(in_table.count(f)) << f << " in README, no such flag";
}

}  // namespace
}  // namespace gpudoctor
