// Updates that matter (issue 25 section 2): pending security updates from apt's lists vs dpkg
// status (fixture rootfs tests/fixtures/hosts/apt-security-pending), Debian version order, the
// driver point-release table, and the CUDA runtime of GPU processes vs the driver's CUDA version.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "core/civil_time.h"
#include "core/root_fs_lines.h"
#include "core/strings.h"
#include "finding_test_util.h"
#include "host_fixture.h"
#include "parsers/debian_packages.h"
#include "probes/cuda_runtime_scan.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"
#include "probes/updates_scan.h"
#include "rules/driver_releases.h"
#include "rules/engine.h"
#include "test_util.h"

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

TEST(DebianVersionTest, FollowsDpkgOrder) {
  EXPECT_LT(CompareDebianVersions("3.0.11-1~deb12u2", "3.0.15-1~deb12u1"), 0);
  EXPECT_LT(CompareDebianVersions("1.0~rc1-1", "1.0-1"), 0);  // tilde before the end
  EXPECT_LT(CompareDebianVersions("1.9.13p3-1+deb12u1~bpo", "1.9.13p3-1+deb12u1"), 0);
  EXPECT_GT(CompareDebianVersions("1:0.9-1", "2.0-1"), 0);  // epoch first
  EXPECT_EQ(CompareDebianVersions("1.01-1", "1.1-1"), 0);   // leading zeros
  EXPECT_LT(CompareDebianVersions("2.36-9+deb12u4", "2.36-9+deb12u10"), 0);
  EXPECT_GT(CompareDebianVersions("1.0a", "1.0"), 0);
  EXPECT_LT(CompareDebianVersions("1.0", "1.0-0.1"), 0);
}

TEST(DebianVersionTest, ParsesStatusAndRelease) {
  auto pkgs = ParseDpkgStatus(
      "Package: a\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1\n\n"
      "Package: b\nStatus: deinstall ok config-files\nVersion: 2\n\nPackage: c\nVersion: 3\n");
  ASSERT_EQ(pkgs.size(), 1u);
  EXPECT_EQ(pkgs[0].name, "a");
  ReleaseInfo r = ParseRelease(
      "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n"
      "Suite: jammy-security\nDate: Tue, 03 Dec 2026 10:30:00 +0100\n");
  EXPECT_EQ(r.suite, "jammy-security");
  ASSERT_TRUE(r.date_unix_s);
  EXPECT_EQ(*r.date_unix_s, DaysFromCivil(2026, 12, 3) * 86400 + 9 * 3600 + 30 * 60);
  EXPECT_FALSE(ParseRfc2822Date("Tue, 33 Foo 2026 10:30:00 UTC"));
  EXPECT_FALSE(ParseRfc2822Date("Sun, 15 Nov 6 08:00:00 UTC"));  // found by the fuzz target
}

TEST(SecurityUpdatesTest, AptListsAgainstDpkgStatusOnAFixtureRoot) {
  testing::HostFixture host("apt-security-pending");
  UpdateFacts u = ScanSecurityUpdates(host.fs(), SteadyClock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(u.checked) << u.note;
  EXPECT_EQ(u.manager, "apt");
  EXPECT_EQ(u.security_lists, 1);
  // openssl and libc6 have newer security versions; tzdata is current, sudo's security version
  // is older (~bpo), nginx is not installed, curl's newer version is in the main suite only.
  ASSERT_EQ(u.pending_count, 2);
  std::map<std::string, PendingUpdate> by_name;
  for (const auto& p : u.pending) by_name[p.name] = p;
  ASSERT_TRUE(by_name.count("openssl"));
  EXPECT_EQ(by_name["openssl"].installed_version, "3.0.11-1~deb12u2");
  EXPECT_EQ(by_name["openssl"].candidate_version, "3.0.15-1~deb12u1");  // the newest of two
  EXPECT_EQ(by_name["openssl"].suite, "stable-security");
  EXPECT_TRUE(by_name.count("libc6"));
  ASSERT_TRUE(u.lists_date_unix_s);
  EXPECT_EQ(*u.lists_date_unix_s, DaysFromCivil(2026, 11, 15) * 86400 + 8 * 3600);
}

TEST(SecurityUpdatesTest, BootProbeCarriesThemAndTheRuleGradesByAge) {
  testing::HostFixture host("apt-security-pending");
  auto settings = std::make_shared<Settings>();
  settings->fs = host.fs();
  ProbeOutput out = RunBootProbe({settings, SteadyClock::now() + std::chrono::seconds(5)});
  ASSERT_EQ(out.state, ProbeState::kOk) << out.reason;
  Snapshot s;
  out.apply(s);
  ASSERT_TRUE(s.host.updates);
  s.time = At(2026, 11, 18);  // 3 days after the list's date: info
  auto f = Only(s, "host.updates.security");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_NE(f[0].summary.find("2 security update(s) pending"), std::string::npos) << f[0].summary;
  EXPECT_EQ(EvidenceOf<int64_t>(f[0], "pending_count"), 2);
  // Ages to 0.01 day: the same evidence a second later (`watch` stores it again only on change).
  double age = EvidenceOf<double>(f[0], "oldest_age_days").value_or(-1);
  EXPECT_DOUBLE_EQ(age, std::round(age * 100) / 100);
  EXPECT_NEAR(age, 3.0, 1.0);
  s.time += std::chrono::seconds(1);
  EXPECT_EQ(Only(s, "host.updates.security")[0].evidence, f[0].evidence);
  s.time = At(2026, 12, 5);  // 20 days: warn
  f = Only(s, "host.updates.security");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kWarn);
  ThresholdOverrides o;
  o.Set("host.updates.security", "warn_age_days", 30);
  EXPECT_EQ(Only(s, "host.updates.security", Thresholds(o))[0].severity, Severity::kInfo);
}

// A security suite whose only Packages list is one this scan does not decode (.xz): nothing to
// compare with, so the dpkg status is not parsed and the answer is "not checked" naming the list
// (never "nothing pending"), and an unreadable status is still reported.
TEST(SecurityUpdatesTest, UndecodableListsOnlyAreNotCheckedAndTheStatusIsNotParsed) {
  testing::HostFixture host("apt-security-pending");
  const std::string lists = host.root() + "/var/lib/apt/lists";
  for (const auto& e : std::filesystem::directory_iterator(lists)) {
    std::string name = e.path().filename().string();
    if (EndsWith(name, "_Packages")) std::filesystem::rename(e.path(), lists + "/" + name + ".xz");
  }
  UpdateFacts u = ScanSecurityUpdates(host.fs(), SteadyClock::now() + std::chrono::seconds(5));
  EXPECT_FALSE(u.checked) << u.note;
  EXPECT_EQ(u.security_lists, 1);
  EXPECT_EQ(u.pending_count, 0);
  EXPECT_NE(u.note.find("_Packages.xz"), std::string::npos) << u.note;
  ASSERT_TRUE(u.lists_date_unix_s);
  std::filesystem::remove(host.root() + "/var/lib/dpkg/status");
  UpdateFacts gone = ScanSecurityUpdates(host.fs(), SteadyClock::now() + std::chrono::seconds(5));
  EXPECT_FALSE(gone.checked);
  EXPECT_NE(gone.note.find("dpkg status unreadable"), std::string::npos) << gone.note;
}

TEST(SecurityUpdatesTest, NoListsNoSecuritySuiteAndNothingPendingAreSilent) {
  testing::TempDir d;
  d.MakeDir("root");
  RootFs fs(d.path() + "/proc", d.path() + "/sys", d.path() + "/root");
  UpdateFacts none = ScanSecurityUpdates(fs, SteadyClock::now() + std::chrono::seconds(5));
  EXPECT_FALSE(none.checked);
  EXPECT_FALSE(none.note.empty());
  d.Write("root/var/lib/apt/lists/x_dists_bookworm_InRelease", "Suite: stable\n");
  UpdateFacts no_suite = ScanSecurityUpdates(fs, SteadyClock::now() + std::chrono::seconds(5));
  EXPECT_FALSE(no_suite.checked);
  EXPECT_NE(no_suite.note.find("no security suite"), std::string::npos);
  Snapshot s;
  s.time = At(2026, 12, 5);
  auto checked = std::make_shared<UpdateFacts>();
  checked->checked = true;
  s.host.updates = checked;
  EXPECT_TRUE(Only(s, "host.updates.security").empty());
}

// A generated host with a 1.5 MiB security Packages list and a dpkg status of 6000 packages,
// both far over the 64 KiB read chunk, the last stanza of each without a final newline. Which
// packages are pending follows from the generator, independently of the scan.
struct BigIndex {
  static constexpr int kPackages = 6000;
  static bool Installed(int i) { return i % 13 != 0; }  // others: "deinstall ok config-files"
  static bool Newer(int i) { return i % 3 == 0 || i % 7 == 0; }
  static std::string Name(int i) {
    char b[16];
    std::snprintf(b, sizeof b, "pkg%05d", i);
    return b;
  }
  static std::string Version(int i, int rev) {
    return "2:1." + std::to_string(i) + "-" + std::to_string(rev);
  }
  std::string status, packages;
  BigIndex() {
    const std::string pad = " " + std::string(90, 'd') + "\n";
    for (int i = 0; i < kPackages; ++i) {
      status += "Package: " + Name(i) + "\nStatus: " +
                (Installed(i) ? "install ok installed" : "deinstall ok config-files") +
                "\nArchitecture: amd64\nVersion: " + Version(i, 1) + "\nDescription: x\n" + pad +
                (i + 1 < kPackages ? "\n" : "");
      int rev = i % 3 == 0 ? 2 : i % 3 == 1 ? 0 : 1;  // newer, older, the same
      packages += "Package: " + Name(i) + "\r\nArchitecture: " + (i % 5 == 0 ? "all" : "amd64") +
                  "\r\nVersion: " + Version(i, rev) + "\r\nDescription: y\r\n" + pad + pad + "\r\n";
    }
    // A second, newer candidate of every 7th package, after all the others.
    for (int i = 0; i < kPackages; i += 7) {
      packages += "Package: " + Name(i) + "\nArchitecture: amd64\nVersion: " + Version(i, 3) +
                  (i + 7 < kPackages ? "\n\n" : "");
    }
  }
};

TEST(SecurityUpdatesTest, LargeIndexStreamedGivesTheGeneratedPendingSet) {
  BigIndex big;
  ASSERT_GT(big.packages.size(), 1u << 20);
  testing::TempDir d;
  d.Write("root/var/lib/apt/lists/x_dists_bookworm-security_InRelease",
          "Suite: stable-security\nDate: Sun, 15 Nov 2026 08:00:00 UTC\n");
  d.Write("root/var/lib/apt/lists/x_dists_bookworm-security_main_binary-amd64_Packages",
          big.packages);
  d.Write("root/var/lib/dpkg/status", big.status);
  RootFs fs(d.path() + "/proc", d.path() + "/sys", d.path() + "/root");
  UpdateFacts u = ScanSecurityUpdates(fs, SteadyClock::now() + std::chrono::seconds(30));
  ASSERT_TRUE(u.checked) << u.note;
  int expected = 0;
  for (int i = 0; i < BigIndex::kPackages; ++i) {
    expected += BigIndex::Installed(i) && BigIndex::Newer(i);
  }
  EXPECT_EQ(u.pending_count, expected);
  ASSERT_EQ(u.pending.size(), kMaxPendingListed);
  for (const PendingUpdate& p : u.pending) {
    int i = std::stoi(p.name.substr(3));
    EXPECT_TRUE(BigIndex::Installed(i) && BigIndex::Newer(i)) << p.name;
    EXPECT_EQ(p.installed_version, BigIndex::Version(i, 1));
    EXPECT_EQ(p.candidate_version, BigIndex::Version(i, i % 7 == 0 ? 3 : 2)) << p.name;
    EXPECT_EQ(p.suite, "stable-security");
  }
  // The last pending package is in the last stanza of the list, which has no final newline.
  d.Write("root/var/lib/dpkg/status", "Package: " + BigIndex::Name(5999) +
                                          "\nStatus: install ok installed\nVersion: " +
                                          BigIndex::Version(5999, 1) + "\nArchitecture: amd64");
  UpdateFacts last = ScanSecurityUpdates(fs, SteadyClock::now() + std::chrono::seconds(30));
  ASSERT_EQ(last.pending_count, 1) << last.note;
  EXPECT_EQ(last.pending[0].candidate_version, BigIndex::Version(5999, 3));
}

TEST(SecurityUpdatesTest, StanzasCutAcrossReadChunksParseAsWhole) {
  BigIndex big;
  testing::TempDir d;
  d.Write("status", big.status);
  d.Write("packages", big.packages.substr(0, 200000));
  for (auto [file, installed_only] : {std::pair{"status", true}, std::pair{"packages", false}}) {
    std::string text = testing::ReadFileOrDie(d.path() + "/" + file);
    std::vector<DebPackage> whole =
        installed_only ? ParseDpkgStatus(text) : ParsePackagesList(text);
    ASSERT_GT(whole.size(), 100u);
    // Chunk sizes that cut records (and single lines) in every place, plus the real one.
    for (size_t chunk : {size_t{1}, size_t{7}, size_t{97}, size_t{4093}, size_t{64} << 10}) {
      DebPackageStream stream(installed_only);
      std::vector<DebPackage> streamed;
      Status s = ForEachFileLine(
          d.path() + "/" + file, 64u << 20,
          [&](std::string_view line) {
            if (DebPackage* p = stream.Line(line)) streamed.push_back(std::move(*p));
            return true;
          },
          chunk);
      ASSERT_TRUE(s.ok()) << s.ToString();
      if (DebPackage* p = stream.Finish()) streamed.push_back(std::move(*p));
      ASSERT_EQ(streamed.size(), whole.size()) << file << " chunk " << chunk;
      for (size_t i = 0; i < whole.size(); ++i) {
        EXPECT_EQ(streamed[i].name, whole[i].name);
        EXPECT_EQ(streamed[i].arch, whole[i].arch);
        EXPECT_EQ(streamed[i].version, whole[i].version);
      }
    }
  }
}

TEST(SecurityUpdatesTest, DnfSecurityListParses) {
  UpdateFacts u;
  ParseDnfSecurityList(
      "FEDORA-2024-1a2b Important/Sec. openssl-1:3.0.9-2.fc38.x86_64\n"
      "FEDORA-2024-1a2b Important/Sec. openssl-1:3.0.9-2.fc38.x86_64\n"
      "FEDORA-2024-9f9f bugfix        vim-9.0-1.fc38.x86_64\n"
      "RHSA-2024:1234 Moderate/Sec.  kernel-5.14.0-362.el9.x86_64\n",
      u);
  EXPECT_EQ(u.pending_count, 2);
  ASSERT_EQ(u.pending.size(), 2u);
  EXPECT_EQ(u.pending[0].name, "openssl");
  EXPECT_EQ(u.pending[1].name, "kernel");
}

TEST(DriverReleaseTest, OlderPointReleaseOfASupportedBranch) {
  EXPECT_LT(CompareDriverVersions("580.82.07", "580.167.08"), 0);
  EXPECT_EQ(NewerReleaseInBranch("580.82.07")->version, "580.167.08");
  EXPECT_EQ(NewerReleaseInBranch("580.95.05")->version, "580.167.08");
  EXPECT_FALSE(NewerReleaseInBranch("580.167.08"));
  EXPECT_FALSE(NewerReleaseInBranch("595.10.01"));  // no rows for the branch
  for (const DriverRelease& r : DriverReleases()) EXPECT_FALSE(r.source.empty()) << r.version;

  Snapshot s;
  s.time = At(2026, 12, 5);
  s.gpu.driver.driver_version = "580.95.05";
  auto f = Only(s, "driver.release.old");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_NE(f[0].summary.find("580.167.08"), std::string::npos);
  EXPECT_NE(f[0].summary.find(std::string(kDriverReleasesAsOf)), std::string::npos);
  EXPECT_EQ(EvidenceOf<std::string>(f[0], "table_as_of"), std::string(kDriverReleasesAsOf));
  // R570 ended February 2026: driver.branch.eol speaks, not this rule.
  s.gpu.driver.driver_version = "570.86.15";
  EXPECT_TRUE(Only(s, "driver.release.old").empty());
  s.time = At(2025, 6, 1);  // still supported then: 570.133.20 (2025-04-17) is newer
  f = Only(s, "driver.release.old");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(EvidenceOf<std::string>(f[0], "newer_release_date"), "2025-04-17");
}

TEST(CudaRuntimeTest, MapsLibraryPathsGiveTheRuntimeVersion) {
  auto v = ParseCudaRuntimeMaps(
      "7f00-7f01 r-xp 00000000 08:01 123 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "7f10-7f11 r-xp 00000000 08:01 456 /opt/conda/lib/libcudart.so.12.4.127\n"
      "7f20-7f21 r-xp 00000000 08:01 789 /usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05\n");
  EXPECT_EQ(v.major, 12);
  EXPECT_EQ(v.minor, 4);
  EXPECT_EQ(v.path, "/opt/conda/lib/libcudart.so.12.4.127");
  EXPECT_FALSE(v.forward_compat);
  auto bundled = ParseCudaRuntimeMaps(
      "7f-80 r-xp 0 0:0 1 "
      "/venv/lib/python3.11/site-packages/torch/lib/libcudart-9335f6a2.so.11.0\n");
  EXPECT_EQ(bundled.major, 11);
  EXPECT_FALSE(bundled.minor);  // a soname, not the real minor
  auto only_cublas = ParseCudaRuntimeMaps(
      "7f-80 r-xp 0 0:0 1 /venv/site-packages/nvidia/cublas/lib/libcublas.so.13\n"
      "7f-80 r-xp 0 0:0 1 /usr/local/cuda-13.0/compat/libcuda.so.580.65.06\n");
  EXPECT_EQ(only_cublas.major, 13);
  EXPECT_TRUE(only_cublas.forward_compat);
  EXPECT_FALSE(ParseCudaRuntimeMaps("garbage\n/\n7f-80 r-xp 0 0:0 1 /x/libcudart.so.\n").major);
}

std::string Stat(int pid, const std::string& comm, char state) {
  return std::to_string(pid) + " (" + comm + ") " + state +
         " 1 1 1 0 -1 4194560 0 0 0 0 10 5 0 0 20 0 1 0 100 0 0 18446744073709551615 0 0 0 0 0 0 0 "
         "0 0 0 0 0 0 17 0 0 0 0 0 0\n";
}

TEST(CudaRuntimeTest, ReadsMapsOfGpuProcessesButNeverOfATaskInD) {
  testing::TempDir d;
  d.Write("proc/100/task/100/stat", Stat(100, "python", 'S'));
  d.Write("proc/100/task/101/stat", Stat(101, "python", 'R'));
  d.Write("proc/100/maps", "7f-80 r-xp 0 0:0 1 /opt/conda/lib/libcudart.so.13.1.80\n");
  d.Write("proc/200/task/200/stat", Stat(200, "trainer", 'S'));
  d.Write("proc/200/task/201/stat", Stat(201, "trainer", 'D'));  // one thread in the driver
  d.Write("proc/200/maps", "7f-80 r-xp 0 0:0 1 /opt/conda/lib/libcudart.so.13.1.80\n");
  RootFs fs(d.path() + "/proc", d.path() + "/sys", d.path() + "/root");
  Snapshot s;
  s.time = At(2026, 12, 5);
  s.gpu.driver.driver_version = "580.95.05";
  s.gpu.driver.cuda_driver_version = 13000;
  GpuFacts g;
  g.index = 0;
  g.processes = std::vector<GpuProcess>{{100, {}, "python", "alice"}, {200, {}, "trainer", "bob"}};
  s.gpu.gpus.push_back(g);
  ReadCudaRuntimes(fs, s.gpu, SteadyClock::now() + std::chrono::seconds(5));
  const auto& procs = *s.gpu.gpus[0].processes;
  EXPECT_EQ(procs[0].cuda_runtime, "13.1");
  EXPECT_TRUE(procs[1].cuda_runtime.empty());
  EXPECT_NE(procs[1].maps_note.find("D state"), std::string::npos);

  auto f = Only(s, "driver.cuda_too_old");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kInfo);  // same major: minor version compatibility
  EXPECT_NE(f[0].summary.find("process 100 python"), std::string::npos) << f[0].summary;
  EXPECT_NE(f[0].summary.find("13.1"), std::string::npos);
  EXPECT_NE(f[0].summary.find("13.0"), std::string::npos);
  EXPECT_EQ(EvidenceOf<std::string>(f[0], "cuda_runtime_library"),
            "/opt/conda/lib/libcudart.so.13.1.80");

  s.gpu.driver.cuda_driver_version = 12080;  // a 12.8 driver and a CUDA 13 runtime: fails
  f = Only(s, "driver.cuda_too_old");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kWarn);
  EXPECT_NE(f[0].summary.find("cuda-compat"), std::string::npos);
  (*s.gpu.gpus[0].processes)[0].cuda_forward_compat = true;  // already uses the compat package
  EXPECT_TRUE(Only(s, "driver.cuda_too_old").empty());
  (*s.gpu.gpus[0].processes)[0].cuda_forward_compat = false;
  s.gpu.driver.cuda_driver_version = 13020;  // driver newer than the runtime: fine
  EXPECT_TRUE(Only(s, "driver.cuda_too_old").empty());
}

}  // namespace
}  // namespace gpudoctor
