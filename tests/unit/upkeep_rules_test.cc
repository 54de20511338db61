// Upkeep rules (issue 8 items 10, 15, 16) on literal facts: inlet band, absolute GPU alarm,
// reboot pending, NVIDIA module vs kernels, driver branch end of life (time injected through
// Snapshot::time), stale and missing checkpoints.
#include <gtest/gtest.h>

#include "core/civil_time.h"
#include "finding_test_util.h"
#include "rules/driver_branches.h"
#include "rules/engine.h"

namespace gpudoctor {
namespace {

using testing::EvidenceOf;

std::chrono::system_clock::time_point At(int y, unsigned m, unsigned d) {
  return std::chrono::system_clock::time_point(
      std::chrono::seconds(DaysFromCivil(y, m, d) * 86400));
}

std::vector<Finding> Only(const Snapshot& s, std::string_view id,
                          const Thresholds& t = Thresholds()) {
  std::vector<Finding> out;
  for (auto& f : EvaluateRules(s, t)) {
    if (f.id == id) out.push_back(f);
  }
  return out;
}

Snapshot WithSensors(std::vector<TemperatureSensor> sensors) {
  Snapshot s;
  s.host.thermal = ThermalFacts{};
  s.host.thermal->sensors = std::move(sensors);
  return s;
}

TEST(InletRuleTest, GradesAgainstTheBand) {
  auto sev = [](double c, SensorKind kind = SensorKind::kInlet) -> std::string {
    auto f = Only(WithSensors({{"Inlet Temp", "ipmi", "", kind, c}}), "host.inlet.temperature");
    return f.empty() ? "none" : SeverityName(f[0].severity);
  };
  EXPECT_EQ(sev(21), "none");
  EXPECT_EQ(sev(25), "none");
  EXPECT_EQ(sev(27), "warn");
  EXPECT_EQ(sev(14), "warn");
  EXPECT_EQ(sev(36), "crit");
  EXPECT_EQ(sev(8), "crit");
  EXPECT_EQ(sev(45, SensorKind::kBoard), "none") << "board sensors are not room air";
}

TEST(InletRuleTest, EvidenceNamesSensorSourceValueAndBand) {
  auto f = Only(WithSensors({{"Ambient", "hwmon", "nct6798/temp2", SensorKind::kInlet, 29.5},
                             {"Inlet Temp", "ipmi", "", SensorKind::kInlet, std::nullopt}}),
                "host.inlet.temperature");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(EvidenceOf<std::string>(f[0], "sensor"), "Ambient");
  EXPECT_EQ(EvidenceOf<std::string>(f[0], "source"), "hwmon");
  EXPECT_EQ(EvidenceOf<double>(f[0], "temp_c"), 29.5);
  EXPECT_EQ(EvidenceOf<double>(f[0], "band_low_c"), 16.0);
  EXPECT_EQ(EvidenceOf<double>(f[0], "band_high_c"), 25.0);
  EXPECT_NE(f[0].summary.find("above"), std::string::npos);
}

TEST(InletRuleTest, ConfiguredBand) {
  ThresholdOverrides o;
  o.Set("host.inlet.temperature", "warn_high_c", 30);
  auto f = Only(WithSensors({{"Inlet", "ipmi", "", SensorKind::kInlet, 29}}),
                "host.inlet.temperature", Thresholds(o));
  EXPECT_TRUE(f.empty());
}

TEST(GpuTempAlarmTest, OffByDefaultAndFiresAtTheConfiguredValue) {
  Snapshot s;
  GpuFacts g;
  g.index = 3;
  g.temp_c = 81;
  g.serial = "1650";
  s.gpu.gpus = {g};
  EXPECT_TRUE(Only(s, "gpu.temp.absolute").empty());
  ThresholdOverrides o;
  o.Set("gpu.temp.absolute", "alarm_c", 80);
  auto f = Only(s, "gpu.temp.absolute", Thresholds(o));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kWarn);
  ASSERT_TRUE(f[0].gpu);
  EXPECT_EQ(f[0].gpu->index, 3);
  EXPECT_EQ(EvidenceOf<int64_t>(f[0], "temp_c"), 81);
  o.Set("gpu.temp.absolute", "alarm_c", 82);
  EXPECT_TRUE(Only(s, "gpu.temp.absolute", Thresholds(o)).empty());
}

InstalledKernel K(std::string v, std::string module = "", bool image = true) {
  InstalledKernel k;
  k.version = std::move(v);
  k.has_image = image;
  k.has_modules_dir = true;
  k.nvidia_module = std::move(module);
  return k;
}

Snapshot WithBoot(std::string running, std::vector<InstalledKernel> kernels,
                  std::optional<bool> loaded = true) {
  Snapshot s;
  s.host.boot = BootFacts{};
  s.host.boot->running_kernel = std::move(running);
  s.host.boot->kernels = std::move(kernels);
  s.host.boot->nvidia_loaded = loaded;
  return s;
}

TEST(RebootPendingTest, NewerKernelOfTheSameFlavour) {
  auto s = WithBoot("6.1.0-9-amd64", {K("6.1.0-9-amd64", "/m"), K("6.1.0-27-amd64", "/m")});
  auto f = Only(s, "host.reboot.pending");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_EQ(EvidenceOf<std::string>(f[0], "newest_kernel"), "6.1.0-27-amd64");
  EXPECT_EQ(EvidenceOf<std::string>(f[0], "running_kernel"), "6.1.0-9-amd64");
  // Running the newest, or a newer kernel of another flavour only: nothing pending.
  EXPECT_TRUE(Only(WithBoot("6.1.0-27-amd64", {K("6.1.0-9-amd64"), K("6.1.0-27-amd64")}),
                   "host.reboot.pending")
                  .empty());
  EXPECT_TRUE(Only(WithBoot("6.8.0-40-generic", {K("6.8.0-40-generic"), K("6.8.0-45-lowlatency")}),
                   "host.reboot.pending")
                  .empty());
}

TEST(RebootPendingTest, DistributionFlag) {
  auto s = WithBoot("6.8.0-45-generic", {K("6.8.0-45-generic")});
  s.host.boot->reboot_required_flag = true;
  s.host.boot->reboot_required_pkgs = {"libc6", "dbus"};
  auto f = Only(s, "host.reboot.pending");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(EvidenceOf<std::string>(f[0], "packages"), "libc6,dbus");
}

TEST(ModuleMismatchTest, NextBootKernelLacksTheModule) {
  auto s = WithBoot("6.1.0-9-amd64",
                    {K("6.1.0-9-amd64", "/lib/modules/6.1.0-9-amd64/updates/dkms/nvidia.ko"),
                     K("6.1.0-27-amd64")});
  auto f = Only(s, "driver.module.kernel_mismatch");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kWarn);
  EXPECT_NE(f[0].summary.find("will not load"), std::string::npos);
  EXPECT_EQ(EvidenceOf<std::string>(f[0], "next_kernel"), "6.1.0-27-amd64");
}

TEST(ModuleMismatchTest, RunningKernelLacksTheModuleAndDriverNotLoaded) {
  auto s = WithBoot("6.1.0-27-amd64", {K("6.1.0-9-amd64", "/m9"), K("6.1.0-27-amd64")}, false);
  auto f = Only(s, "driver.module.kernel_mismatch");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kCrit);
  EXPECT_EQ(EvidenceOf<std::string>(f[0], "kernels_with_module"), "6.1.0-9-amd64");
}

TEST(ModuleMismatchTest, NoFalseAlarms) {
  // Loaded driver from a place we do not search: nothing.
  EXPECT_TRUE(Only(WithBoot("6.1.0-27-amd64", {K("6.1.0-9-amd64", "/m9"), K("6.1.0-27-amd64")}),
                   "driver.module.kernel_mismatch")
                  .empty());
  // No NVIDIA module anywhere (not an NVIDIA host, or a container's root): nothing.
  EXPECT_TRUE(Only(WithBoot("6.1.0-9-amd64", {K("6.1.0-9-amd64"), K("6.1.0-27-amd64")}, false),
                   "driver.module.kernel_mismatch")
                  .empty());
  // Both kernels have it.
  EXPECT_TRUE(Only(WithBoot("6.1.0-9-amd64", {K("6.1.0-9-amd64", "/a"), K("6.1.0-27-amd64", "/b")}),
                   "driver.module.kernel_mismatch")
                  .empty());
}

Snapshot WithDriver(std::string version, std::chrono::system_clock::time_point now) {
  Snapshot s;
  s.time = now;
  s.gpu.driver.driver_version = std::move(version);
  return s;
}

TEST(DriverBranchTest, TableLookups) {
  EXPECT_EQ(DriverBranchOf("550.54.15"), 550);
  EXPECT_EQ(DriverBranchOf("1010.2"), 1010);
  EXPECT_FALSE(DriverBranchOf("garbage"));
  EXPECT_FALSE(DriverBranchOf("55.1"));
  auto r535 = FindDriverBranch(535);
  ASSERT_TRUE(r535);
  EXPECT_EQ(r535->type, BranchType::kLongTermSupport);
  EXPECT_EQ(EndOfLifeText(*r535), "June 2026");
  EXPECT_EQ(EndOfLifeUnixS(*r535), DaysFromCivil(2026, 7, 1) * 86400);
}

TEST(DriverBranchTest, PastEndOfLifeWarnsNearItInformsBeforeNothing) {
  auto f = Only(WithDriver("535.216.03", At(2026, 12, 3)), "driver.branch.eol");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kWarn);
  EXPECT_NE(f[0].summary.find("no security fixes since June 2026"), std::string::npos)
      << f[0].summary;
  EXPECT_EQ(EvidenceOf<std::string>(f[0], "branch_type"), "LTSB");

  f = Only(WithDriver("535.216.03", At(2026, 5, 1)), "driver.branch.eol");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_EQ(EvidenceOf<int64_t>(f[0], "days_to_end_of_life"), 61);

  EXPECT_TRUE(Only(WithDriver("535.216.03", At(2026, 3, 1)), "driver.branch.eol").empty());
  EXPECT_TRUE(Only(WithDriver("580.95.05", At(2026, 12, 3)), "driver.branch.eol").empty());
}

TEST(DriverBranchTest, UnknownBranchesAndUnknownTimeAreNotJudged) {
  EXPECT_TRUE(Only(WithDriver("999.1.1", At(2026, 12, 3)), "driver.branch.eol").empty());
  EXPECT_TRUE(Only(WithDriver("560.35.03", At(2030, 1, 1)), "driver.branch.eol").empty())
      << "new feature branches have no published end of life";
  EXPECT_TRUE(Only(WithDriver("535.216.03", {}), "driver.branch.eol").empty());
}

TEST(DriverBranchTest, KernelModuleVersionWhenNvmlGaveNone) {
  Snapshot s = WithDriver("", At(2026, 12, 3));
  s.gpu.driver.kernel_module_version = "470.256.02";
  auto f = Only(s, "driver.branch.eol");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(EvidenceOf<std::string>(f[0], "branch"), "R470");
}

Snapshot WithBackups(std::vector<BackupPattern> patterns, int64_t now_s) {
  Snapshot s;
  s.time = std::chrono::system_clock::time_point(std::chrono::seconds(now_s));
  s.host.backups = BackupFacts{std::move(patterns)};
  return s;
}

BackupPattern Pattern(std::string pattern, int matched, std::optional<int64_t> mtime) {
  BackupPattern p;
  p.pattern = std::move(pattern);
  p.matched = matched;
  p.newest_mtime_unix_s = mtime;
  if (mtime) p.newest_path = "/data/ckpt/newest.pt";
  return p;
}

TEST(BackupRuleTest, StaleFreshAndMissing) {
  const int64_t now = 1800000000;
  auto s =
      WithBackups({Pattern("/data/ckpt/*.pt", 12, now - 30 * 3600),
                   Pattern("/data/fresh/*.pt", 3, now - 3600), Pattern("/data/typo/*.pt", 0, {})},
                  now);
  auto stale = Only(s, "host.backup.stale");
  ASSERT_EQ(stale.size(), 1u);
  EXPECT_EQ(stale[0].subject, "/data/ckpt/*.pt");
  EXPECT_EQ(EvidenceOf<double>(stale[0], "age_h"), 30.0);
  EXPECT_EQ(EvidenceOf<std::string>(stale[0], "newest_path"), "/data/ckpt/newest.pt");
  EXPECT_NE(stale[0].summary.find("loses 30 hours of training"), std::string::npos);
  auto none = Only(s, "host.backup.none");
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].subject, "/data/typo/*.pt");

  ThresholdOverrides o;
  o.Set("host.backup.stale", "max_age_h", 48);
  EXPECT_TRUE(Only(s, "host.backup.stale", Thresholds(o)).empty());
}

// The stale backup's age in evidence moves in 0.1 h steps, as the summary prints it: `watch`
// rewrites an open finding's whole stored row when its evidence changes, and an age to the second
// changed it every tick.
TEST(BackupRuleTest, StaleAgeInEvidenceStaysTheSameFromSecondToSecond) {
  const int64_t mtime = 1800000000;
  auto at = [&](int64_t now) {
    auto stale =
        Only(WithBackups({Pattern("/data/ckpt/*.pt", 12, mtime)}, now), "host.backup.stale");
    EXPECT_EQ(stale.size(), 1u);
    return stale.empty() ? Finding() : stale[0];
  };
  const int64_t base = mtime + 30 * 3600 + 10;  // 30.003 h
  Finding first = at(base);
  EXPECT_EQ(EvidenceOf<double>(first, "age_h"), 30.0);
  for (int64_t s = 1; s <= 120; ++s) {
    Finding later = at(base + s);
    ASSERT_EQ(later.evidence, first.evidence) << "after " << s << " s";
    ASSERT_EQ(later.summary, first.summary) << "after " << s << " s";
  }
  EXPECT_EQ(EvidenceOf<double>(at(base + 360), "age_h"), 30.1);  // 6 minutes on
}

// A walk cut short before any match proves nothing either way: it is said (not silence, which
// would read as "backups fine"), as a pattern that could not be checked.
TEST(BackupRuleTest, TruncatedWalkWithoutMatchSaysItCouldNotCheck) {
  BackupPattern p = Pattern("/huge/*.pt", 0, {});
  p.truncated = true;
  auto none = Only(WithBackups({p}, 1800000000), "host.backup.none");
  ASSERT_EQ(none.size(), 1u);
  EXPECT_NE(none[0].summary.find("could not be checked"), std::string::npos) << none[0].summary;
  EXPECT_TRUE(EvidenceOf<bool>(none[0], "scan_truncated"));
}

}  // namespace
}  // namespace gpudoctor
