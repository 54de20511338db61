// End-to-end: `gpudoctor check --slurm` against a real slurmctld + slurmd (Debian slurm-wlm)
// with munge, all started here on loopback with a one-node config in a temp dir and killed at
// the end. Shows the node drained with our reason on a crit finding, left alone when someone
// else drained it, and resumed when the finding clears. Skipped (with the reason printed) when
// the daemons are missing or we are not root.
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "host_fixture.h"
#include "test_util.h"

extern char** environ;

namespace gpudoctor {
namespace {

using testing::FixturePath;
using testing::RunGpudoctor;
using testing::RunProgram;
using testing::RunResult;
using testing::TempDir;

bool Executable(const std::string& p) { return access(p.c_str(), X_OK) == 0; }

class SlurmCluster {
 public:
  ~SlurmCluster() {
    for (auto it = pids_.rbegin(); it != pids_.rend(); ++it) {
      kill(*it, SIGTERM);
      for (int i = 0; i < 50; ++i) {
        if (waitpid(*it, nullptr, WNOHANG) == *it) break;
        if (i == 49) {
          kill(*it, SIGKILL);
          waitpid(*it, nullptr, 0);
        }
        usleep(50000);
      }
    }
  }

  // Empty on success, else why it could not start.
  std::string Start() {
    for (const char* p :
         {"/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/bin/scontrol"}) {
      if (!Executable(p))
        return std::string(p) + " not installed (apt-get install slurm-wlm munge)";
    }
    if (geteuid() != 0) return "needs root to run munged/slurmd";
    const std::string d = dir_.path();
    dir_.MakeDir("state");
    dir_.MakeDir("spool");
    {
      std::ofstream key(d + "/munge.key", std::ios::binary);
      std::ifstream rnd("/dev/urandom", std::ios::binary);
      char buf[1024];
      rnd.read(buf, sizeof buf);
      key.write(buf, sizeof buf);
    }
    chmod((d + "/munge.key").c_str(), 0400);
    chmod(d.c_str(), 0755);
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    std::string h = host;
    h = h.substr(0, h.find('.'));
    uint16_t ctld_port = FreePort(), slurmd_port = FreePort();
    conf_ = d + "/slurm.conf";
    dir_.Write("slurm.conf",
               "ClusterName=gdtest\nSlurmctldHost=" + h + "(127.0.0.1)\nSlurmctldPort=" +
                   std::to_string(ctld_port) + "\nSlurmdPort=" + std::to_string(slurmd_port) +
                   "\nSlurmUser=root\nAuthType=auth/munge\nCredType=cred/munge\n"
                   "AuthInfo=socket=" +
                   d + "/munge.sock\nStateSaveLocation=" + d + "/state\nSlurmdSpoolDir=" + d +
                   "/spool\nSlurmctldPidFile=" + d + "/slurmctld.pid\nSlurmdPidFile=" + d +
                   "/slurmd.pid\nSlurmctldLogFile=" + d + "/slurmctld.log\nSlurmdLogFile=" + d +
                   "/slurmd.log\nProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
                   "SelectType=select/linear\nJobAcctGatherType=jobacct_gather/none\n"
                   "MpiDefault=none\nReturnToService=2\n"
                   "NodeName=gdnode NodeHostname=" +
                   h +
                   " NodeAddr=127.0.0.1 CPUs=1 RealMemory=100 State=UNKNOWN\n"
                   "PartitionName=debug Nodes=gdnode Default=YES State=UP\n");
    setenv("SLURM_CONF", conf_.c_str(), 1);
    Spawn({"/usr/sbin/munged", "--foreground", "--force", "--socket=" + d + "/munge.sock",
           "--key-file=" + d + "/munge.key", "--pid-file=" + d + "/munged.pid",
           "--log-file=" + d + "/munged.log", "--seed-file=" + d + "/munge.seed"});
    if (!WaitFor([&] { return access((d + "/munge.sock").c_str(), F_OK) == 0; })) {
      return "munged did not start";
    }
    Spawn({"/usr/sbin/slurmctld", "-D", "-i", "-f", conf_});
    Spawn({"/usr/sbin/slurmd", "-D", "-N", "gdnode", "-f", conf_});
    if (!WaitFor([&] { return State().find("IDLE") != std::string::npos; })) {
      return "slurmctld/slurmd did not bring gdnode up: " + Show();
    }
    return "";
  }

  std::string Show() {
    RunResult r = RunProgram({"/usr/bin/scontrol", "show", "node", "-o", "gdnode"},
                             std::chrono::seconds(10), {{"SLURM_CONF", conf_}});
    return r.out + r.err;
  }
  std::string State() {
    std::string s = Show();
    size_t p = s.find("State=");
    return p == std::string::npos ? "" : s.substr(p, s.find(' ', p) - p);
  }
  std::string Reason() {
    std::string s = Show();
    size_t p = s.find("Reason=");
    return p == std::string::npos ? "" : s.substr(p + 7);
  }
  void Scontrol(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/scontrol"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunProgram(argv, std::chrono::seconds(10), {{"SLURM_CONF", conf_}});
  }
  const std::string& conf() const { return conf_; }

 private:
  static uint16_t FreePort() {
    uint16_t port = 0;
    int fd = testing::BindLoopback(0, &port);
    close(fd);
    return port;
  }
  void Spawn(const std::vector<std::string>& argv) {
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    pid_t pid = 0;
    std::string log = dir_.path() + "/spawn.log";
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (posix_spawn(&pid, a[0], &fa, nullptr, a.data(), environ) == 0) pids_.push_back(pid);
    posix_spawn_file_actions_destroy(&fa);
  }
  template <typename F>
  static bool WaitFor(F ready) {
    for (int i = 0; i < 100; ++i) {
      if (ready()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }

  TempDir dir_;
  std::string conf_;
  std::vector<pid_t> pids_;
};

RunResult CheckSlurm(const std::string& scenario, const std::string& conf) {
  std::string lib = std::string(GPUDOCTOR_BUILD_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1";
  return RunGpudoctor(
      {"check", "--slurm", "--slurm-node", "gdnode", "--scontrol", "/usr/bin/scontrol", "--probes",
       "nvml,pci_gpu", "--nvml-lib", lib, "--path.sysfs", FixturePath("sysfs/hgx_h100")},
      std::chrono::seconds(60),
      {{"FAKE_NVML_SCENARIO", FixturePath("nvml/" + scenario)}, {"SLURM_CONF", conf}});
}

TEST(SlurmE2eTest, DrainsOnCritAndResumesWhatItDrained) {
  SlurmCluster cluster;
  std::string why = cluster.Start();
  if (!why.empty()) GTEST_SKIP() << "cannot start slurmctld/slurmd: " << why;

  RunResult healthy = CheckSlurm("h100_healthy.scenario", cluster.conf());
  EXPECT_EQ(healthy.exit_code, 0) << healthy.err;
  EXPECT_EQ(healthy.out, "");  // silent when healthy
  EXPECT_EQ(cluster.State().find("DRAIN"), std::string::npos);

  RunResult sick = CheckSlurm("ecc_dbe.scenario", cluster.conf());
  EXPECT_EQ(sick.exit_code, 2) << sick.err;
  EXPECT_NE(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
  EXPECT_EQ(cluster.Reason().rfind("gpudoctor: gpu.ecc.dbe GPU1 0000:2a:00.0", 0), 0u)
      << cluster.Show();

  RunResult cleared = CheckSlurm("h100_healthy.scenario", cluster.conf());
  EXPECT_EQ(cleared.exit_code, 0) << cleared.err;
  EXPECT_NE(cleared.err.find("resumed gdnode"), std::string::npos) << cleared.err;
  EXPECT_EQ(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
}

TEST(SlurmE2eTest, LeavesSomeoneElsesDrainAlone) {
  SlurmCluster cluster;
  std::string why = cluster.Start();
  if (!why.empty()) GTEST_SKIP() << "cannot start slurmctld/slurmd: " << why;
  cluster.Scontrol({"update", "nodename=gdnode", "state=drain", "reason=fan replacement"});
  ASSERT_NE(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();

  RunResult healthy = CheckSlurm("h100_healthy.scenario", cluster.conf());
  EXPECT_EQ(healthy.exit_code, 0);
  RunResult sick = CheckSlurm("ecc_dbe.scenario", cluster.conf());
  EXPECT_EQ(sick.exit_code, 2);
  EXPECT_NE(sick.err.find("drained by someone else"), std::string::npos) << sick.err;
  EXPECT_NE(cluster.State().find("DRAIN"), std::string::npos);
  EXPECT_EQ(cluster.Reason().rfind("fan replacement", 0), 0u) << cluster.Show();
}

RunResult CheckProbes(const std::vector<std::string>& extra, const std::string& conf) {
  std::string lib = std::string(GPUDOCTOR_BUILD_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1";
  std::vector<std::string> argv = {"check", "--nvml-lib", lib, "--path.sysfs",
                                   FixturePath("sysfs/hgx_h100")};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return RunGpudoctor(
      argv, std::chrono::seconds(60),
      {{"FAKE_NVML_SCENARIO", FixturePath("nvml/h100_healthy.scenario")}, {"SLURM_CONF", conf}});
}

TEST(SlurmE2eTest, BusyCpuAndFullDiskNeverDrain) {
  SlurmCluster cluster;
  std::string why = cluster.Start();
  if (!why.empty()) GTEST_SKIP() << "cannot start slurmctld/slurmd: " << why;
  const std::vector<std::string> slurm = {"--slurm", "--slurm-node", "gdnode", "--scontrol",
                                          "/usr/bin/scontrol"};
  // A CPU-saturated host (the cpu-saturated fixture: 99% busy, CPU pressure high) drains nothing.
  for (bool slurm_mode : {false, true}) {
    testing::HostFixture fx("cpu-saturated");
    fx.ArmSecondSamples();
    std::vector<std::string> argv = {"check", "--sample-ms", "300", "--probes", "cpu,pressure"};
    for (const auto& f : fx.PathFlags()) argv.push_back(f);
    if (slurm_mode) {
      argv.insert(argv.end(), slurm.begin(), slurm.end());
    } else {
      argv.push_back("--json");
    }
    RunResult r = RunGpudoctor(argv, std::chrono::seconds(60), {{"SLURM_CONF", cluster.conf()}});
    if (!slurm_mode) {
      // The findings are there (so this test can fail), with actions that keep the node in.
      EXPECT_NE(r.out.find("\"host.cpu.saturated\""), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("\"host.pressure.cpu\""), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("\"action\": \"watch\""), std::string::npos) << r.out;
      continue;
    }
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
  }
  // A full filesystem: a 1 MiB tmpfs filled to the last block, named by a procfs fixture's
  // mount table (statvfs goes to the real mount).
  TempDir dir;
  std::string mnt = dir.path() + "/full";
  ASSERT_EQ(mkdir(mnt.c_str(), 0755), 0);
  if (mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=1m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs for the full-disk case: " << std::strerror(errno);
  }
  {
    std::ofstream fill(mnt + "/fill", std::ios::binary);
    std::string block(4096, 'x');
    for (int i = 0; i < 512 && fill.write(block.data(), block.size()); ++i) {
    }
  }
  std::string proc = dir.path() + "/proc";
  ASSERT_EQ(mkdir(proc.c_str(), 0755), 0);
  std::ofstream(proc + "/mounts") << "tmpfs " << mnt << " tmpfs rw,relatime,size=1024k 0 0\n";
  RunResult seen = CheckProbes({"--probes", "disk,nvml,pci_gpu", "--json", "--path.procfs", proc},
                               cluster.conf());
  EXPECT_NE(seen.out.find("\"host.disk.full\""), std::string::npos) << seen.out;
  std::vector<std::string> argv = {"--probes", "disk,nvml,pci_gpu", "--path.procfs", proc};
  argv.insert(argv.end(), slurm.begin(), slurm.end());
  RunResult full = CheckProbes(argv, cluster.conf());
  umount2(mnt.c_str(), MNT_DETACH);
  EXPECT_EQ(full.exit_code, 0) << full.err;
  EXPECT_EQ(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();

  // A double-bit ECC error in the same cluster does drain (the action is drain_reset).
  RunResult sick = CheckSlurm("ecc_dbe.scenario", cluster.conf());
  EXPECT_EQ(sick.exit_code, 2) << sick.err;
  EXPECT_NE(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
}

}  // namespace
}  // namespace gpudoctor
