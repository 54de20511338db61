// The NVML call budget per GPU: at most 30 calls per check (SampleNvml) and 15 per watch tick
// (NvmlSession), on an NVML with nvmlDeviceGetFieldValues and on one without it (the fake's
// minimal variant), counted by the fake library's own call counter. The video engines'
// utilisation (two calls, every 30 s in a watch) fits the same budget. Without the batched fields
// every fact still has a fallback: ECC mode through nvmlDeviceGetEccMode, NVLink state and
// error counters through the per-link calls, spread over ticks (the slow cadence).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "nvml/sampler.h"
#include "nvml/session.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using std::chrono::milliseconds;

std::string Lib(bool minimal) { return testing::FakeNvmlLib(minimal); }

// The fake's own per-GPU counter (gpu -1: every call).
int FakeCount(bool minimal, int gpu) {
  void* h = dlopen(Lib(minimal).c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return -1;
  auto count = reinterpret_cast<int (*)(int)>(dlsym(h, "fake_nvml_call_count"));
  return count ? count(gpu) : -1;
}

NvmlSampleOptions Options(bool minimal) {
  NvmlSampleOptions o;
  o.library_path = Lib(minimal);
  o.window = milliseconds(30);
  o.timeout = milliseconds(3000);
  o.deadline = SteadyClock::now() + std::chrono::seconds(20);
  return o;
}

void UseScenario(const std::string& name) {
  setenv("FAKE_NVML_SCENARIO", testing::FixturePath("nvml/" + name).c_str(), 1);
}

class NvmlCallBudgetTest : public ::testing::TestWithParam<bool> {};

TEST_P(NvmlCallBudgetTest, CheckStaysWithin30CallsPerGpu) {
  bool minimal = GetParam();
  for (const char* scenario : {"h100_healthy.scenario", "h100_busy.scenario"}) {
    UseScenario(scenario);
    GpuLayerFacts f = SampleNvml(Options(minimal));
    ASSERT_EQ(f.nvml.state, NvmlState::kOk) << f.nvml.error;
    ASSERT_EQ(f.gpus.size(), 8u);
    for (const GpuFacts& g : f.gpus) {
      EXPECT_LE(g.nvml_calls, 30) << scenario << " GPU " << g.index << " minimal=" << minimal;
    }
    EXPECT_EQ(FakeCount(minimal, 0), f.gpus[0].nvml_calls) << "our count agrees with the fake's";
    std::printf("check %s minimal=%d: %d calls on GPU 0\n", scenario, minimal,
                f.gpus[0].nvml_calls);
    // The facts the batched fields give have their fallbacks.
    const GpuFacts& g = f.gpus[0];
    EXPECT_EQ(g.ecc_enabled, true);
    EXPECT_EQ(g.first.ecc_dbe_volatile, 0u);
    EXPECT_TRUE(g.power_mw.has_value());
    EXPECT_EQ(g.persistence_on, true);
  }
}

TEST_P(NvmlCallBudgetTest, WatchTickStaysWithin15CallsPerGpu) {
  bool minimal = GetParam();
  for (const char* scenario : {"h100_healthy.scenario", "h100_busy.scenario"}) {
    UseScenario(scenario);
    NvmlSession session(Options(minimal));
    GpuLayerFacts t = session.Sample(SteadyClock::now() + std::chrono::seconds(10));
    ASSERT_EQ(t.nvml.state, NvmlState::kOk) << t.nvml.error;
    int worst = 0;
    int total = 0;
    int links_known_at = -1;  // the first tick that knows every link's state
    // Enough ticks for every slow-cadence read (per-link NVLink calls) to come round.
    constexpr int kTicks = 200;
    for (int tick = 0; tick < kTicks; ++tick) {
      int before = FakeCount(minimal, 0);
      t = session.Sample(SteadyClock::now() + std::chrono::seconds(10));
      ASSERT_EQ(t.gpus.size(), 8u);
      int fake = FakeCount(minimal, 0) - before;
      EXPECT_EQ(fake, t.gpus[0].nvml_calls) << "tick " << tick;
      total += fake;
      if (links_known_at < 0 && t.gpus[0].nvlinks.size() == 18u) links_known_at = tick;
      for (const GpuFacts& g : t.gpus) {
        EXPECT_LE(g.nvml_calls, 15)
            << scenario << " tick " << tick << " GPU " << g.index << " minimal=" << minimal;
        worst = std::max(worst, g.nvml_calls);
      }
    }
    std::printf(
        "tick %s minimal=%d: at most %d calls per GPU, %.1f on average; links known at "
        "tick %d\n",
        scenario, minimal, worst, static_cast<double>(total) / kTicks, links_known_at);
    // Without the batch the link states come first in a slow round, before the 72 per-link
    // error counters: a link that went down is seen within a fifth of the round (about 10
    // ticks on an idle GPU, 22 on a busy one, whose PCIe throughput takes half the spare calls).
    EXPECT_GE(links_known_at, 0) << scenario << " minimal=" << minimal;
    EXPECT_LE(links_known_at, 30) << scenario << " minimal=" << minimal;
    const GpuFacts& g = t.gpus[0];
    EXPECT_EQ(g.ecc_enabled, true);
    EXPECT_EQ(g.persistence_on, true);
    EXPECT_EQ(g.nvlink_count, 18);
    ASSERT_EQ(g.nvlinks.size(), 18u);
    EXPECT_EQ(g.nvlinks[17].active, true);
    EXPECT_EQ(g.second.nvlink_replay_errors, 0u);
    EXPECT_EQ(g.second.ecc_dbe_aggregate, 0u);
    EXPECT_EQ(g.remap_failed, false);
    // The video engines, read at the slow cadence on either NVML (dcgm-exporter's ENC/DEC_UTIL);
    // the NVLink data counters in the batch only (no extra call), absent without it.
    bool busy = std::string(scenario) == "h100_busy.scenario";
    EXPECT_EQ(g.encoder_util_pct, 0u) << scenario << " minimal=" << minimal;
    EXPECT_EQ(g.decoder_util_pct, busy ? 12u : 0u) << scenario << " minimal=" << minimal;
    EXPECT_EQ(t.gpus[1].decoder_util_pct, 0u) << scenario << " minimal=" << minimal;
    // PCIe throughput: a busy GPU's every kBusyPcieEveryTicks ticks, an idle GPU's at the slow
    // cadence (dcgm-exporter reports it for every GPU). Without the batch an idle tick may have
    // no room for it.
    if (!minimal || busy) {
      EXPECT_EQ(g.pcie_tx_bytes_per_s, (busy ? 1200000u : 2000u) * 1024u) << scenario;
    }
    std::printf("tick %s minimal=%d: PCIe tx %s\n", scenario, minimal,
                g.pcie_tx_bytes_per_s ? std::to_string(*g.pcie_tx_bytes_per_s).c_str() : "absent");
    if (minimal) {
      EXPECT_FALSE(g.second.nvlink_tx_kib.has_value());
      EXPECT_FALSE(g.second.nvlink_rx_kib.has_value());
    } else {
      ASSERT_TRUE(g.first.nvlink_tx_kib && g.second.nvlink_tx_kib && g.second.nvlink_rx_kib)
          << scenario;
      EXPECT_EQ(*g.second.nvlink_tx_kib - *g.first.nvlink_tx_kib, busy ? 2097152u : 1024u);
    }
  }
}

// ECC switched off on a data-centre GPU is found on either NVML: through the batched field, or
// through nvmlDeviceGetEccMode where nvmlDeviceGetFieldValues is absent.
TEST_P(NvmlCallBudgetTest, EccDisabledIsFoundWithOrWithoutFieldValues) {
  bool minimal = GetParam();
  testing::TempDir dir;
  dir.Write("ecc_off.scenario", "include=" + testing::FixturePath("nvml/h100_healthy.scenario") +
                                    "\ngpu.*.field.1=0\n");
  setenv("FAKE_NVML_SCENARIO", (dir.path() + "/ecc_off.scenario").c_str(), 1);
  GpuLayerFacts f = SampleNvml(Options(minimal));
  ASSERT_EQ(f.nvml.state, NvmlState::kOk) << f.nvml.error;
  ASSERT_FALSE(f.gpus.empty());
  EXPECT_EQ(f.gpus[0].ecc_enabled, false) << "minimal=" << minimal;
  NvmlSession session(Options(minimal));
  GpuLayerFacts t = session.Sample(SteadyClock::now() + std::chrono::seconds(10));
  ASSERT_FALSE(t.gpus.empty());
  EXPECT_EQ(t.gpus[0].ecc_enabled, false) << "minimal=" << minimal;
}

INSTANTIATE_TEST_SUITE_P(FieldValues, NvmlCallBudgetTest, ::testing::Values(false, true),
                         [](const auto& info) {
                           return info.param ? "WithoutFieldValues" : "WithFieldValues";
                         });

}  // namespace
}  // namespace gpudoctor
