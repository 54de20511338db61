// Upkeep probes (thermal, boot, backup; issue 8 items 10, 15, 16) and the glob walker on small
// trees built per test, plus the fake ipmitool path of the thermal probe.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <ctime>

#include "core/path_glob.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"
#include "test_util.h"

namespace gpudoctor {

namespace {

using testing::TempDir;

struct Tree {
  TempDir dir;
  RootFs fs() const {
    return RootFs(dir.path() + "/proc", dir.path() + "/sys", dir.path() + "/root");
  }
};

ProbeContext Context(const Tree& t, std::shared_ptr<Settings> settings = nullptr) {
  if (!settings) settings = std::make_shared<Settings>();
  settings->fs = t.fs();
  return ProbeContext{settings, SteadyClock::now() + std::chrono::seconds(10)};
}

Snapshot Apply(const ProbeOutput& out) {
  Snapshot s;
  if (out.apply) out.apply(s);
  return s;
}

void SetMtime(const std::string& path, int64_t unix_s) {
  struct timespec ts[2] = {{unix_s, 0}, {unix_s, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), ts, 0), 0) << path;
}

void AddHwmon(const Tree& t, const std::string& chip, const std::string& name,
              const std::vector<std::pair<std::string, std::string>>& label_and_milli) {
  std::string d = "sys/class/hwmon/" + chip + "/";
  t.dir.Write(d + "name", name + "\n");
  int i = 1;
  for (const auto& [label, milli] : label_and_milli) {
    std::string stem = d + "temp" + std::to_string(i++);
    if (!label.empty()) t.dir.Write(stem + "_label", label + "\n");
    t.dir.Write(stem + "_input", milli + "\n");
  }
}

TEST(ThermalProbeTest, KeepsLabelledInletAndBoardSensorsOnly) {
  Tree t;
  AddHwmon(t, "hwmon0", "coretemp", {{"Package id 0", "55000"}, {"Core 0", "50000"}});
  AddHwmon(t, "hwmon1", "nct6798", {{"SYSTIN", "30000"}, {"Ambient", "27500"}, {"", "20000"}});
  AddHwmon(t, "hwmon2", "ipmi_board", {{"Board Temp", "41000"}, {"Inlet Temp", "300000"}});
  ProbeOutput out = RunThermalProbe(Context(t));
  ASSERT_EQ(out.state, ProbeState::kOk) << out.reason;
  Snapshot s = Apply(out);
  ASSERT_TRUE(s.host.thermal);
  const auto& sensors = s.host.thermal->sensors;
  ASSERT_EQ(sensors.size(), 3u);
  EXPECT_EQ(sensors[0].name, "Ambient");
  EXPECT_EQ(sensors[0].source, "hwmon");
  EXPECT_EQ(sensors[0].chip, "nct6798/temp2");
  EXPECT_EQ(sensors[0].temp_c, 27.5);
  EXPECT_EQ(sensors[0].kind, SensorKind::kInlet);
  EXPECT_EQ(sensors[1].kind, SensorKind::kBoard);
  EXPECT_FALSE(sensors[2].temp_c) << "300 C is an implausible reading, kept as no reading";
  EXPECT_FALSE(s.host.thermal->ipmi_ran);
  EXPECT_NE(s.host.thermal->ipmi_note.find("another root"), std::string::npos);
}

TEST(ThermalProbeTest, NoSensorsIsSkipped) {
  Tree t;
  AddHwmon(t, "hwmon0", "coretemp", {{"Package id 0", "55000"}});
  ProbeOutput out = RunThermalProbe(Context(t));
  EXPECT_EQ(out.state, ProbeState::kSkipped);
  EXPECT_NE(out.reason.find("no inlet"), std::string::npos);
}

TEST(ThermalProbeTest, RunsAConfiguredIpmitoolAndParsesIt) {
  Tree t;
  t.dir.Write("root/dev/ipmi0", "");
  t.dir.Write("bin/ipmitool",
              "#!/bin/sh\n"
              "[ \"$1 $2 $3\" = \"sdr type Temperature\" ] || exit 3\n"
              "echo 'Inlet Temp       | 04h | ok  |  7.1 | 23 degrees C'\n"
              "echo 'Exhaust Temp     | 01h | ok  |  7.1 | 35 degrees C'\n");
  chmod((t.dir.path() + "/bin/ipmitool").c_str(), 0755);
  auto settings = std::make_shared<Settings>();
  settings->thermal_ipmitool = t.dir.path() + "/bin/ipmitool";
  Snapshot s = Apply(RunThermalProbe(Context(t, settings)));
  ASSERT_TRUE(s.host.thermal);
  EXPECT_TRUE(s.host.thermal->ipmi_ran) << s.host.thermal->ipmi_note;
  ASSERT_EQ(s.host.thermal->sensors.size(), 1u);
  EXPECT_EQ(s.host.thermal->sensors[0].source, "ipmi");
  EXPECT_EQ(s.host.thermal->sensors[0].temp_c, 23.0);
}

TEST(ThermalProbeTest, KillsAHangingIpmitoolAtItsTimeout) {
  Tree t;
  t.dir.Write("root/dev/ipmi0", "");
  t.dir.Write("bin/ipmitool", "#!/bin/sh\nexec sleep 30\n");
  chmod((t.dir.path() + "/bin/ipmitool").c_str(), 0755);
  auto settings = std::make_shared<Settings>();
  settings->thermal_ipmitool = t.dir.path() + "/bin/ipmitool";
  settings->thermal_ipmitool_timeout_s = 0.3;
  auto start = SteadyClock::now();
  ProbeOutput out = RunThermalProbe(Context(t, settings));
  EXPECT_LT(SteadyClock::now() - start, std::chrono::seconds(3));
  EXPECT_EQ(out.state, ProbeState::kSkipped);
  EXPECT_NE(out.reason.find("did not finish"), std::string::npos) << out.reason;
}

TEST(ThermalProbeTest, NoBmcDeviceMeansNoIpmitool) {
  Tree t;
  auto settings = std::make_shared<Settings>();
  settings->thermal_ipmitool = "/bin/false";
  ProbeOutput out = RunThermalProbe(Context(t, settings));
  EXPECT_EQ(out.state, ProbeState::kSkipped);
  EXPECT_NE(out.reason.find("no BMC device"), std::string::npos) << out.reason;
}

void AddKernel(const Tree& t, const std::string& v, bool image, bool modules,
               const std::string& nvidia_rel = "") {
  if (image) t.dir.Write("root/boot/vmlinuz-" + v, "");
  if (modules) t.dir.Write("root/lib/modules/" + v + "/modules.dep", "");
  if (!nvidia_rel.empty()) t.dir.Write("root/lib/modules/" + v + "/" + nvidia_rel, "");
}

TEST(BootProbeTest, FindsKernelsModulesAndRebootFlag) {
  Tree t;
  t.dir.Write("proc/sys/kernel/osrelease", "6.1.0-9-amd64\n");
  t.dir.Write("proc/modules", "nvidia_uvm 1 0 - Live 0x0\nnvidia 2 1 nvidia_uvm, Live 0x0\n");
  AddKernel(t, "6.1.0-9-amd64", true, true, "updates/dkms/nvidia-current.ko.xz");
  AddKernel(t, "6.1.0-27-amd64", true, true);
  AddKernel(t, "6.1.0-10-amd64", false, false, "updates/dkms/nvidia.ko");  // leftover dir
  AddKernel(t, "5.10.0-30-amd64", false, true, "kernel/drivers/video/nvidia.ko");
  t.dir.Write("root/boot/vmlinuz-0-rescue-abc", "");
  t.dir.Write("root/run/reboot-required", "*** System restart required ***\n");
  t.dir.Write("root/run/reboot-required.pkgs", "linux-image-6.1.0-27-amd64\n");
  ProbeOutput out = RunBootProbe(Context(t));
  ASSERT_EQ(out.state, ProbeState::kOk) << out.reason;
  Snapshot s = Apply(out);
  ASSERT_TRUE(s.host.boot);
  const BootFacts& b = *s.host.boot;
  EXPECT_EQ(b.running_kernel, "6.1.0-9-amd64");
  ASSERT_EQ(b.kernels.size(), 3u) << "the leftover DKMS directory is no installed kernel";
  EXPECT_EQ(b.kernels[0].version, "5.10.0-30-amd64");
  EXPECT_EQ(b.kernels[0].nvidia_module,
            "/lib/modules/5.10.0-30-amd64/kernel/drivers/video/nvidia.ko");
  EXPECT_EQ(b.kernels[1].version, "6.1.0-9-amd64");
  EXPECT_EQ(b.kernels[1].nvidia_module,
            "/lib/modules/6.1.0-9-amd64/updates/dkms/nvidia-current.ko.xz");
  EXPECT_EQ(b.kernels[2].version, "6.1.0-27-amd64");
  EXPECT_TRUE(b.kernels[2].has_image);
  EXPECT_TRUE(b.kernels[2].nvidia_module.empty());
  EXPECT_EQ(b.reboot_required_flag, true);
  ASSERT_EQ(b.reboot_required_pkgs.size(), 1u);
  EXPECT_EQ(b.nvidia_loaded, true);
}

TEST(BootProbeTest, UbuntuSignedModulePackageLayout) {
  Tree t;
  t.dir.Write("proc/sys/kernel/osrelease", "6.8.0-45-generic\n");
  t.dir.Write("proc/modules", "ext4 1 0 - Live 0x0\n");
  AddKernel(t, "6.8.0-45-generic", true, true, "kernel/nvidia-550srv/nvidia.ko");
  Snapshot s = Apply(RunBootProbe(Context(t)));
  ASSERT_TRUE(s.host.boot);
  ASSERT_EQ(s.host.boot->kernels.size(), 1u);
  EXPECT_EQ(s.host.boot->kernels[0].nvidia_module,
            "/lib/modules/6.8.0-45-generic/kernel/nvidia-550srv/nvidia.ko");
  EXPECT_EQ(s.host.boot->nvidia_loaded, false);
  EXPECT_FALSE(s.host.boot->reboot_required_flag.value_or(false));
}

TEST(BootProbeTest, NoOsreleaseIsSkipped) {
  Tree t;
  EXPECT_EQ(RunBootProbe(Context(t)).state, ProbeState::kSkipped);
}

TEST(BackupProbeTest, NewestMatchPerPatternAndMisses) {
  Tree t;
  int64_t now = std::time(nullptr);
  t.dir.Write("root/data/ckpt/step_100.pt", "x");
  t.dir.Write("root/data/ckpt/step_200.pt", "x");
  t.dir.Write("root/data/ckpt/.tmp.pt", "x");  // hidden: a '*' does not match it
  t.dir.Write("root/data/ckpt/notes.txt", "x");
  t.dir.MakeDir("root/data/runs/a/checkpoint-1");
  SetMtime(t.dir.path() + "/root/data/ckpt/step_100.pt", now - 3600 * 30);
  SetMtime(t.dir.path() + "/root/data/ckpt/step_200.pt", now - 3600 * 2);
  SetMtime(t.dir.path() + "/root/data/ckpt/.tmp.pt", now);
  auto settings = std::make_shared<Settings>();
  settings->backup_paths = {"/data/ckpt/*.pt", "/data/runs/*/checkpoint-*", "/nope/*.pt",
                            "relative/*.pt"};
  ProbeOutput out = RunBackupProbe(Context(t, settings));
  ASSERT_EQ(out.state, ProbeState::kOk);
  Snapshot s = Apply(out);
  ASSERT_TRUE(s.host.backups);
  const auto& p = s.host.backups->patterns;
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].matched, 2);
  EXPECT_EQ(p[0].newest_path, "/data/ckpt/step_200.pt");
  EXPECT_EQ(p[0].newest_mtime_unix_s, now - 3600 * 2);
  EXPECT_EQ(p[1].matched, 1) << "directories count (HF/DeepSpeed checkpoints)";
  EXPECT_EQ(p[2].matched, 0);
  EXPECT_TRUE(p[2].error.empty());
  EXPECT_FALSE(p[3].error.empty());
}

TEST(BackupProbeTest, NotConfiguredIsSkipped) {
  Tree t;
  EXPECT_EQ(RunBackupProbe(Context(t)).state, ProbeState::kSkipped);
}

TEST(PathGlobTest, StopsAtTheEntryBound) {
  TempDir d;
  for (int i = 0; i < 50; ++i) d.Write("root/d/f" + std::to_string(i) + ".pt", "");
  RootFs fs("/nonexistent", "/nonexistent", d.path() + "/root");
  auto r = GlobUnderRoot(fs, "/d/*.pt", 10, SteadyClock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->truncated);
  // What the last component listed before the bound are real matches: kept, not dropped.
  EXPECT_GE(r->matches.size(), 1u);
  EXPECT_LE(r->matches.size(), 10u);
  // Cut in an earlier component: the directories on the way are not reported as matches.
  for (int i = 0; i < 20; ++i) d.Write("root/runs/r" + std::to_string(i) + "/ckpt/a.pt", "");
  auto early =
      GlobUnderRoot(fs, "/runs/*/ckpt/*.pt", 5, SteadyClock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(early.ok());
  EXPECT_TRUE(early->truncated);
  for (const auto& m : early->matches) EXPECT_TRUE(m.host_path.ends_with(".pt")) << m.host_path;
  auto all = GlobUnderRoot(fs, "/d/f[0-4].pt", 1000, SteadyClock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(all.ok());
  EXPECT_FALSE(all->truncated);
  EXPECT_EQ(all->matches.size(), 5u);
  EXPECT_FALSE(GlobUnderRoot(fs, "/d/../etc/*", 10, SteadyClock::now()).ok());
}

}  // namespace
}  // namespace gpudoctor
