// NvmlSession re-enumeration against the fake NVML (scenario rewritten while the session runs):
// a device count change is seen within recount_every_ticks ticks and not before, GPUs whose UUID
// is still there keep their per-boot constants and counters (matched by UUID, not by index), a
// GPU that answers GPU_IS_LOST triggers a listing and stays named, a GPU stuck in the driver is
// not called by a listing, and a stuck recount never stalls a tick.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "nvml/session.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using std::chrono::milliseconds;

class NvmlSessionEnumerationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("gpudoctor-enum-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    scenario_ = (dir_ / "now.scenario").string();
    Write("include=" + testing::FixturePath("nvml/h100_busy.scenario") + "\n");
    setenv("FAKE_NVML_SCENARIO", scenario_.c_str(), 1);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Write(const std::string& text) {
    std::ofstream(scenario_, std::ios::trunc) << text;
    base_ = text;
  }
  // Appends lines. The fake stats the scenario at every call and re-reads it when its size or
  // mtime changed; an append always grows it, so the next call sees the lines (no wait needed).
  void Append(const std::string& lines) { std::ofstream(scenario_, std::ios::app) << lines; }

  static NvmlSampleOptions Options(int every) {
    NvmlSampleOptions o;
    o.library_path = std::string(GPUDOCTOR_BUILD_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1";
    o.timeout = milliseconds(2000);
    o.recount_every_ticks = every;
    return o;
  }
  static GpuLayerFacts Tick(NvmlSession& s) {
    return s.Sample(SteadyClock::now() + milliseconds(5000));
  }

  std::filesystem::path dir_;
  std::string scenario_;
  std::string base_;
};

TEST_F(NvmlSessionEnumerationTest, CountChangesAreSeenWithinTheRecountPeriod) {
  NvmlSession session(Options(3));
  GpuLayerFacts t1 = Tick(session);
  ASSERT_EQ(t1.nvml.state, NvmlState::kOk);
  ASSERT_EQ(t1.gpus.size(), 8u);

  Append("device_count=16\n");
  GpuLayerFacts t2 = Tick(session);  // ticks 1, 2 after init: no recount yet
  EXPECT_EQ(t2.gpus.size(), 8u);
  GpuLayerFacts t3 = Tick(session);  // tick 3: recount, then a listing of 16
  ASSERT_EQ(t3.gpus.size(), 16u);
  EXPECT_EQ(t3.nvml.device_count, 16);
  EXPECT_EQ(session.enumerations(), 1);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(t3.gpus[i].index, i);
  for (int i = 0; i < 8; ++i) {
    // Kept: constants not read again (a tick's calls only), counters diffed against tick 2.
    EXPECT_LE(t3.gpus[i].nvml_calls, 15) << "GPU " << i;
    EXPECT_EQ(t3.gpus[i].uuid, t1.gpus[i].uuid);
    EXPECT_TRUE(t3.gpus[i].window_s.has_value()) << "GPU " << i;
  }
  for (int i = 8; i < 16; ++i) {
    EXPECT_GT(t3.gpus[i].nvml_calls, 15) << "GPU " << i << ": a new GPU's constants are read";
    EXPECT_FALSE(t3.gpus[i].window_s.has_value());
    EXPECT_TRUE(t3.gpus[i].temp_c.has_value());
  }

  Append("device_count=1\n");
  EXPECT_EQ(Tick(session).gpus.size(), 16u);
  EXPECT_EQ(Tick(session).gpus.size(), 16u);
  GpuLayerFacts t6 = Tick(session);
  ASSERT_EQ(t6.gpus.size(), 1u);
  EXPECT_EQ(t6.gpus[0].uuid, t1.gpus[0].uuid);
  EXPECT_TRUE(t6.gpus[0].window_s.has_value());

  Append("device_count=0\n");
  for (int i = 0; i < 2; ++i) Tick(session);
  GpuLayerFacts t9 = Tick(session);
  EXPECT_TRUE(t9.gpus.empty());
  EXPECT_EQ(t9.nvml.device_count, 0);
  EXPECT_EQ(t9.nvml.state, NvmlState::kOk);
  EXPECT_EQ(session.enumerations(), 3);
  EXPECT_EQ(session.init_attempts(), 1);  // never a new init
}

TEST_F(NvmlSessionEnumerationTest, GpusAreMatchedByUuidNotByIndex) {
  NvmlSession session(Options(1));
  GpuLayerFacts t1 = Tick(session);
  ASSERT_EQ(t1.gpus.size(), 8u);
  // GPUs 0 and 1 swap places and a ninth appears (say after a driver reload).
  Append("device_count=9\ngpu.0.uuid=" + t1.gpus[1].uuid + "\ngpu.1.uuid=" + t1.gpus[0].uuid +
         "\n");
  GpuLayerFacts t2 = Tick(session);
  ASSERT_EQ(t2.gpus.size(), 9u);
  EXPECT_EQ(t2.gpus[0].uuid, t1.gpus[1].uuid);
  EXPECT_EQ(t2.gpus[1].uuid, t1.gpus[0].uuid);
  // The serials travel with the cached constants: read at init from the other index.
  EXPECT_EQ(t2.gpus[0].serial, t1.gpus[1].serial);
  EXPECT_EQ(t2.gpus[1].serial, t1.gpus[0].serial);
  EXPECT_TRUE(t2.gpus[0].window_s.has_value());
  EXPECT_EQ(t2.gpus[5].serial, t1.gpus[5].serial);
  // Unchanged count: a recount every tick, but no listing.
  Tick(session);
  Tick(session);
  EXPECT_EQ(session.enumerations(), 1);
}

TEST_F(NvmlSessionEnumerationTest, LostGpuIsListedAgainAndStaysNamed) {
  NvmlSession session(Options(2));
  GpuLayerFacts t1 = Tick(session);
  ASSERT_EQ(t1.gpus.size(), 8u);
  Append("gpu.3.lost=1\n");
  GpuLayerFacts t2 = Tick(session);
  ASSERT_EQ(t2.gpus.size(), 8u);
  EXPECT_TRUE(t2.gpus[3].lost);
  EXPECT_FALSE(t2.gpus[2].lost);
  // Tick 2's recount ran before GPU 3 answered GPU_IS_LOST: no listing yet. Tick 4's lists.
  EXPECT_EQ(session.enumerations(), 0);
  Tick(session);
  GpuLayerFacts t4 = Tick(session);
  EXPECT_EQ(session.enumerations(), 1);
  ASSERT_EQ(t4.gpus.size(), 8u);
  EXPECT_TRUE(t4.gpus[3].lost);
  EXPECT_EQ(t4.gpus[3].uuid, t1.gpus[3].uuid);  // no UUID answered now: the old one is kept
  EXPECT_EQ(t4.gpus[3].serial, t1.gpus[3].serial);
  EXPECT_EQ(t4.gpus[4].uuid, t1.gpus[4].uuid);

  // The card falls off the bus: the count drops and the cards after it move up one index.
  std::string shifted = "device_count=7\n";
  for (int i = 3; i < 7; ++i) {
    shifted += "gpu." + std::to_string(i) + ".uuid=" + t1.gpus[i + 1].uuid + "\n";
  }
  Append("gpu.3.lost=0\n" + shifted);
  GpuLayerFacts t5 = Tick(session);
  GpuLayerFacts t6 = Tick(session);
  const GpuLayerFacts& after = t6.gpus.size() == 7u ? t6 : t5;
  ASSERT_EQ(after.gpus.size(), 7u);
  for (int i = 3; i < 7; ++i) {
    EXPECT_EQ(after.gpus[i].uuid, t1.gpus[i + 1].uuid);
    EXPECT_EQ(after.gpus[i].serial, t1.gpus[i + 1].serial) << "cache moved with the UUID";
    EXPECT_FALSE(after.gpus[i].lost);
  }
}

TEST_F(NvmlSessionEnumerationTest, StuckEnumerationIsAHangAndNeverStallsTicks) {
  NvmlSampleOptions o = Options(1);
  o.timeout = milliseconds(300);
  NvmlSession session(o);
  GpuLayerFacts t1 = Tick(session);
  ASSERT_EQ(t1.gpus.size(), 8u);
  Append("block=nvmlDeviceGetCount_v2\n");
  auto start = SteadyClock::now();
  GpuLayerFacts t2 = Tick(session);
  EXPECT_EQ(t2.gpus.size(), 8u);  // the GPUs found before stay, and are sampled
  EXPECT_TRUE(t2.gpus[0].temp_c.has_value());
  ASSERT_EQ(t2.hangs.size(), 1u);
  EXPECT_EQ(t2.hangs[0].call, "nvmlDeviceGetCount_v2");
  EXPECT_FALSE(t2.hangs[0].gpu_index.has_value());
  GpuLayerFacts t3 = Tick(session);  // the stuck recount is neither waited for nor restarted
  EXPECT_EQ(t3.gpus.size(), 8u);
  EXPECT_TRUE(t3.hangs.empty());
  // One 300 ms NVML timeout (tick 2) and slack for a loaded machine; a stall would be the 5 s
  // tick deadline.
  EXPECT_LT(SteadyClock::now() - start, milliseconds(2000));
}

TEST_F(NvmlSessionEnumerationTest, StuckGpuIsNotAskedAgainByAListing) {
  Append("gpu.2.block=nvmlDeviceGetUUID\n");  // GPU 2's identity read never returns
  NvmlSampleOptions o = Options(1);
  o.timeout = milliseconds(300);
  NvmlSession session(o);
  GpuLayerFacts t1 = Tick(session);
  ASSERT_EQ(t1.gpus.size(), 8u);
  EXPECT_TRUE(t1.gpus[2].hung);
  Append("gpu.3.lost=1\n");
  Tick(session);                     // GPU 3 answers GPU_IS_LOST
  GpuLayerFacts t3 = Tick(session);  // the listing: GPU 2 (stuck) is not called
  EXPECT_EQ(session.enumerations(), 1);
  ASSERT_EQ(t3.gpus.size(), 8u);
  for (const NvmlHang& h : t3.hangs) EXPECT_EQ(h.gpu_index, std::optional<int>(2)) << h.call;
  EXPECT_TRUE(t3.gpus[2].hung);
  EXPECT_TRUE(t3.gpus[3].lost);
  EXPECT_EQ(t3.gpus[3].uuid, t1.gpus[3].uuid);
}

}  // namespace
}  // namespace gpudoctor
