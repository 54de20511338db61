// The fake NVML's scenario changes (tests/fake_nvml/fake_nvml.cc): a scenario rewritten, appended
// to, renamed into place, changed through a file it includes, or a FAKE_NVML_SCENARIO that names
// another file, is seen by the very next call in the same process, with no nvmlInit_v2 between
// and no wait: tests inject faults into a running watch and rewrite-then-call at once. Counter
// reads keep counting across a change. Both variants of the library (every symbol, minimal).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "nvml/abi.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using nvml::nvmlDevice_t;
using nvml::nvmlReturn_t;

std::string Lib(bool minimal) { return testing::FakeNvmlLib(minimal); }

class NvmlFakeScenarioTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("gpudoctor-fake-" + std::to_string(::getpid()) + "-" +
            std::to_string(reinterpret_cast<uintptr_t>(this)));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "now.scenario").string();
    Write(path_, "device_count=2\ngpu.*.power_mw=100\n");
    old_env_ = getenv("FAKE_NVML_SCENARIO") ? getenv("FAKE_NVML_SCENARIO") : "";
    setenv("FAKE_NVML_SCENARIO", path_.c_str(), 1);
    handle_ = dlopen(Lib(GetParam()).c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    init_ = reinterpret_cast<nvmlReturn_t (*)()>(dlsym(handle_, "nvmlInit_v2"));
    count_ = reinterpret_cast<nvmlReturn_t (*)(unsigned*)>(dlsym(handle_, "nvmlDeviceGetCount_v2"));
    by_index_ = reinterpret_cast<nvmlReturn_t (*)(unsigned, nvmlDevice_t*)>(
        dlsym(handle_, "nvmlDeviceGetHandleByIndex_v2"));
    power_ = reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, unsigned*)>(
        dlsym(handle_, "nvmlDeviceGetPowerUsage"));
    replay_ = reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, unsigned*)>(
        dlsym(handle_, "nvmlDeviceGetPcieReplayCounter"));
    ASSERT_TRUE(init_ && count_ && by_index_ && power_ && replay_);
    ASSERT_EQ(init_(), nvml::NVML_SUCCESS);
    ASSERT_EQ(by_index_(1, &dev_), nvml::NVML_SUCCESS);
  }
  void TearDown() override {
    setenv("FAKE_NVML_SCENARIO", old_env_.c_str(), 1);
    std::filesystem::remove_all(dir_);
    // The library stays loaded (other tests of this process use it); it re-reads at init.
  }

  static void Write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::trunc) << text;
  }
  // 0 when the call did not succeed.
  unsigned Power() {
    unsigned mw = 0;
    return power_(dev_, &mw) == nvml::NVML_SUCCESS ? mw : 0;
  }
  unsigned Count() {
    unsigned n = 0;
    return count_(&n) == nvml::NVML_SUCCESS ? n : 0;
  }

  std::filesystem::path dir_;
  std::string path_, old_env_;
  void* handle_ = nullptr;
  nvmlReturn_t (*init_)() = nullptr;
  nvmlReturn_t (*count_)(unsigned*) = nullptr;
  nvmlReturn_t (*by_index_)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*power_)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*replay_)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlDevice_t dev_ = nullptr;
};

TEST_P(NvmlFakeScenarioTest, ARewriteIsSeenByTheNextCall) {
  ASSERT_EQ(Power(), 100u);
  for (unsigned mw = 101; mw < 121; ++mw) {  // same size each time: no mtime/size luck needed
    Write(path_, "device_count=2\ngpu.*.power_mw=" + std::to_string(mw) + "\n");
    EXPECT_EQ(Power(), mw);
  }
  Write(path_, "device_count=2\ngpu.1.return.nvmlDeviceGetPowerUsage=15\n");
  unsigned mw = 0;
  EXPECT_EQ(power_(dev_, &mw), 15);  // a fault injected into a running process
  Write(path_, "device_count=2\ngpu.1.lost=1\n");
  EXPECT_EQ(power_(dev_, &mw), nvml::NVML_ERROR_GPU_IS_LOST);
}

// Another thread calling all the while (it may be the one that notices the change and be still
// re-reading it when this thread calls): every call after the rewrite sees it, on any thread.
TEST_P(NvmlFakeScenarioTest, ARewriteIsSeenByTheNextCallWhileOtherThreadsCall) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> others;
  for (int t = 0; t < 3; ++t) {
    others.emplace_back([&] {
      while (!stop.load()) Power();
    });
  }
  for (unsigned mw = 200; mw < 260; ++mw) {
    Write(path_, "device_count=2\ngpu.*.power_mw=" + std::to_string(mw) + "\n");
    EXPECT_EQ(Power(), mw);
    unsigned seen = 0;
    std::thread([&] { seen = Power(); }).join();
    EXPECT_EQ(seen, mw);
  }
  stop.store(true);
  for (auto& t : others) t.join();
}

TEST_P(NvmlFakeScenarioTest, AnAppendIsSeenByTheNextCall) {
  ASSERT_EQ(Count(), 2u);
  std::ofstream(path_, std::ios::app) << "device_count=16\n";
  EXPECT_EQ(Count(), 16u);
  std::ofstream(path_, std::ios::app) << "gpu.1.power_mw=7\n";
  EXPECT_EQ(Power(), 7u);
}

TEST_P(NvmlFakeScenarioTest, ARenameIntoPlaceIsSeenByTheNextCall) {
  ASSERT_EQ(Power(), 100u);
  std::string tmp = (dir_ / "next.tmp").string();
  Write(tmp, "device_count=2\ngpu.*.power_mw=300\n");
  EXPECT_EQ(Power(), 100u);  // another file of the directory changed: not the scenario
  std::filesystem::rename(tmp, path_);
  EXPECT_EQ(Power(), 300u);
}

TEST_P(NvmlFakeScenarioTest, AChangedIncludeIsSeenByTheNextCall) {
  std::filesystem::create_directories(dir_ / "sub");
  std::string inc = (dir_ / "sub" / "base.scenario").string();
  Write(inc, "gpu.*.power_mw=400\n");
  Write(path_, "device_count=2\ninclude=sub/base.scenario\n");
  ASSERT_EQ(Power(), 400u);
  Write(inc, "gpu.*.power_mw=401\n");
  EXPECT_EQ(Power(), 401u);
}

TEST_P(NvmlFakeScenarioTest, AnotherScenarioFileIsSeenByTheNextCall) {
  ASSERT_EQ(Power(), 100u);
  std::string other = (dir_ / "other.scenario").string();
  Write(other, "device_count=2\ngpu.*.power_mw=500\n");
  setenv("FAKE_NVML_SCENARIO", other.c_str(), 1);
  EXPECT_EQ(Power(), 500u);
  Write(other, "device_count=2\ngpu.*.power_mw=501\n");
  EXPECT_EQ(Power(), 501u);
  Write(path_, "device_count=2\ngpu.*.power_mw=999\n");  // the file no longer in use
  EXPECT_EQ(Power(), 501u);
}

TEST_P(NvmlFakeScenarioTest, UnchangedScenarioKeepsAnswersAndCountersKeepCounting) {
  Write(path_, "device_count=2\ngpu.*.field.94=10\ngpu.*.field.94.step=5\n");
  unsigned v = 0;
  ASSERT_EQ(replay_(dev_, &v), nvml::NVML_SUCCESS);
  EXPECT_EQ(v, 10u);
  ASSERT_EQ(replay_(dev_, &v), nvml::NVML_SUCCESS);
  EXPECT_EQ(v, 15u);
  // A rewrite changes the answers, not the reads so far (a counter keeps growing).
  Write(path_, "device_count=2\ngpu.*.field.94=10\ngpu.*.field.94.step=6\ngpu.*.power_mw=1\n");
  ASSERT_EQ(replay_(dev_, &v), nvml::NVML_SUCCESS);
  EXPECT_EQ(v, 22u);
  // nvmlInit_v2 starts the counts afresh.
  ASSERT_EQ(init_(), nvml::NVML_SUCCESS);
  ASSERT_EQ(replay_(dev_, &v), nvml::NVML_SUCCESS);
  EXPECT_EQ(v, 10u);
}

INSTANTIATE_TEST_SUITE_P(Variants, NvmlFakeScenarioTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? std::string("Minimal") : std::string("Full");
                         });

}  // namespace
}  // namespace gpudoctor
