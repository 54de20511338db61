// `gpudoctor bundle` end to end: a short `watch` on the fake NVML (ECC DBE scenario) writes a
// history, then `bundle` with the same flags writes one tar.gz that the system tar extracts; its
// members are checked for content, and the bearer token (and config secrets) for absence.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace gpudoctor {
namespace {

using json = nlohmann::json;
using testing::FixturePath;
using testing::ReadFileOrDie;
using testing::RunGpudoctor;
using testing::RunProgram;
using testing::TempDir;

constexpr const char* kToken = "bundle-e2e-token-7f3a9c";

class BundleE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write("token", std::string(kToken) + "\n");
    ::chmod((dir_.path() + "/token").c_str(), 0600);
    dir_.Write("gpudoctor.toml",
               "[watch]\nlisten = \"off\"\ntoken_file = \"" + dir_.path() +
                   "/token\"\n\n[[notify.webhook]]\n"
                   "url = \"http://alice:wonderland-pw@127.0.0.1:9/hook/S3CRETPATH?token=qtok9\"\n"
                   "min_severity = \"crit\"\ntimeout_s = 1\n");
  }
  std::vector<std::string> Flags() const {
    return {"--config",    dir_.path() + "/gpudoctor.toml",
            "--db",        dir_.path() + "/history.db",
            "--nvml-lib",  testing::FakeNvmlLib(),
            "--probes",    "nvml,cpu,memory,kmsg",
            "--kmsg-file", FixturePath("kmsg/dmesg_r535_h100.log")};
  }
  std::map<std::string, std::string> Env() const {
    return {{"FAKE_NVML_SCENARIO", FixturePath("nvml/ecc_dbe.scenario")}};
  }
  TempDir dir_;
};

TEST_F(BundleE2eTest, BundleOfWatchedNodeHasEveryMemberAndNoSecret) {
  std::vector<std::string> watch = {"watch", "--ticks", "3", "--interval", "0.3"};
  for (const auto& f : Flags()) watch.push_back(f);
  auto w = RunGpudoctor(watch, std::chrono::seconds(60), Env());
  ASSERT_EQ(w.exit_code, 0) << w.err;

  std::string out = dir_.path() + "/b.tar.gz";
  // --tool-timeout 0: a host with nvidia-smi installed would add its members to the list.
  std::vector<std::string> bundle = {"bundle", "-o", out, "--tool-timeout", "0"};
  for (const auto& f : Flags()) bundle.push_back(f);
  auto b = RunGpudoctor(bundle, std::chrono::seconds(60), Env());
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(b.out, out + "\n");

  auto list = RunProgram({"/bin/tar", "-tzf", out});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out,
            "report.json\nreport.txt\nkernel.json\nprobes.json\nversions.txt\nconfig.toml\n"
            "history/findings.json\nhistory/events.json\nhistory/metrics.json\nkernel-tail.txt\n"
            "MANIFEST.txt\n");
  std::string x = dir_.path() + "/x";
  std::filesystem::create_directories(x);
  ASSERT_EQ(RunProgram({"/bin/tar", "-xzf", out, "-C", x}).exit_code, 0);

  // report.json is the check's JSON: the ECC DBE finding from the fake NVML.
  json report = json::parse(ReadFileOrDie(x + "/report.json"));
  EXPECT_EQ(report["verdict"], "crit");
  bool dbe = false;
  for (const auto& f : report["findings"]) dbe = dbe || f["id"] == "gpu.ecc.dbe";
  EXPECT_TRUE(dbe) << report.dump(2);
  EXPECT_NE(ReadFileOrDie(x + "/report.txt").find("gpu.ecc.dbe"), std::string::npos);

  json kernel = json::parse(ReadFileOrDie(x + "/kernel.json"));
  EXPECT_GT(kernel["kernel_log"]["bytes_scanned"].get<int64_t>(), 0);
  ASSERT_FALSE(kernel["events"].empty()) << kernel.dump(2);
  EXPECT_FALSE(kernel["events"][0]["sample"].get<std::string>().empty());
  EXPECT_FALSE(kernel["findings"].empty()) << kernel.dump(2);

  json probes = json::parse(ReadFileOrDie(x + "/probes.json"));
  bool nvml_ok = false, disk_listed = false;
  for (const auto& p : probes["probes"]) {
    if (p["name"] == "nvml") nvml_ok = p["status"] == "ok" && p["enabled"] == true;
    if (p["name"] == "disk") disk_listed = p["status"] == "not_run" && p["enabled"] == false;
  }
  EXPECT_TRUE(nvml_ok && disk_listed) << probes.dump(2);

  std::string versions = ReadFileOrDie(x + "/versions.txt");
  EXPECT_NE(versions.find("gpudoctor: 0."), std::string::npos) << versions;
  EXPECT_EQ(versions.find("nvidia driver: unknown"), std::string::npos) << versions;
  EXPECT_NE(versions.find("kernel release: "), std::string::npos) << versions;

  // The history of the watch run: the DBE episode and GPU temperature points.
  json findings = json::parse(ReadFileOrDie(x + "/history/findings.json"));
  bool stored = false;
  for (const auto& f : findings["findings"]) stored = stored || f["finding"]["id"] == "gpu.ecc.dbe";
  EXPECT_TRUE(stored) << findings.dump(2);
  json metrics = json::parse(ReadFileOrDie(x + "/history/metrics.json"));
  const json& temp = metrics["series"]["gpudoctor_gpu_temperature_celsius"];
  ASSERT_GE(temp.size(), 1u) << metrics.dump(2);
  EXPECT_GE(temp[0]["points"].size(), 1u);
  EXPECT_TRUE(metrics["series"].contains("gpudoctor_host_cpu_busy_ratio")) << metrics.dump(2);

  std::string config = ReadFileOrDie(x + "/config.toml");
  EXPECT_NE(config.find("url = 'http://127.0.0.1:9/<redacted>'"), std::string::npos) << config;
  EXPECT_NE(config.find("min_severity = 'crit'"), std::string::npos) << config;
  std::string manifest = ReadFileOrDie(x + "/MANIFEST.txt");
  EXPECT_NE(manifest.find("history/metrics.json"), std::string::npos) << manifest;
  EXPECT_EQ(manifest.find("no history"), std::string::npos) << manifest;

  // No member carries the token or the webhook password.
  for (const auto& e : std::filesystem::recursive_directory_iterator(x)) {
    if (!e.is_regular_file()) continue;
    std::string body = ReadFileOrDie(e.path().string());
    EXPECT_EQ(body.find(kToken), std::string::npos) << e.path();
    EXPECT_EQ(body.find("wonderland-pw"), std::string::npos) << e.path();
    EXPECT_EQ(body.find("S3CRETPATH"), std::string::npos) << e.path();
    EXPECT_EQ(body.find("qtok9"), std::string::npos) << e.path();
  }
}

// Issue 20 item 11: what NVIDIA support asks for first. `nvidia-smi -q` and nvidia-bug-report.sh
// (fakes on PATH here) are run without a shell and bounded, their output packed (the text
// redacted like every member, the .gz byte for byte), the raw kernel-log tail added, and
// `-o -` streams the archive to standard output.
TEST_F(BundleE2eTest, NvidiaToolsKernelTailAndStdout) {
  dir_.Write("bin/nvidia-smi",
             "#!/bin/sh\n[ \"$1\" = -q ] || exit 9\necho '==============NVSMI LOG=============='\n"
             "echo 'Serial Number : 1654921000123'\necho 'leaked " +
                 std::string(kToken) + "'\n");
  dir_.Write("bin/nvidia-bug-report.sh",
             "#!/bin/sh\n[ \"$1\" = --output-file ] || exit 9\n"
             "echo 'nvidia-bug-report for support' | gzip > \"$2.gz\"\n");
  ::chmod((dir_.path() + "/bin/nvidia-smi").c_str(), 0755);
  ::chmod((dir_.path() + "/bin/nvidia-bug-report.sh").c_str(), 0755);
  dir_.Write("root/dev/kmsg",
             "6,1,5000000,-;Linux version 6.8.0\n"
             "4,2,7000000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU "
             "has fallen off the bus.\n");
  auto env = Env();
  env["PATH"] = dir_.path() + "/bin:/usr/bin:/bin";
  std::vector<std::string> bundle = {"bundle", "-o", "-", "--path.rootfs", dir_.path() + "/root"};
  auto flags = Flags();
  bundle.insert(bundle.end(), flags.begin(), flags.end());

  // Another root: the tools are not this host's, so they are not run; the tail is that root's.
  auto r = RunGpudoctor(bundle, std::chrono::seconds(60), env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  dir_.Write("a.tar.gz", r.out);
  std::string a = dir_.path() + "/a.tar.gz";
  auto names = RunProgram({"/bin/tar", "-tzf", a});
  ASSERT_EQ(names.exit_code, 0) << names.err;
  EXPECT_NE(names.out.find("MANIFEST.txt"), std::string::npos) << names.out;
  EXPECT_EQ(names.out.find("nvidia/"), std::string::npos) << names.out;
  auto tail = RunProgram({"/bin/tar", "-xzOf", a, "kernel-tail.txt"});
  EXPECT_NE(tail.out.find("[    7.000000] NVRM: Xid (PCI:0000:3b:00): 79"), std::string::npos)
      << tail.out;
  auto manifest = RunProgram({"/bin/tar", "-xzOf", a, "MANIFEST.txt"});
  EXPECT_NE(manifest.out.find("is not this host"), std::string::npos) << manifest.out;

  // This host: both tools run; nvidia-smi's text is redacted, the report kept as it is.
  std::vector<std::string> live = {"bundle", "-o", dir_.path() + "/b.tar.gz"};
  live.insert(live.end(), flags.begin(), flags.end());
  r = RunGpudoctor(live, std::chrono::seconds(60), env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string b = dir_.path() + "/b.tar.gz";
  auto smi = RunProgram({"/bin/tar", "-xzOf", b, "nvidia/nvidia-smi-q.txt"});
  ASSERT_EQ(smi.exit_code, 0) << smi.err;
  EXPECT_NE(smi.out.find("NVSMI LOG"), std::string::npos) << smi.out;
  EXPECT_EQ(smi.out.find(kToken), std::string::npos) << smi.out;
  auto report =
      RunProgram({"/bin/sh", "-c", "tar -xzOf \"$0\" nvidia/nvidia-bug-report.log.gz | gunzip", b});
  EXPECT_EQ(report.out, "nvidia-bug-report for support\n") << report.err;

  // A tool that hangs is killed at --tool-timeout and named in the manifest.
  dir_.Write("bin/nvidia-bug-report.sh", "#!/bin/sh\nexec sleep 60\n");
  ::chmod((dir_.path() + "/bin/nvidia-bug-report.sh").c_str(), 0755);
  live = {"bundle", "-o", dir_.path() + "/c.tar.gz", "--tool-timeout", "1"};
  live.insert(live.end(), flags.begin(), flags.end());
  r = RunGpudoctor(live, std::chrono::seconds(60), env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(r.seconds, 20);
  manifest = RunProgram({"/bin/tar", "-xzOf", dir_.path() + "/c.tar.gz", "MANIFEST.txt"});
  EXPECT_NE(manifest.out.find("nvidia-bug-report.sh: nvidia-bug-report.sh did not finish within 1"),
            std::string::npos)
      << manifest.out;
  EXPECT_NE(RunProgram({"/bin/tar", "-tzf", dir_.path() + "/c.tar.gz"}).out.find("nvidia-smi-q"),
            std::string::npos);
}

// Issue 20 item 11, the bounds: a tool that prints too much is cut with a marker (and a
// manifest note), a script that never ends (a shell loop with a child, not one exec'd process)
// is killed with its whole process group at --tool-timeout and named in the manifest, and
// `-o -` piped straight into `tar -t` lists the members.
TEST_F(BundleE2eTest, ToolsAreBoundedInSizeAndTimeAndStdoutPipesIntoTar) {
  // 9 MB of nvidia-smi text against the 8 MiB cap.
  dir_.Write("bin/nvidia-smi",
             "#!/bin/sh\n[ \"$1\" = -q ] || exit 9\n"
             "yes 'GPU 00000000:2A:00.0 Fan Speed : 30 %' | head -c 9000000\n");
  // Never ends by itself; a child in the background holds the pipes open too.
  dir_.Write("bin/nvidia-bug-report.sh", "#!/bin/sh\nsleep 987654 &\nwhile :; do sleep 1; done\n");
  ::chmod((dir_.path() + "/bin/nvidia-smi").c_str(), 0755);
  ::chmod((dir_.path() + "/bin/nvidia-bug-report.sh").c_str(), 0755);
  auto env = Env();
  env["PATH"] = dir_.path() + "/bin:/usr/bin:/bin";
  std::vector<std::string> argv = {"bundle", "-o", dir_.path() + "/d.tar.gz", "--tool-timeout",
                                   "2"};
  auto flags = Flags();
  argv.insert(argv.end(), flags.begin(), flags.end());
  auto r = RunGpudoctor(argv, std::chrono::seconds(60), env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(r.seconds, 20);
  std::string d = dir_.path() + "/d.tar.gz";
  auto smi =
      RunProgram({"/bin/tar", "-xzOf", d, "nvidia/nvidia-smi-q.txt"}, std::chrono::seconds(30));
  ASSERT_EQ(smi.exit_code, 0) << smi.err;
  const std::string marker = "\n[gpudoctor: cut at 8388608 bytes]\n";
  ASSERT_GT(smi.out.size(), marker.size());
  EXPECT_LE(smi.out.size(), (8u << 20) + marker.size());
  EXPECT_EQ(smi.out.substr(smi.out.size() - marker.size()), marker);
  auto manifest = RunProgram({"/bin/tar", "-xzOf", d, "MANIFEST.txt"});
  EXPECT_NE(manifest.out.find("nvidia-smi: output cut at 8388608 bytes"), std::string::npos)
      << manifest.out;
  EXPECT_NE(manifest.out.find("nvidia-bug-report.sh: nvidia-bug-report.sh did not finish within 2"),
            std::string::npos)
      << manifest.out;
  // The whole group went: no `sleep 987654` survives the bundle.
  auto left = RunProgram({"/usr/bin/pgrep", "-f", "sleep 987654"});
  EXPECT_EQ(left.exit_code, 1) << "left running: " << left.out;

  // -o - into a pipe: tar reads the stream as it comes.
  std::string cmd = "set -o pipefail; \"$0\" \"$@\" | tar -tzf -";
  std::vector<std::string> piped = {"/bin/bash",      "-c", cmd, GPUDOCTOR_BIN, "bundle", "-o", "-",
                                    "--tool-timeout", "0"};
  piped.insert(piped.end(), flags.begin(), flags.end());
  auto listed = RunProgram(piped, std::chrono::seconds(60), env);
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  for (const char* member : {"MANIFEST.txt", "report.json", "kernel-tail.txt", "config.toml"}) {
    EXPECT_NE(listed.out.find(member), std::string::npos) << member << " in\n" << listed.out;
  }
  EXPECT_NE(listed.err.find("bundle written: standard output"), std::string::npos) << listed.err;
}

TEST_F(BundleE2eTest, WithoutHistoryTheBundleSaysSoAndDefaultNameIsUsed) {
  std::vector<std::string> flags = Flags();
  flags[3] = dir_.path() + "/none.db";  // the --db value
  // Run in the temp dir: the default name lands in the working directory.
  std::vector<std::string> argv = {"/bin/sh",   "-c", "cd \"$0\" && shift && exec \"$@\"",
                                   dir_.path(), "-",  GPUDOCTOR_BIN,
                                   "bundle"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  auto r = RunProgram(argv, std::chrono::seconds(60), Env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string name = r.out.substr(0, r.out.find('\n'));
  EXPECT_EQ(name.rfind("gpudoctor-bundle-", 0), 0u) << name;
  EXPECT_EQ(name.size() - name.rfind("Z.tar.gz"), 8u) << name;
  std::string path = dir_.path() + "/" + name;
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/none.db"));  // read-only: never created
  auto list = RunProgram({"/bin/tar", "-xzOf", path, "MANIFEST.txt"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("no history: " + dir_.path() + "/none.db does not exist"),
            std::string::npos)
      << list.out;
  EXPECT_EQ(RunProgram({"/bin/tar", "-tzf", path}).out.find("history/"), std::string::npos);
}

TEST_F(BundleE2eTest, UnwritableOutputExits3) {
  std::vector<std::string> bundle = {"bundle", "-o", dir_.path() + "/no/such/dir/b.tar.gz"};
  for (const auto& f : Flags()) bundle.push_back(f);
  auto r = RunGpudoctor(bundle, std::chrono::seconds(60), Env());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("no/such/dir/b.tar.gz.partial"), std::string::npos) << r.err;
}

TEST_F(BundleE2eTest, ExistingOutputIsNotReplacedAndExits3) {
  // As root, `bundle -o /etc/gpudoctor/config.toml` must not destroy the config.
  std::string target = dir_.path() + "/gpudoctor.toml";
  std::string before = ReadFileOrDie(target);
  std::vector<std::string> bundle = {"bundle", "-o", target};
  for (const auto& f : Flags()) bundle.push_back(f);
  auto r = RunGpudoctor(bundle, std::chrono::seconds(60), Env());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("gpudoctor.toml exists"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFileOrDie(target), before);
  EXPECT_FALSE(std::filesystem::exists(target + ".partial"));

  // A leftover or concurrent .partial is refused, not removed.
  std::string out = dir_.path() + "/b.tar.gz";
  dir_.Write("b.tar.gz.partial", "another bundle\n");
  bundle[2] = out;
  r = RunGpudoctor(bundle, std::chrono::seconds(60), Env());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("b.tar.gz.partial exists (another bundle running?)"), std::string::npos)
      << r.err;
  EXPECT_EQ(ReadFileOrDie(out + ".partial"), "another bundle\n");
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace gpudoctor
