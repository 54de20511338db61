#include "config/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <set>

#include "core/strings.h"
#include "rules/thresholds.h"

namespace gpudoctor {
namespace {

using ::testing::HasSubstr;

TEST(ConfigTest, AppliesKnownKeysAndThresholds) {
  Settings s;
  auto r = ApplyConfigText(R"(
[check]
deadline_s = 3
sample_ms = 100
[probes]
cpu = false
[finding."host.disk.full"]
warn_used_pct = 80
enabled = false
)",
                           "test.toml", s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->warnings.empty());
  EXPECT_DOUBLE_EQ(s.deadline_s, 3);
  EXPECT_EQ(s.sample_ms, 100);
  EXPECT_FALSE(s.probe_enabled.at("cpu"));
  EXPECT_DOUBLE_EQ(Thresholds(s.thresholds).Get("host.disk.full", "warn_used_pct"), 80);
  EXPECT_DOUBLE_EQ(Thresholds(s.thresholds).Get("host.disk.full", "crit_used_pct"), 97);
  EXPECT_FALSE(s.thresholds.Enabled("host.disk.full"));
  EXPECT_TRUE(s.thresholds.Enabled("host.disk.inodes"));
}

TEST(ConfigTest, UnknownKeysAreWarningsWithLine) {
  Settings s;
  auto r =
      ApplyConfigText("[check]\nsample_ms = 100\ncolour = true\n[nonsense]\nx = 1\n", "f.toml", s);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->warnings.size(), 2u);
  EXPECT_THAT(r->warnings[0], HasSubstr("f.toml:3"));
  EXPECT_THAT(r->warnings[0], HasSubstr("check.colour"));
  EXPECT_THAT(r->warnings[1], HasSubstr("nonsense.x"));
  EXPECT_EQ(s.sample_ms, 100);
}

TEST(ConfigTest, BadValueNamesKeyAndLine) {
  Settings s;
  auto r = ApplyConfigText("# comment\n[check]\ndeadline_s = -2\n", "g.toml", s);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("g.toml:3"));
  EXPECT_THAT(r.status().message(), HasSubstr("check.deadline_s"));
}

TEST(ConfigTest, WrongTypeNamesExpectedType) {
  Settings s;
  auto r = ApplyConfigText("[probes]\ncpu = \"yes\"\n", "h.toml", s);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("h.toml:2"));
  EXPECT_THAT(r.status().message(), HasSubstr("boolean"));
}

TEST(ConfigTest, SyntaxErrorHasLineAndColumn) {
  Settings s;
  auto r = ApplyConfigText("[check]\ndeadline_s = = 3\n", "bad.toml", s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kParseError);
  EXPECT_THAT(r.status().message(), HasSubstr("bad.toml:2:"));
}

TEST(ConfigTest, IntegerAcceptedWhereNumberExpected) {
  Settings s;
  auto r = ApplyConfigText("[finding.\"host.cpu.saturated\"]\nwarn_busy_pct = 85.5\n", "x", s);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(Thresholds(s.thresholds).Get("host.cpu.saturated", "warn_busy_pct"), 85.5);
}

// Reading a config file looks each key up alone (FindSetting) instead of building the schema:
// every schema entry is found, equal to itself, and nothing else is.
TEST(ConfigTest, FindSettingFindsEveryKeyOfTheSchemaAsTheSchemaHasIt) {
  std::set<std::vector<std::string>> paths;
  for (const SettingSpec& spec : ConfigSchema()) {
    EXPECT_TRUE(paths.insert(spec.path).second) << DottedKey(spec.path) << " twice";
    std::optional<SettingSpec> found = FindSetting(spec.path);
    ASSERT_TRUE(found.has_value()) << DottedKey(spec.path);
    EXPECT_EQ(found->path, spec.path);
    EXPECT_EQ(found->type, spec.type) << DottedKey(spec.path);
    EXPECT_EQ(found->default_value, spec.default_value) << DottedKey(spec.path);
    EXPECT_EQ(found->help, spec.help) << DottedKey(spec.path);
    EXPECT_EQ(found->apply, spec.apply) << DottedKey(spec.path);
    EXPECT_EQ(found->arg1, spec.arg1) << DottedKey(spec.path);
    EXPECT_EQ(found->arg2, spec.arg2) << DottedKey(spec.path);
  }
  EXPECT_FALSE(FindSetting({"finding", "net.loss"}).has_value());  // a table, not a key
  EXPECT_FALSE(FindSetting({"finding", "no.such.finding", "enabled"}).has_value());
  EXPECT_FALSE(FindSetting({"finding", "net.loss", "no_such_threshold"}).has_value());
  EXPECT_FALSE(FindSetting({"probes", "no_such_probe"}).has_value());
  EXPECT_FALSE(FindSetting({"gpu"}).has_value());
  EXPECT_FALSE(FindSetting({}).has_value());
  EXPECT_TRUE(FindSetting({"probes", "nvml"}).has_value());
}

// The printed default file parses cleanly both as printed and with every key uncommented, and
// uncommenting yields exactly the defaults.
TEST(ConfigTest, DefaultFileRoundTrips) {
  std::string text = DefaultConfigText();
  Settings as_printed;
  auto r1 = ApplyConfigText(text, "default", as_printed);
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  EXPECT_TRUE(r1->warnings.empty());

  std::string uncommented;
  int keys = 0;
  for (auto line : SplitLines(text)) {
    std::string l(line);
    if (StartsWith(l, "# ") && l.find(" = ") != std::string::npos) {
      l = l.substr(2);
      ++keys;
    }
    uncommented += l + "\n";
  }
  EXPECT_EQ(keys, static_cast<int>(ConfigSchema().size()));
  Settings s;
  auto r2 = ApplyConfigText(uncommented, "uncommented", s);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_TRUE(r2->warnings.empty());
  Settings defaults;
  EXPECT_DOUBLE_EQ(s.deadline_s, defaults.deadline_s);
  EXPECT_EQ(s.sample_ms, defaults.sample_ms);
  EXPECT_EQ(s.fs.procfs(), defaults.fs.procfs());
  EXPECT_DOUBLE_EQ(Thresholds(s.thresholds).Get("host.disk.full", "crit_used_pct"), 97);
}

TEST(ConfigTest, DottedKeyQuotesSegmentsWithDots) {
  EXPECT_EQ(DottedKey({"finding", "host.disk.full", "warn_used_pct"}),
            "finding.\"host.disk.full\".warn_used_pct");
  EXPECT_EQ(DottedKey({"check", "deadline_s"}), "check.deadline_s");
}

}  // namespace
}  // namespace gpudoctor
