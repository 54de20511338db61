// check --npd --connect: node-problem-detector's rules answered by a real `gpudoctor watch` on
// 127.0.0.1 (fake NVML with GPU 1's uncorrectable ECC errors, a fixture host root whose kernel
// log has a NIC transmit timeout, i.e. a warn in the network layer). The problem condition, the
// warnings condition (the warn reaching the line NPD puts in the condition's message), a token,
// and an unreachable or silent watch answered with exit 2 within the deadline.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "bad_server.h"
#include "child_process.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using testing::FixturePath;
using testing::RunGpudoctor;
using testing::RunResult;

using testing::FreePort;

// `gpudoctor watch` in the background; SIGTERM then SIGKILL on destruction.
class Watch {
 public:
  Watch(const std::vector<std::string>& args, const std::string& scenario, const std::string& log) {
    pid_ = ::fork();
    if (pid_ == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::setenv("FAKE_NVML_SCENARIO", scenario.c_str(), 1);
      std::vector<std::string> argv = {GPUDOCTOR_BIN, "watch"};
      argv.insert(argv.end(), args.begin(), args.end());
      std::vector<char*> c;
      for (auto& a : argv) c.push_back(a.data());
      c.push_back(nullptr);
      ::execv(c[0], c.data());
      ::_exit(127);
    }
  }
  ~Watch() {
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }

 private:
  pid_t pid_ = -1;
};

class NpdConnectE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/npd_connect_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ + "/root/dev");
    std::filesystem::copy_file(FixturePath("kmsg/kmsg_raw_r570_b200.log"), dir_ + "/root/dev/kmsg");
    port_ = FreePort();
    url_ = "http://127.0.0.1:" + std::to_string(port_);
  }
  void TearDown() override {
    watch_.reset();
    std::filesystem::remove_all(dir_);
  }
  void StartWatch(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {
        "--listen",
        "127.0.0.1:" + std::to_string(port_),
        "--interval",
        "1",
        "--no-db",
        "--probes",
        "nvml,pci_gpu,kmsg",
        "--nvml-lib",
        std::string(GPUDOCTOR_BUILD_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1",
        "--path.sysfs",
        FixturePath("sysfs/hgx_h100"),
        "--path.rootfs",
        dir_ + "/root",
        "--kmsg-source",
        "kmsg"};
    args.insert(args.end(), extra.begin(), extra.end());
    watch_ =
        std::make_unique<Watch>(args, FixturePath("nvml/ecc_dbe.scenario"), dir_ + "/watch.log");
  }
  std::string WatchLog() const {
    std::ifstream in(dir_ + "/watch.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  RunResult Npd(const std::vector<std::string>& extra, const std::string& url = "") {
    std::vector<std::string> args = {"check", "--npd", "--connect", url.empty() ? url_ : url};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunGpudoctor(args, std::chrono::seconds(30));
  }
  // Waits (30 s: ticks stretch on a loaded machine) until the rule stops answering unknown.
  RunResult NpdOnceUp(const std::vector<std::string>& extra) {
    RunResult r;
    for (int i = 0; i < 60; ++i) {
      r = Npd(extra);
      if (r.exit_code != 2) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return r;
  }
  std::string dir_, url_;
  int port_ = 0;
  std::unique_ptr<Watch> watch_;
};

TEST_F(NpdConnectE2eTest, ProblemAndWarningConditionsFromTheWatch) {
  StartWatch();
  RunResult hw = NpdOnceUp({"--npd-layer", "hardware"});
  EXPECT_EQ(hw.exit_code, 1) << hw.out << hw.err << WatchLog();
  EXPECT_EQ(hw.out.rfind("gpu.ecc.dbe GPU1 [drain_reset]: ", 0), 0u) << hw.out;
  EXPECT_EQ(std::count(hw.out.begin(), hw.out.end(), '\n'), 1);
  EXPECT_LE(hw.out.size(), 201u);

  // The network layer has only a warn: the problem condition stays False (exit 0; NPD shows
  // its default message), the warnings condition is True with the warning as its message.
  RunResult net = Npd({"--npd-layer", "network"});
  EXPECT_EQ(net.exit_code, 0) << net.out << net.err;
  EXPECT_EQ(net.out, "ok (warn: net.link)\n");
  RunResult warn = Npd({"--npd-warnings", "--npd-layer", "network"});
  EXPECT_EQ(warn.exit_code, 1) << warn.out << warn.err;
  EXPECT_EQ(warn.out.rfind("net.link [watch]: interface enp1s0f0", 0), 0u) << warn.out;
  RunResult quiet = Npd({"--npd-warnings", "--npd-layer", "software"});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.out << quiet.err;
  EXPECT_EQ(quiet.out, "no warnings\n");

  // The same answers as a local check of the same host (no layer: everything).
  RunResult local = RunGpudoctor(
      {"check", "--npd", "--probes", "nvml,pci_gpu,kmsg", "--nvml-lib",
       std::string(GPUDOCTOR_BUILD_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1", "--path.sysfs",
       FixturePath("sysfs/hgx_h100"), "--path.rootfs", dir_ + "/root", "--kmsg-source", "kmsg"},
      std::chrono::seconds(30), {{"FAKE_NVML_SCENARIO", FixturePath("nvml/ecc_dbe.scenario")}});
  RunResult remote = Npd({});
  EXPECT_EQ(local.exit_code, remote.exit_code) << local.out << remote.out;
  EXPECT_EQ(local.out.substr(0, local.out.find(':')), remote.out.substr(0, remote.out.find(':')));
}

TEST_F(NpdConnectE2eTest, UnreachableOrSilentWatchIsUnknownWithinTheDeadline) {
  // Nothing listens on the port.
  RunResult down = Npd({"--npd-layer", "hardware", "--deadline", "3"});
  EXPECT_EQ(down.exit_code, 2) << down.out << down.err;
  EXPECT_EQ(down.out.rfind("unknown: gpudoctor could not run: ", 0), 0u) << down.out;
  EXPECT_NE(down.out.find("127.0.0.1:" + std::to_string(port_)), std::string::npos) << down.out;
  EXPECT_LT(down.seconds, 3.5);

  // A server that accepts and then trickles: cut at the deadline, never a hang.
  testing::BadServer slow(testing::BadServer::Mode::kTrickle, "", std::chrono::milliseconds(500));
  RunResult stuck = Npd({"--npd-layer", "hardware", "--deadline", "2"}, slow.url());
  EXPECT_EQ(stuck.exit_code, 2) << stuck.out << stuck.err;
  EXPECT_EQ(stuck.out.rfind("unknown: ", 0), 0u) << stuck.out;
  EXPECT_LT(stuck.seconds, 4.0);
  EXPECT_EQ(std::count(stuck.out.begin(), stuck.out.end(), '\n'), 1);

  // --connect belongs to --npd on check.
  RunResult alone = RunGpudoctor({"check", "--connect", url_});
  EXPECT_EQ(alone.exit_code, 3) << alone.err;
  EXPECT_NE(alone.err.find("--npd"), std::string::npos) << alone.err;
}

TEST_F(NpdConnectE2eTest, TokenProtectedWatch) {
  std::string token = dir_ + "/token";
  std::ofstream(token) << "s3cret-token-for-npd\n";
  ::chmod(token.c_str(), 0600);
  StartWatch({"--token-file", token});
  RunResult ok = NpdOnceUp({"--npd-layer", "hardware", "--token-file", token});
  EXPECT_EQ(ok.exit_code, 1) << ok.out << ok.err << WatchLog();
  EXPECT_EQ(ok.out.rfind("gpu.ecc.dbe GPU1", 0), 0u) << ok.out;
  RunResult none = Npd({"--npd-layer", "hardware"});
  EXPECT_EQ(none.exit_code, 2) << none.out;
  EXPECT_NE(none.out.find("token"), std::string::npos) << none.out;
}

}  // namespace
}  // namespace gpudoctor
