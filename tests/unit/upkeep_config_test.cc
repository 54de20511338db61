// Config keys of the upkeep probes and rules (issue 8 items 10, 16): [gpu] temp_alarm_c,
// [thermal] ipmitool / ipmitool_timeout_s, [backup] paths / max_age_h.
#include <gtest/gtest.h>

#include "config/config.h"
#include "rules/thresholds.h"

namespace gpudoctor {
namespace {

TEST(UpkeepConfigTest, KeysReachSettingsAndThresholds) {
  Settings s;
  EXPECT_EQ(Thresholds(s.thresholds).Get("gpu.temp.absolute", "alarm_c"), 0) << "off by default";
  EXPECT_EQ(s.thermal_ipmitool, "ipmitool");
  auto r = ApplyConfigText(
      "[gpu]\ntemp_alarm_c = 83\n[thermal]\nipmitool = \"\"\nipmitool_timeout_s = 2.5\n"
      "[backup]\npaths = [\"/data/ckpt/*.pt\", \"/data/runs/*/checkpoint-*\"]\nmax_age_h = 6\n",
      "u.toml", s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->warnings.empty());
  Thresholds t(s.thresholds);
  EXPECT_EQ(t.Get("gpu.temp.absolute", "alarm_c"), 83);
  EXPECT_EQ(t.Get("host.backup.stale", "max_age_h"), 6);
  EXPECT_EQ(s.thermal_ipmitool, "");
  EXPECT_EQ(s.thermal_ipmitool_timeout_s, 2.5);
  ASSERT_EQ(s.backup_paths.size(), 2u);
  EXPECT_EQ(s.backup_paths[1], "/data/runs/*/checkpoint-*");
}

TEST(UpkeepConfigTest, BadValuesNameKeyAndLine) {
  for (const char* text : {"[backup]\npaths = [\"data/*.pt\"]\n",
                           "[backup]\npaths = [\"/a/../etc/*\"]\n", "[backup]\nmax_age_h = 0\n",
                           "[gpu]\ntemp_alarm_c = 500\n", "[thermal]\nipmitool_timeout_s = 0\n"}) {
    Settings s;
    auto r = ApplyConfigText(text, "bad.toml", s);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find("bad.toml:2"), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace gpudoctor
