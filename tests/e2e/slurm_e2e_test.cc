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
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
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

// The state directory of every check in one test (the drain record lives there).
std::string StateDir(const TempDir& dir) { return dir.path() + "/gpudoctor-state"; }

RunResult CheckSlurm(const std::string& scenario, const std::string& conf,
                     const std::string& state_dir) {
  std::string lib = std::string(GPUDOCTOR_BUILD_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1";
  return RunGpudoctor(
      {"check", "--slurm", "--slurm-node", "gdnode", "--scontrol", "/usr/bin/scontrol", "--probes",
       "nvml,pci_gpu", "--nvml-lib", lib, "--path.sysfs", FixturePath("sysfs/hgx_h100"),
       "--state-dir", state_dir},
      std::chrono::seconds(60),
      {{"FAKE_NVML_SCENARIO", FixturePath("nvml/" + scenario)}, {"SLURM_CONF", conf}});
}

std::string RecordPath(const std::string& state_dir) {
  return state_dir + "/slurm-drain-gdnode.txt";
}
bool HasRecord(const std::string& state_dir) {
  return access(RecordPath(state_dir).c_str(), F_OK) == 0;
}

TEST(SlurmE2eTest, DrainsOnCritAndResumesWhatItDrained) {
  SlurmCluster cluster;
  std::string why = cluster.Start();
  if (!why.empty()) GTEST_SKIP() << "cannot start slurmctld/slurmd: " << why;
  TempDir dir;
  const std::string state = StateDir(dir);

  RunResult healthy = CheckSlurm("h100_healthy.scenario", cluster.conf(), state);
  EXPECT_EQ(healthy.exit_code, 0) << healthy.err;
  EXPECT_EQ(healthy.out, "");  // silent when healthy
  EXPECT_EQ(cluster.State().find("DRAIN"), std::string::npos);

  EXPECT_FALSE(HasRecord(state));
  RunResult sick = CheckSlurm("ecc_dbe.scenario", cluster.conf(), state);
  EXPECT_EQ(sick.exit_code, 2) << sick.err;
  EXPECT_NE(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
  EXPECT_EQ(cluster.Reason().rfind("gpudoctor: gpu.ecc.dbe GPU1 0000:2a:00.0", 0), 0u)
      << cluster.Show();
  // Our drain is on record, with the reason exactly as given to scontrol.
  ASSERT_TRUE(HasRecord(state));
  std::string record = testing::ReadFileOrDie(RecordPath(state));
  EXPECT_EQ(record.rfind("gpudoctor-slurm-drain 1\nnode=gdnode\n"
                         "reason=gpudoctor: gpu.ecc.dbe GPU1 0000:2a:00.0\ndrained_at=",
                         0),
            0u)
      << record;

  // Still sick: stays drained, not drained again.
  RunResult again = CheckSlurm("ecc_dbe.scenario", cluster.conf(), state);
  EXPECT_EQ(again.exit_code, 2) << again.err;
  EXPECT_NE(again.err.find("stays drained"), std::string::npos) << again.err;

  RunResult cleared = CheckSlurm("h100_healthy.scenario", cluster.conf(), state);
  EXPECT_EQ(cleared.exit_code, 0) << cleared.err;
  EXPECT_NE(cleared.err.find("resumed gdnode"), std::string::npos) << cleared.err;
  EXPECT_EQ(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
  EXPECT_FALSE(HasRecord(state));  // resumed: the record is gone
}

// An admin drain whose reason is word for word what gpudoctor would write is still the admin's:
// no record says we set it, so it is never resumed (nor taken over when a fault appears).
TEST(SlurmE2eTest, AdminDrainWithOurPrefixIsNeverResumed) {
  SlurmCluster cluster;
  std::string why = cluster.Start();
  if (!why.empty()) GTEST_SKIP() << "cannot start slurmctld/slurmd: " << why;
  TempDir dir;
  const std::string state = StateDir(dir);
  const std::string reason = "gpudoctor: gpu.ecc.dbe GPU1 0000:2a:00.0";
  cluster.Scontrol({"update", "nodename=gdnode", "state=drain", "reason=" + reason});
  ASSERT_NE(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();

  for (int run = 0; run < 2; ++run) {
    RunResult healthy = CheckSlurm("h100_healthy.scenario", cluster.conf(), state);
    EXPECT_EQ(healthy.exit_code, 0) << healthy.err;
    EXPECT_NE(healthy.err.find("which gpudoctor did not set (no drain record in " + state + ")"),
              std::string::npos)
        << healthy.err;
    EXPECT_NE(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
  }
  RunResult sick = CheckSlurm("ecc_dbe.scenario", cluster.conf(), state);
  EXPECT_EQ(sick.exit_code, 2) << sick.err;
  EXPECT_NE(sick.err.find("already drained by someone else"), std::string::npos) << sick.err;
  EXPECT_FALSE(HasRecord(state));  // the admin's drain was not adopted
  RunResult healthy = CheckSlurm("h100_healthy.scenario", cluster.conf(), state);
  EXPECT_EQ(healthy.exit_code, 0) << healthy.err;
  EXPECT_NE(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
  EXPECT_EQ(cluster.Reason().rfind(reason, 0), 0u) << cluster.Show();
}

// A corrupt or missing record means "not ours": the node stays drained, with a message that
// names the record and what is wrong with it.
TEST(SlurmE2eTest, CorruptOrMissingRecordIsNotOurs) {
  SlurmCluster cluster;
  std::string why = cluster.Start();
  if (!why.empty()) GTEST_SKIP() << "cannot start slurmctld/slurmd: " << why;
  TempDir dir;
  const std::string state = StateDir(dir);
  RunResult sick = CheckSlurm("ecc_dbe.scenario", cluster.conf(), state);
  ASSERT_EQ(sick.exit_code, 2) << sick.err;
  ASSERT_TRUE(HasRecord(state));
  // Cut the record mid-line, as a torn write would (the real writer renames, so it never does).
  std::string record = testing::ReadFileOrDie(RecordPath(state));
  { std::ofstream(RecordPath(state), std::ios::trunc) << record.substr(0, record.size() / 2); }
  RunResult corrupt = CheckSlurm("h100_healthy.scenario", cluster.conf(), state);
  EXPECT_EQ(corrupt.exit_code, 0) << corrupt.err;
  EXPECT_NE(corrupt.err.find("drain record unusable: " + RecordPath(state) + ": "),
            std::string::npos)
      << corrupt.err;
  EXPECT_NE(corrupt.err.find("left drained"), std::string::npos) << corrupt.err;
  EXPECT_NE(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();

  ASSERT_EQ(unlink(RecordPath(state).c_str()), 0);
  RunResult missing = CheckSlurm("h100_healthy.scenario", cluster.conf(), state);
  EXPECT_EQ(missing.exit_code, 0) << missing.err;
  EXPECT_NE(missing.err.find("no drain record"), std::string::npos) << missing.err;
  EXPECT_NE(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
}

// Our drain resumed by hand leaves a stale record; the next check forgets it, so that a later
// admin drain with the same words is not resumed. A record that cannot be written (the state
// directory is unusable) leaves the node drained and says it will not be resumed.
TEST(SlurmE2eTest, StaleRecordIsForgottenAndUnwritableRecordIsSaid) {
  SlurmCluster cluster;
  std::string why = cluster.Start();
  if (!why.empty()) GTEST_SKIP() << "cannot start slurmctld/slurmd: " << why;
  TempDir dir;
  const std::string state = StateDir(dir);
  ASSERT_EQ(CheckSlurm("ecc_dbe.scenario", cluster.conf(), state).exit_code, 2);
  std::string reason = cluster.Reason().substr(0, cluster.Reason().find(" ["));
  cluster.Scontrol({"update", "nodename=gdnode", "state=resume"});
  ASSERT_EQ(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
  ASSERT_TRUE(HasRecord(state));
  RunResult healthy = CheckSlurm("h100_healthy.scenario", cluster.conf(), state);
  EXPECT_EQ(healthy.exit_code, 0) << healthy.err;
  EXPECT_FALSE(HasRecord(state));
  cluster.Scontrol({"update", "nodename=gdnode", "state=drain", "reason=" + reason});
  RunResult later = CheckSlurm("h100_healthy.scenario", cluster.conf(), state);
  EXPECT_NE(later.err.find("which gpudoctor did not set"), std::string::npos) << later.err;
  EXPECT_NE(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
  cluster.Scontrol({"update", "nodename=gdnode", "state=resume"});

  dir.Write("not-a-dir", "x");
  const std::string bad = dir.path() + "/not-a-dir/state";
  RunResult sick = CheckSlurm("ecc_dbe.scenario", cluster.conf(), bad);
  EXPECT_EQ(sick.exit_code, 2) << sick.err;
  EXPECT_NE(sick.err.find("could not record the drain"), std::string::npos) << sick.err;
  EXPECT_NE(sick.err.find("will not be resumed automatically"), std::string::npos) << sick.err;
  EXPECT_NE(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
  RunResult cleared = CheckSlurm("h100_healthy.scenario", cluster.conf(), bad);
  EXPECT_EQ(cleared.exit_code, 0) << cleared.err;
  EXPECT_NE(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
}

TEST(SlurmE2eTest, LeavesSomeoneElsesDrainAlone) {
  SlurmCluster cluster;
  std::string why = cluster.Start();
  if (!why.empty()) GTEST_SKIP() << "cannot start slurmctld/slurmd: " << why;
  cluster.Scontrol({"update", "nodename=gdnode", "state=drain", "reason=fan replacement"});
  ASSERT_NE(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();

  TempDir dir;
  RunResult healthy = CheckSlurm("h100_healthy.scenario", cluster.conf(), StateDir(dir));
  EXPECT_EQ(healthy.exit_code, 0);
  RunResult sick = CheckSlurm("ecc_dbe.scenario", cluster.conf(), StateDir(dir));
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
  TempDir state_tmp;
  const std::string state = StateDir(state_tmp);
  const std::vector<std::string> slurm = {
      "--slurm", "--slurm-node", "gdnode", "--scontrol", "/usr/bin/scontrol", "--state-dir", state};
  // A CPU-saturated host (the cpu-saturated fixture: 99% busy, CPU pressure high) drains
  // nothing, and never flaps: three health checks in a row, each silent with exit 0, the node
  // never drained in between and nothing recorded.
  for (int run = 0; run < 4; ++run) {
    bool slurm_mode = run > 0;
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
    EXPECT_EQ(r.out, "") << "run " << run;
    EXPECT_EQ(r.err.find("drained"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("resumed"), std::string::npos) << r.err;
    EXPECT_EQ(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
    EXPECT_FALSE(HasRecord(state));
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
  RunResult sick = CheckSlurm("ecc_dbe.scenario", cluster.conf(), state);
  EXPECT_EQ(sick.exit_code, 2) << sick.err;
  EXPECT_NE(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
}

// [node] required_mounts on the real cluster: a listed mount point missing from the mount table
// (a procfs fixture's) drains with host.mount.missing; mounted again, the node is resumed.
TEST(SlurmE2eTest, MissingRequiredMountDrainsAndResumes) {
  SlurmCluster cluster;
  std::string why = cluster.Start();
  if (!why.empty()) GTEST_SKIP() << "cannot start slurmctld/slurmd: " << why;
  TempDir dir;
  const std::string state = StateDir(dir);
  dir.Write("gpudoctor.toml", "[node]\nrequired_mounts = [\"/gd-e2e-scratch/\"]\n");
  dir.Write("proc/mounts", "/dev/root / ext4 rw,relatime 0 0\n");
  std::vector<std::string> argv = {"check",         "--slurm",
                                   "--slurm-node",  "gdnode",
                                   "--scontrol",    "/usr/bin/scontrol",
                                   "--state-dir",   state,
                                   "--probes",      "disk",
                                   "--path.procfs", dir.path() + "/proc",
                                   "--config",      dir.path() + "/gpudoctor.toml"};
  RunResult missing =
      RunGpudoctor(argv, std::chrono::seconds(60), {{"SLURM_CONF", cluster.conf()}});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
  EXPECT_EQ(cluster.Reason().rfind("gpudoctor: host.mount.missing /gd-e2e-scratch [", 0), 0u)
      << cluster.Show();

  dir.Write("proc/mounts",
            "/dev/root / ext4 rw,relatime 0 0\nserver:/export /gd-e2e-scratch nfs4 rw 0 0\n");
  RunResult back = RunGpudoctor(argv, std::chrono::seconds(60), {{"SLURM_CONF", cluster.conf()}});
  EXPECT_EQ(back.exit_code, 0) << back.err;
  EXPECT_NE(back.err.find("resumed gdnode"), std::string::npos) << back.err;
  EXPECT_EQ(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
}

// [network] ib_min_rate_gbps on the real cluster, sysfs fixture net/sysfs_ib_rate: mlx5_1/1
// trained at 100 Gb/s against 200 expected drains with net.ib.rate; the link retrained at
// 200 Gb/s resumes. The RoCE port and the unused DOWN port never drain.
TEST(SlurmE2eTest, DegradedInfinibandRateDrainsAndResumes) {
  SlurmCluster cluster;
  std::string why = cluster.Start();
  if (!why.empty()) GTEST_SKIP() << "cannot start slurmctld/slurmd: " << why;
  TempDir dir;
  const std::string state = StateDir(dir);
  const std::string sys = dir.path() + "/sys";
  ASSERT_EQ(RunProgram({"/bin/cp", "-r", FixturePath("net/sysfs_ib_rate"), sys}).exit_code, 0);
  dir.Write("gpudoctor.toml", "[network]\nib_min_rate_gbps = 200\n");
  std::vector<std::string> argv = {"check",        "--slurm",
                                   "--slurm-node", "gdnode",
                                   "--scontrol",   "/usr/bin/scontrol",
                                   "--state-dir",  state,
                                   "--probes",     "infiniband",
                                   "--path.sysfs", sys,
                                   "--config",     dir.path() + "/gpudoctor.toml"};
  RunResult slow = RunGpudoctor(argv, std::chrono::seconds(60), {{"SLURM_CONF", cluster.conf()}});
  EXPECT_EQ(slow.exit_code, 2) << slow.err;
  EXPECT_NE(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
  EXPECT_EQ(cluster.Reason().rfind("gpudoctor: net.ib.rate mlx5_1/1 [", 0), 0u) << cluster.Show();

  dir.Write("sys/class/infiniband/mlx5_1/ports/1/rate", "200 Gb/sec (4X HDR)\n");
  RunResult fixed = RunGpudoctor(argv, std::chrono::seconds(60), {{"SLURM_CONF", cluster.conf()}});
  EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_NE(fixed.err.find("resumed gdnode"), std::string::npos) << fixed.err;
  EXPECT_EQ(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
}

// NHC as HealthCheckProgram calling gpudoctor (deploy/slurm/gpudoctor.nhc). NHC (LBNL's
// lbnl-nhc) is not packaged in Debian 12, so the check file is sourced in bash with stub `die`
// and `log` functions defined the way NHC defines them, and check_gpudoctor is called as NHC's
// config line `* || check_gpudoctor ARGS` calls it. The real slurmctld shows that gpudoctor
// itself never drains in this setup (NHC owns the drain).
RunResult Nhc(const std::vector<std::string>& args, std::map<std::string, std::string> env) {
  std::string script =
      "die() { echo \"DIE[$1] $2\"; return 1; }\n"
      "log() { echo \"LOG $*\"; }\n"
      "source \"$0\" || exit 99\n"
      "check_gpudoctor \"$@\"\n"
      "echo \"rc=$?\"\n";
  std::vector<std::string> argv = {
      "/bin/bash", "-c", script, std::string(GPUDOCTOR_SOURCE_DIR) + "/deploy/slurm/gpudoctor.nhc"};
  argv.insert(argv.end(), args.begin(), args.end());
  if (!env.count("GPUDOCTOR_BIN")) env["GPUDOCTOR_BIN"] = GPUDOCTOR_BIN;
  return RunProgram(argv, std::chrono::seconds(60), env);
}

TEST(SlurmE2eTest, NhcCheckFailsOnFaultPassesOnBusyCpuAndNeverDrainsItself) {
  SlurmCluster cluster;
  std::string why = cluster.Start();
  if (!why.empty()) GTEST_SKIP() << "cannot start slurmctld/slurmd: " << why;
  bool real_nhc = Executable("/usr/sbin/nhc");
  std::printf("[ NOTE     ] %s\n",
              real_nhc ? "NHC is installed; check_gpudoctor is still tested by sourcing it with "
                         "stub die/log, as NHC sources its scripts"
                       : "NHC (lbnl-nhc) is not packaged in Debian 12: deploy/slurm/gpudoctor.nhc "
                         "is sourced in bash with stub die/log, the way NHC calls a check");
  std::string lib = std::string(GPUDOCTOR_BUILD_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1";
  const std::vector<std::string> gpu = {"--probes", "nvml,pci_gpu", "--nvml-lib",
                                        lib,        "--path.sysfs", FixturePath("sysfs/hgx_h100")};
  std::map<std::string, std::string> env = {{"SLURM_CONF", cluster.conf()}};

  env["FAKE_NVML_SCENARIO"] = FixturePath("nvml/ecc_dbe.scenario");
  RunResult sick = Nhc(gpu, env);
  EXPECT_EQ(sick.exit_code, 0) << sick.err;
  EXPECT_NE(sick.out.find("DIE[1] check_gpudoctor: gpudoctor: gpu.ecc.dbe GPU1 0000:2a:00.0\n"),
            std::string::npos)
      << sick.out << sick.err;
  EXPECT_NE(sick.out.find("rc=1\n"), std::string::npos) << sick.out;
  EXPECT_EQ(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();

  env["FAKE_NVML_SCENARIO"] = FixturePath("nvml/h100_healthy.scenario");
  RunResult healthy = Nhc(gpu, env);
  EXPECT_EQ(healthy.out, "rc=0\n") << healthy.err;

  {
    testing::HostFixture fx("cpu-saturated");
    fx.ArmSecondSamples();
    std::vector<std::string> args = {"--sample-ms", "300", "--probes", "cpu,pressure"};
    for (const auto& f : fx.PathFlags()) args.push_back(f);
    RunResult busy = Nhc(args, env);
    EXPECT_EQ(busy.out, "rc=0\n") << busy.err;
  }

  // gpudoctor cannot run: logged, the node stays in service, unless the site asks otherwise.
  std::vector<std::string> broken = gpu;
  broken.insert(broken.end(), {"--config", "/nonexistent/gpudoctor.toml"});
  RunResult tool = Nhc(broken, env);
  EXPECT_NE(tool.out.find("LOG check_gpudoctor: gpudoctor could not run (gpudoctor exited with 3)"),
            std::string::npos)
      << tool.out << tool.err;
  EXPECT_NE(tool.out.find("rc=0\n"), std::string::npos) << tool.out;
  env["GPUDOCTOR_FAIL_ON_TOOL_ERROR"] = "1";
  RunResult strict = Nhc(broken, env);
  EXPECT_NE(strict.out.find("DIE[1] check_gpudoctor: gpudoctor: tool failure"), std::string::npos)
      << strict.out;
  EXPECT_NE(strict.out.find("rc=1\n"), std::string::npos) << strict.out;
  env["GPUDOCTOR_BIN"] = "/nonexistent/gpudoctor";
  RunResult absent = Nhc(gpu, env);
  EXPECT_NE(absent.out.find("/nonexistent/gpudoctor is not an executable"), std::string::npos)
      << absent.out;
  EXPECT_EQ(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
}

// gpudoctor alone as HealthCheckProgram: the shipped wrapper (deploy/slurm/
// gpudoctor-slurm-healthcheck) execs `check --slurm`; slurmd runs it with no arguments, here with
// the test's flags appended (its "$@"). It drains and resumes by itself.
TEST(SlurmE2eTest, ShippedHealthCheckWrapperDrainsAndResumes) {
  SlurmCluster cluster;
  std::string why = cluster.Start();
  if (!why.empty()) GTEST_SKIP() << "cannot start slurmctld/slurmd: " << why;
  TempDir dir;
  // The wrapper calls /usr/local/bin/gpudoctor; run a copy whose path points at this build.
  std::string wrapper = testing::ReadFileOrDie(std::string(GPUDOCTOR_SOURCE_DIR) +
                                               "/deploy/slurm/gpudoctor-slurm-healthcheck");
  size_t at = wrapper.find("/usr/local/bin/gpudoctor");
  ASSERT_NE(at, std::string::npos) << wrapper;
  wrapper.replace(at, std::strlen("/usr/local/bin/gpudoctor"), GPUDOCTOR_BIN);
  dir.Write("healthcheck", wrapper);
  ASSERT_EQ(chmod((dir.path() + "/healthcheck").c_str(), 0755), 0);
  std::string lib = std::string(GPUDOCTOR_BUILD_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1";
  std::vector<std::string> argv = {dir.path() + "/healthcheck",
                                   "--slurm-node",
                                   "gdnode",
                                   "--scontrol",
                                   "/usr/bin/scontrol",
                                   "--state-dir",
                                   StateDir(dir),
                                   "--probes",
                                   "nvml,pci_gpu",
                                   "--nvml-lib",
                                   lib,
                                   "--path.sysfs",
                                   FixturePath("sysfs/hgx_h100")};
  RunResult sick = RunProgram(argv, std::chrono::seconds(60),
                              {{"SLURM_CONF", cluster.conf()},
                               {"FAKE_NVML_SCENARIO", FixturePath("nvml/ecc_dbe.scenario")}});
  EXPECT_EQ(sick.exit_code, 2) << sick.err;
  EXPECT_NE(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
  RunResult cleared =
      RunProgram(argv, std::chrono::seconds(60),
                 {{"SLURM_CONF", cluster.conf()},
                  {"FAKE_NVML_SCENARIO", FixturePath("nvml/h100_healthy.scenario")}});
  EXPECT_EQ(cleared.exit_code, 0) << cleared.err;
  EXPECT_EQ(cluster.State().find("DRAIN"), std::string::npos) << cluster.Show();
}

}  // namespace
}  // namespace gpudoctor
