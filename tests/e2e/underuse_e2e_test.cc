// gpu.util.underused and gpu.memory.thrashing end to end: `gpudoctor watch` on the fake NVML with
// short windows (3 s); the live scenario turns from a busy node (nothing opens) to GPU 2 at 30%
// while PCIe pushes 30 GB/s into it (underused, limiter "transfers"), then to GPU 5 with full
// memory and PCIe busy both ways (thrashing). The history names the right GPU for each and no
// other GPU.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "atomic_file.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using std::chrono::milliseconds;
using testing::RunGpudoctor;
using testing::TempDir;
using testing::WriteScenario;  // atomic: the fake never sees half a file

std::string ReadLog(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

pid_t StartWatch(const TempDir& dir, const std::string& scenario, const std::string& err) {
  pid_t pid = fork();
  if (pid == 0) {
    setenv("FAKE_NVML_SCENARIO", scenario.c_str(), 1);
    int fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    std::vector<std::string> args = {
        GPUDOCTOR_BIN, "watch",
        "--interval",  "0.3",
        "--db",        dir.path() + "/history.db",
        "--nvml-lib",  std::string(GPUDOCTOR_BUILD_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1",
        "--probes",    "nvml",
        "--config",    dir.path() + "/gpudoctor.toml",
        "--listen",    "off"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

int Stop(pid_t pid) {
  kill(pid, SIGTERM);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  int status = 0;
  while (std::chrono::steady_clock::now() < until) {
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -2;
}

bool Eventually(const std::function<bool()>& cond) {
  return testing::WaitUntil(cond, std::chrono::seconds(40), milliseconds(100));
}

TEST(UnderuseE2eTest, UnderusedAndThrashingOpenOnTheRightGpuUnderWatch) {
  TempDir dir;
  dir.Write("gpudoctor.toml",
            "[finding.\"gpu.util.underused\"]\nwindow_s = 3\nresolve_after_s = 1\n"
            "[finding.\"gpu.memory.thrashing\"]\nwindow_s = 3\nresolve_after_s = 1\n");
  std::string scenario = dir.path() + "/live.scenario";
  std::string err = dir.path() + "/err.log";
  WriteScenario(scenario, "h100_busy.scenario");
  pid_t pid = StartWatch(dir, scenario, err);
  // A busy node for more than a window: nothing opens.
  std::this_thread::sleep_for(std::chrono::seconds(5));
  EXPECT_EQ(ReadLog(err).find("gpu.util.underused"), std::string::npos) << ReadLog(err);
  EXPECT_EQ(ReadLog(err).find("gpu.memory.thrashing"), std::string::npos) << ReadLog(err);

  WriteScenario(scenario, "underused.scenario");
  EXPECT_TRUE(Eventually([&] {
    return ReadLog(err).find("opened gpu.util.underused") != std::string::npos;
  })) << ReadLog(err);
  WriteScenario(scenario, "thrashing.scenario");
  EXPECT_TRUE(Eventually([&] {
    std::string log = ReadLog(err);
    return log.find("opened gpu.memory.thrashing") != std::string::npos &&
           log.find("resolved gpu.util.underused") != std::string::npos;
  })) << ReadLog(err);
  EXPECT_EQ(Stop(pid), 0) << ReadLog(err);

  auto h = RunGpudoctor({"history", "--db", dir.path() + "/history.db", "--findings", "--json"});
  ASSERT_EQ(h.exit_code, 0) << h.err;
  auto j = nlohmann::json::parse(h.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << h.out;
  int underused = 0, thrashing = 0;
  for (const auto& t : j.is_array() ? j : j["findings"]) {
    const auto& f = t["finding"];
    if (f["id"] == "gpu.util.underused") {
      ++underused;
      EXPECT_EQ(f["gpu"]["index"], 2) << f.dump(2);
      EXPECT_EQ(f["evidence"]["limiter"], "transfers") << f.dump(2);
      // The last firing's window: 30% since the fault, with a few busy ticks once it cleared.
      EXPECT_GE(f["evidence"]["mean_util_pct"].get<double>(), 30) << f.dump(2);
      EXPECT_LT(f["evidence"]["mean_util_pct"].get<double>(), 40) << f.dump(2);
      EXPECT_NE(f["summary"].get<std::string>().find("% busy on average"), std::string::npos)
          << f.dump(2);
      EXPECT_NE(f["summary"].get<std::string>().find("of the link"), std::string::npos)
          << f.dump(2);
      EXPECT_EQ(t["state"], "resolved");
    }
    if (f["id"] == "gpu.memory.thrashing") {
      ++thrashing;
      EXPECT_EQ(f["gpu"]["index"], 5) << f.dump(2);
      EXPECT_GE(f["evidence"]["mean_used_pct"].get<double>(), 96) << f.dump(2);
      EXPECT_GE(f["evidence"]["pcie_h2d_mean_bytes_per_s"].get<double>(), 7e9) << f.dump(2);
    }
  }
  EXPECT_EQ(underused, 1) << j.dump(2);
  EXPECT_EQ(thrashing, 1) << j.dump(2);
}

}  // namespace
}  // namespace gpudoctor
