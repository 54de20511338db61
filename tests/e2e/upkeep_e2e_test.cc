// End-to-end: the built binary on the upkeep-warm-room fixture (tests/fixtures/hosts/
// generate_upkeep.py) with the thermal, boot and backup probes: hwmon and a fake ipmitool (set
// through [thermal] ipmitool), a newer kernel without the NVIDIA module, and checkpoint files
// whose ages this test sets relative to now (utimensat).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <ctime>
#include <nlohmann/json.hpp>

#include "host_fixture.h"
#include "test_util.h"

namespace gpudoctor::testing {
namespace {

void SetAge(const std::string& path, int64_t age_s) {
  int64_t t = static_cast<int64_t>(std::time(nullptr)) - age_s;
  struct timespec ts[2] = {{t, 0}, {t, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), ts, 0), 0) << path;
}

std::vector<nlohmann::json> FindingsOf(const nlohmann::json& report, const std::string& id) {
  std::vector<nlohmann::json> out;
  for (const auto& f : report["findings"]) {
    if (f["id"] == id) out.push_back(f);
  }
  return out;
}

TEST(UpkeepE2eTest, WarmRoomPendingRebootWithoutModuleAndStaleCheckpoint) {
  HostFixture fx("upkeep-warm-room");
  fx.Write("root/data/ckpt/step_1000.pt", "x");
  fx.Write("root/data/ckpt/step_2000.pt", "x");
  SetAge(fx.root() + "/data/ckpt/step_1000.pt", 40 * 3600);
  SetAge(fx.root() + "/data/ckpt/step_2000.pt", 30 * 3600);
  fx.Write("gpudoctor.toml",
           "[thermal]\nipmitool = \"" + fx.path("bin/ipmitool") +
               "\"\n[backup]\npaths = [\"/data/ckpt/*.pt\", \"/data/typo/*.ckpt\"]\n"
               "max_age_h = 24\n[gpu]\ntemp_alarm_c = 80\n");
  std::vector<std::string> args = {
      "check", "--json", "--probes", "thermal,boot,backup", "--config", fx.path("gpudoctor.toml")};
  for (const auto& f : fx.PathFlags()) args.push_back(f);
  RunResult r = RunGpudoctor(args, std::chrono::seconds(20));
  auto report = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << r.out << r.err;
  EXPECT_EQ(r.exit_code, 2) << report.dump(2);
  for (const auto& p : report["probes"]) EXPECT_EQ(p["status"], "ok") << p.dump();

  auto inlet = FindingsOf(report, "host.inlet.temperature");
  ASSERT_EQ(inlet.size(), 2u) << report.dump(2);
  if (inlet[0]["evidence"]["source"] != "hwmon") std::swap(inlet[0], inlet[1]);
  EXPECT_EQ(inlet[0]["severity"], "warn");
  EXPECT_EQ(inlet[0]["evidence"]["sensor"], "Ambient");
  EXPECT_EQ(inlet[0]["evidence"]["source"], "hwmon");
  EXPECT_EQ(inlet[0]["evidence"]["temp_c"], 29.0);
  EXPECT_EQ(inlet[1]["severity"], "crit");
  EXPECT_EQ(inlet[1]["evidence"]["source"], "ipmi");
  EXPECT_EQ(inlet[1]["evidence"]["temp_c"], 36.0);

  auto reboot = FindingsOf(report, "host.reboot.pending");
  ASSERT_EQ(reboot.size(), 1u);
  EXPECT_EQ(reboot[0]["severity"], "info");
  EXPECT_EQ(reboot[0]["evidence"]["newest_kernel"], "6.1.0-27-amd64");
  auto module = FindingsOf(report, "driver.module.kernel_mismatch");
  ASSERT_EQ(module.size(), 1u);
  EXPECT_EQ(module[0]["evidence"]["next_kernel"], "6.1.0-27-amd64");
  EXPECT_EQ(module[0]["evidence"]["running_module"],
            "/lib/modules/6.1.0-9-amd64/updates/dkms/nvidia-current.ko");

  auto stale = FindingsOf(report, "host.backup.stale");
  ASSERT_EQ(stale.size(), 1u);
  EXPECT_EQ(stale[0]["evidence"]["newest_path"], "/data/ckpt/step_2000.pt");
  double age = stale[0]["evidence"]["age_h"];
  EXPECT_NEAR(age, 30.0, 0.1);
  auto none = FindingsOf(report, "host.backup.none");
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0]["evidence"]["pattern"], "/data/typo/*.ckpt");
}

TEST(UpkeepE2eTest, FreshCheckpointAndDisabledIpmitoolAreQuiet) {
  HostFixture fx("upkeep-warm-room");
  fx.Write("root/data/ckpt/step_3000.pt", "x");
  SetAge(fx.root() + "/data/ckpt/step_3000.pt", 3600);
  fx.Write("gpudoctor.toml",
           "[thermal]\nipmitool = \"\"\n[backup]\npaths = [\"/data/ckpt/*.pt\"]\n"
           "[finding.\"host.inlet.temperature\"]\nwarn_high_c = 30\n");
  std::vector<std::string> args = {"check",          "--json",   "--probes",
                                   "thermal,backup", "--config", fx.path("gpudoctor.toml")};
  for (const auto& f : fx.PathFlags()) args.push_back(f);
  RunResult r = RunGpudoctor(args, std::chrono::seconds(20));
  auto report = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << r.out << r.err;
  EXPECT_TRUE(report["findings"].empty()) << report.dump(2);
  EXPECT_EQ(r.exit_code, 0);
}

}  // namespace
}  // namespace gpudoctor::testing
