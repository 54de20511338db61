// End-to-end: `gpudoctor check --slurm` against a real slurmctld + slurmd (Debian slurm-wlm)
// with munge, all started here on loopback with a one-node config in a temp dir and killed at
// the end. Shows the node drained with our reason on a crit finding, left alone when someone
// else drained it, and resumed when the finding clears. Skipped (with the reason printed) when
// the daemons are missing or we are not root.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>

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

}  // namespace
}  // namespace gpudoctor
