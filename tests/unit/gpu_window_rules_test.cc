// gpu.util.underused and gpu.memory.thrashing: the window judges on planted sample windows (each
// limiter, and the cases that must stay silent: a busy GPU, a GPU no process holds, an idle one,
// a short dip or spike, one-way traffic), then the watch-side GpuWindows on snapshots.
#include "rules/gpu_window_rules.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "finding_test_util.h"
#include "rules/catalogue.h"
#include "rules/inference_queue_hook.h"

namespace gpudoctor {
namespace {

constexpr double kGen5x16 = 3938.5e6 * 16;

// `seconds` of samples, one every `step_s`, ending at `end_s`, shaped by `fill`.
std::deque<GpuWindowSample> Window(double seconds, double step_s, double end_s,
                                   const std::function<void(GpuWindowSample&, double)>& fill) {
  std::deque<GpuWindowSample> out;
  for (double t = end_s - seconds; t <= end_s + 1e-9; t += step_s) {
    GpuWindowSample s;
    s.at_s = t;
    s.held = true;
    s.pcie_link_bytes_per_s = kGen5x16;
    s.cpu_busy_pct = 20;
    s.iowait_pct = 1;
    fill(s, t);
    out.push_back(s);
  }
  return out;
}

// Ten minutes at 30% busy, held, with `fill` adding the limiter's signal.
std::deque<GpuWindowSample> Underused(const std::function<void(GpuWindowSample&)>& fill) {
  return Window(600, 5, 1000, [&](GpuWindowSample& s, double) {
    s.util_pct = 30;
    fill(s);
  });
}

TEST(UnderuseTest, InputPipelineCpuSaturated) {
  UnderuseVerdict v =
      JudgeUnderuse(Underused([](GpuWindowSample& s) { s.cpu_busy_pct = 96; }), 1000, {});
  EXPECT_TRUE(v.detected);
  EXPECT_DOUBLE_EQ(v.mean_util_pct, 30);
  EXPECT_DOUBLE_EQ(v.held_share_pct, 100);
  EXPECT_EQ(v.limiter, "input");
  EXPECT_EQ(v.limiter_text, "input pipeline: host CPU 96% busy on average");
  EXPECT_EQ(v.samples, 121);
  EXPECT_DOUBLE_EQ(v.covered_s, 600);
}

TEST(UnderuseTest, InputPipelineIowait) {
  UnderuseVerdict v =
      JudgeUnderuse(Underused([](GpuWindowSample& s) { s.iowait_pct = 35; }), 1000, {});
  EXPECT_TRUE(v.detected);
  EXPECT_EQ(v.limiter, "input");
  EXPECT_NE(v.limiter_text.find("iowait 35%"), std::string::npos) << v.limiter_text;
}

TEST(UnderuseTest, HostToGpuTransfers) {
  // 25 GB/s received by the GPU on a Gen5 x16 link (63 GB/s): 40% of the link.
  UnderuseVerdict v = JudgeUnderuse(
      Underused([](GpuWindowSample& s) { s.pcie_rx_bytes_per_s = 0.4 * kGen5x16; }), 1000, {});
  EXPECT_TRUE(v.detected);
  EXPECT_EQ(v.limiter, "transfers");
  EXPECT_NE(v.limiter_text.find("(40% of the link)"), std::string::npos) << v.limiter_text;
  // The same traffic leaving the GPU (D2H) is not what starves it.
  UnderuseVerdict d2h = JudgeUnderuse(
      Underused([](GpuWindowSample& s) { s.pcie_tx_bytes_per_s = 0.4 * kGen5x16; }), 1000, {});
  EXPECT_TRUE(d2h.detected);
  EXPECT_EQ(d2h.limiter, "unknown");
}

TEST(UnderuseTest, CollectivesOnTheBusiestLink) {
  UnderuseVerdict v = JudgeUnderuse(Underused([](GpuWindowSample& s) {
                                      s.net_link_pct = 70;
                                      s.net_name = "mlx5_0/1";
                                    }),
                                    1000, {});
  EXPECT_TRUE(v.detected);
  EXPECT_EQ(v.limiter, "collectives");
  EXPECT_EQ(v.limiter_text, "collectives: mlx5_0/1 at 70% of its speed");
}

TEST(UnderuseTest, SchedulingFromTheInferenceQueue) {
  UnderuseVerdict v =
      JudgeUnderuse(Underused([](GpuWindowSample& s) { s.waiting_requests = 12; }), 1000, {});
  EXPECT_TRUE(v.detected);
  EXPECT_EQ(v.limiter, "scheduling");
}

TEST(UnderuseTest, StrongestSignalWinsAndNoneIsUnknown) {
  // CPU just past its threshold (86 / 85), network far past it (80 / 40): collectives.
  UnderuseVerdict both = JudgeUnderuse(Underused([](GpuWindowSample& s) {
                                         s.cpu_busy_pct = 86;
                                         s.net_link_pct = 80;
                                         s.net_name = "eth1";
                                       }),
                                       1000, {});
  EXPECT_EQ(both.limiter, "collectives");
  ASSERT_TRUE(both.cpu_busy_pct);
  EXPECT_DOUBLE_EQ(*both.cpu_busy_pct, 86);  // the other figure stays in the verdict
  UnderuseVerdict none = JudgeUnderuse(Underused([](GpuWindowSample&) {}), 1000, {});
  EXPECT_TRUE(none.detected);
  EXPECT_EQ(none.limiter, "unknown");
}

TEST(UnderuseTest, BusyGpuIsNotUnderused) {
  auto busy = Window(600, 5, 1000, [](GpuWindowSample& s, double) {
    s.util_pct = 92;
    s.cpu_busy_pct = 99;
  });
  EXPECT_FALSE(JudgeUnderuse(busy, 1000, {}).detected);
}

TEST(UnderuseTest, GpuThatNoProcessHoldsIsNotUnderused) {
  auto free = Underused([](GpuWindowSample& s) { s.held = false; });
  EXPECT_FALSE(JudgeUnderuse(free, 1000, {}).detected);
  // Held for only part of the window (a job that started 3 minutes ago): not yet.
  auto started = Window(600, 5, 1000, [](GpuWindowSample& s, double t) {
    s.util_pct = 30;
    s.held = t >= 820;
  });
  EXPECT_FALSE(JudgeUnderuse(started, 1000, {}).detected);
}

TEST(UnderuseTest, IdleGpuIsGpuUtilLowsFact) {
  auto idle = Underused([](GpuWindowSample& s) { s.util_pct = 4; });
  UnderuseVerdict v = JudgeUnderuse(idle, 1000, {});
  EXPECT_FALSE(v.detected);
  EXPECT_DOUBLE_EQ(v.mean_util_pct, 4);
}

TEST(UnderuseTest, ShortDipOrShortWindowIsNotUnderused) {
  // Busy for 9 minutes, a 1-minute dip to 5%: the mean stays high.
  auto dip =
      Window(600, 5, 1000, [](GpuWindowSample& s, double t) { s.util_pct = t > 940 ? 5 : 95; });
  EXPECT_FALSE(JudgeUnderuse(dip, 1000, {}).detected);
  // Only the last 2 minutes were seen (watch just started): the window is not covered.
  auto young = Window(120, 5, 1000, [](GpuWindowSample& s, double) { s.util_pct = 30; });
  UnderuseVerdict v = JudgeUnderuse(young, 1000, {});
  EXPECT_FALSE(v.detected);
  EXPECT_DOUBLE_EQ(v.covered_s, 120);
  // Samples older than the window do not count: an old slow phase is forgotten.
  auto old =
      Window(1200, 5, 1000, [](GpuWindowSample& s, double t) { s.util_pct = t < 390 ? 20 : 95; });
  EXPECT_FALSE(JudgeUnderuse(old, 1000, {}).detected);
  EXPECT_TRUE(JudgeUnderuse({}, 1000, {}).limiter.empty());
}

TEST(UnderuseTest, ThresholdsComeFromTheCatalogueAndConfig) {
  UnderuseParams d = UnderuseParamsFrom(Thresholds());
  EXPECT_DOUBLE_EQ(d.window_s, 600);
  EXPECT_DOUBLE_EQ(d.max_mean_util_pct, 40);
  EXPECT_DOUBLE_EQ(d.idle_util_pct, 10);  // gpu.util.low's
  ThresholdOverrides o;
  o.Set("gpu.util.underused", "window_s", 60);
  o.Set("gpu.util.underused", "max_mean_util_pct", 50);
  UnderuseParams p = UnderuseParamsFrom(Thresholds(o));
  EXPECT_DOUBLE_EQ(p.window_s, 60);
  auto short_window = Window(60, 5, 1000, [](GpuWindowSample& s, double) { s.util_pct = 45; });
  EXPECT_TRUE(JudgeUnderuse(short_window, 1000, p).detected);
  EXPECT_FALSE(JudgeUnderuse(short_window, 1000, d).detected);
  ThrashingParams t = ThrashingParamsFrom(Thresholds());
  EXPECT_DOUBLE_EQ(t.window_s, 300);
  EXPECT_DOUBLE_EQ(t.min_used_pct, 95);
}

std::deque<GpuWindowSample> Thrash(double seconds,
                                   const std::function<void(GpuWindowSample&, double)>& fill) {
  return Window(seconds, 5, 1000, [&](GpuWindowSample& s, double t) {
    s.util_pct = 60;
    s.memory_used_pct = 98.5;
    s.pcie_rx_bytes_per_s = 6e9;
    s.pcie_tx_bytes_per_s = 5e9;
    fill(s, t);
  });
}

TEST(ThrashingTest, FullMemoryWithTrafficBothWays) {
  ThrashingVerdict v = JudgeThrashing(Thrash(300, [](GpuWindowSample&, double) {}), 1000, {});
  EXPECT_TRUE(v.detected);
  EXPECT_DOUBLE_EQ(v.share_pct, 100);
  EXPECT_DOUBLE_EQ(v.mean_used_pct, 98.5);
  EXPECT_DOUBLE_EQ(v.mean_rx_bytes_per_s, 6e9);
  EXPECT_DOUBLE_EQ(v.mean_tx_bytes_per_s, 5e9);
}

TEST(ThrashingTest, OneWayTrafficOrFreeMemoryIsNotThrashing) {
  // Loading data into a full GPU (H2D only) is not paging back and forth.
  EXPECT_FALSE(
      JudgeThrashing(Thrash(300, [](GpuWindowSample& s, double) { s.pcie_tx_bytes_per_s = 0.1e9; }),
                     1000, {})
          .detected);
  EXPECT_FALSE(
      JudgeThrashing(Thrash(300, [](GpuWindowSample& s, double) { s.memory_used_pct = 80; }), 1000,
                     {})
          .detected);
  // An idle GPU with full memory (a cache allocator) and no traffic.
  EXPECT_FALSE(JudgeThrashing(Thrash(300,
                                     [](GpuWindowSample& s, double) {
                                       s.pcie_rx_bytes_per_s = 0;
                                       s.pcie_tx_bytes_per_s = 0;
                                     }),
                              1000, {})
                   .detected);
}

TEST(ThrashingTest, ShortSpikeIsNotSustained) {
  // Traffic both ways for the last 30 s of a 5-minute window.
  auto spike = Thrash(300, [](GpuWindowSample& s, double t) {
    if (t < 970) s.pcie_rx_bytes_per_s = s.pcie_tx_bytes_per_s = 1e8;
  });
  ThrashingVerdict v = JudgeThrashing(spike, 1000, {});
  EXPECT_FALSE(v.detected);
  EXPECT_LT(v.share_pct, 20);
  EXPECT_DOUBLE_EQ(v.mean_rx_bytes_per_s, 6e9);  // the figures of the samples that show it
  // Sustained, but only 1 minute seen so far.
  EXPECT_FALSE(JudgeThrashing(Thrash(60, [](GpuWindowSample&, double) {}), 1000, {}).detected);
}

TEST(PcieLinkTest, BandwidthPerDirection) {
  EXPECT_NEAR(*PcieLinkBytesPerSecond(3, 16), 15.75e9, 0.01e9);
  EXPECT_NEAR(*PcieLinkBytesPerSecond(4, 16), 31.5e9, 0.01e9);
  EXPECT_NEAR(*PcieLinkBytesPerSecond(5, 16), 63.0e9, 0.02e9);
  EXPECT_NEAR(*PcieLinkBytesPerSecond(1, 1), 250e6, 1);
  EXPECT_FALSE(PcieLinkBytesPerSecond(0, 16));
  EXPECT_FALSE(PcieLinkBytesPerSecond(7, 16));
  EXPECT_FALSE(PcieLinkBytesPerSecond(4, 0));
}

// ---- GpuWindows on snapshots, as the watch daemon ticks it ----

GpuFacts Gpu(int index, uint32_t util, bool held) {
  GpuFacts g;
  g.index = index;
  g.serial = "132200000" + std::to_string(index);
  g.pci_bus_id = "0000:1" + std::to_string(index) + ":00.0";
  g.util_gpu_pct = util;
  g.memory_total_bytes = 80ull << 30;
  g.memory_used_bytes = 40ull << 30;
  g.pcie_gen = 4;
  g.pcie_width = 16;
  g.pcie_rx_bytes_per_s = 1u << 30;
  g.pcie_tx_bytes_per_s = 1u << 30;
  g.processes.emplace();
  if (held) g.processes->push_back(GpuProcess{.pid = 4100u + index, .comm = "python"});
  return g;
}

Snapshot Node(double cpu_busy) {
  Snapshot s;
  s.host.cpu.emplace();
  s.host.cpu->busy_pct = cpu_busy;
  s.host.cpu->iowait_pct = 2;
  s.gpu.gpus = {Gpu(0, 95, true), Gpu(1, 28, true), Gpu(2, 28, false), Gpu(3, 3, true)};
  // GPU 4: memory full, paging both ways at 6 GB/s.
  GpuFacts g = Gpu(4, 70, true);
  g.memory_used_bytes = *g.memory_total_bytes / 100 * 99;
  g.pcie_rx_bytes_per_s = 6000000000;
  g.pcie_tx_bytes_per_s = 6000000000;
  s.gpu.gpus.push_back(g);
  return s;
}

const Finding* FindingOf(const std::vector<Finding>& fs, const std::string& id, int gpu) {
  for (const Finding& f : fs) {
    if (f.id == id && f.gpu && f.gpu->index == gpu) return &f;
  }
  return nullptr;
}

using testing::EvidenceOf;

TEST(GpuWindowsTest, WatchTicksOpenBothFindingsOnlyWhereTheyHold) {
  GpuWindows w;
  std::vector<Finding> findings;
  for (double t = 0; t <= 600; t += 10) {
    findings.clear();
    w.Add(Node(93), t, Thresholds(), findings);
    if (t < 500) {
      EXPECT_EQ(FindingOf(findings, "gpu.util.underused", 1), nullptr) << "at " << t;
    }
  }
  const Finding* u = FindingOf(findings, "gpu.util.underused", 1);
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->summary,
            "GPU 1: held by a job but only 28% busy on average over the last 10 min; likely "
            "limiter: input pipeline: host CPU 93% busy on average");
  EXPECT_EQ(EvidenceOf<std::string>(*u, "limiter"), "input");
  EXPECT_EQ(EvidenceOf<double>(*u, "cpu_busy_mean_pct"), 93.0);
  EXPECT_EQ(EvidenceOf<double>(*u, "pcie_h2d_mean_bytes_per_s"), double(1u << 30));
  // Only the limiter's step (and the unlabelled one) is kept, without its label.
  ASSERT_EQ(u->next_steps.size(), 2u);
  EXPECT_EQ(u->next_steps[0].rfind("give the input pipeline more", 0), 0u) << u->next_steps[0];
  // Busy, not held, idle (gpu.util.low's): none.
  EXPECT_EQ(FindingOf(findings, "gpu.util.underused", 0), nullptr);
  EXPECT_EQ(FindingOf(findings, "gpu.util.underused", 2), nullptr);
  EXPECT_EQ(FindingOf(findings, "gpu.util.underused", 3), nullptr);

  const Finding* th = FindingOf(findings, "gpu.memory.thrashing", 4);
  ASSERT_NE(th, nullptr);
  EXPECT_EQ(th->severity, Severity::kWarn);
  EXPECT_NE(th->summary.find("99% full with PCIe busy both ways (5.6 GiB/s in, 5.6 GiB/s out"),
            std::string::npos)
      << th->summary;
  EXPECT_EQ(EvidenceOf<double>(*th, "share_pct"), 100.0);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(FindingOf(findings, "gpu.memory.thrashing", i), nullptr);

  // The GPUs go away: their windows are forgotten once the longest window is over.
  EXPECT_EQ(w.gpus_tracked(), 5u);
  Snapshot empty;
  findings.clear();
  w.Add(empty, 1000, Thresholds(), findings);
  EXPECT_EQ(w.gpus_tracked(), 5u);
  w.Add(empty, 1300, Thresholds(), findings);
  EXPECT_EQ(w.gpus_tracked(), 0u);
  EXPECT_TRUE(findings.empty());
}

TEST(GpuWindowsTest, SawToothOfTheSameGpuIsNotRepeated) {
  GpuWindows w;
  std::vector<Finding> findings;
  for (double t = 0; t <= 600; t += 10) {
    findings.clear();
    Finding saw;
    saw.id = "gpu.util.sawtooth";
    saw.gpu.emplace();
    saw.gpu->index = 1;
    findings.push_back(saw);
    w.Add(Node(93), t, Thresholds(), findings);
  }
  EXPECT_EQ(FindingOf(findings, "gpu.util.underused", 1), nullptr);
}

TEST(GpuWindowsTest, HostSignalsFromNicsAndIbPorts) {
  Snapshot s;
  NicFacts eth;
  eth.name = "eth1";
  eth.physical = true;
  eth.speed_mbps = 100000;
  eth.rx_bytes_per_s = 5e9;  // 40 Gb/s of 100
  NicFacts veth = eth;
  veth.name = "veth0";
  veth.physical = false;
  veth.rx_bytes_per_s = 12e9;
  s.network.nics = std::vector<NicFacts>{eth, veth};
  GpuWindowSample a;
  FillHostSignals(s, a);
  ASSERT_TRUE(a.net_link_pct);
  EXPECT_DOUBLE_EQ(*a.net_link_pct, 40);
  EXPECT_EQ(a.net_name, "eth1");
  IbPortFacts ib;
  ib.device = "mlx5_0";
  ib.port = 1;
  ib.rate_gbps = 400;
  ib.window_s = 2;
  ib.counters_delta["port_xmit_data"] = 18750000000ull;  // 4-byte words: 300 Gb/s over 2 s
  s.network.ib_ports = std::vector<IbPortFacts>{ib};
  GpuWindowSample b;
  FillHostSignals(s, b);
  ASSERT_TRUE(b.net_link_pct);
  EXPECT_DOUBLE_EQ(*b.net_link_pct, 75);
  EXPECT_EQ(b.net_name, "mlx5_0/1");
}

TEST(GpuWindowsTest, CatalogueExplainsTheRelationToGpuUtilLow) {
  const CatalogueEntry* e = FindCatalogueEntry("gpu.util.underused");
  ASSERT_NE(e, nullptr);
  EXPECT_NE(e->description.find("gpu.util.low"), std::string_view::npos);
  EXPECT_NE(FindCatalogueEntry("gpu.memory.thrashing"), nullptr);
}

}  // namespace
}  // namespace gpudoctor

namespace gpudoctor {
namespace {

// The scheduling limiter's input: an inference server's waiting requests reach the GPU whose
// process is the server's, and no other GPU.
TEST(InferenceQueueHookTest, WaitingRequestsReachTheGpuTheServerHolds) {
  Snapshot snap;
  for (int i = 0; i < 2; ++i) {
    GpuFacts g;
    g.index = i;
    g.processes = std::vector<GpuProcess>{};
    if (i == 1) {
      GpuProcess p;
      p.pid = 4242;
      g.processes->push_back(p);
    }
    snap.gpu.gpus.push_back(g);
  }
  InferenceFacts f;
  f.name = "chat";
  f.engine = "vllm";
  f.pids = {4242};
  f.requests_waiting = 7;
  snap.inference.push_back(f);
  EXPECT_EQ(InferenceWaitingRequests(snap, snap.gpu.gpus[1]), 7.0);
  EXPECT_FALSE(InferenceWaitingRequests(snap, snap.gpu.gpus[0]).has_value());
  snap.inference[0].requests_waiting = 0;
  EXPECT_FALSE(InferenceWaitingRequests(snap, snap.gpu.gpus[1]).has_value());
}

// ---- GpuSampleWindow: running sums give the pure judges' verdicts ----

void ExpectNear(std::optional<double> a, std::optional<double> b, const std::string& what) {
  ASSERT_EQ(a.has_value(), b.has_value()) << what;
  if (a) {
    EXPECT_NEAR(*a, *b, 1e-9 * std::max(1.0, std::abs(*b))) << what;
  }
}

void ExpectSameVerdicts(const GpuSampleWindow& w, const std::deque<GpuWindowSample>& mirror,
                        double now_s, const UnderuseParams& up, const ThrashingParams& tp,
                        const std::string& at) {
  UnderuseVerdict a = w.Underuse(), b = JudgeUnderuse(mirror, now_s, up);
  EXPECT_EQ(a.detected, b.detected) << at;
  EXPECT_EQ(a.samples, b.samples) << at;
  EXPECT_DOUBLE_EQ(a.covered_s, b.covered_s) << at;
  ExpectNear(a.mean_util_pct, b.mean_util_pct, "util " + at);
  ExpectNear(a.held_share_pct, b.held_share_pct, "held " + at);
  ExpectNear(a.cpu_busy_pct, b.cpu_busy_pct, "cpu " + at);
  ExpectNear(a.iowait_pct, b.iowait_pct, "iowait " + at);
  ExpectNear(a.pcie_rx_bytes_per_s, b.pcie_rx_bytes_per_s, "rx " + at);
  ExpectNear(a.pcie_tx_bytes_per_s, b.pcie_tx_bytes_per_s, "tx " + at);
  ExpectNear(a.pcie_link_bytes_per_s, b.pcie_link_bytes_per_s, "link " + at);
  ExpectNear(a.net_link_pct, b.net_link_pct, "net " + at);
  ExpectNear(a.waiting_requests, b.waiting_requests, "waiting " + at);
  EXPECT_EQ(a.limiter, b.limiter) << at;
  EXPECT_EQ(a.net_name, b.net_name) << at;
  ThrashingVerdict c = w.Thrashing(), d = JudgeThrashing(mirror, now_s, tp);
  EXPECT_EQ(c.detected, d.detected) << at;
  EXPECT_EQ(c.samples, d.samples) << at;
  EXPECT_DOUBLE_EQ(c.covered_s, d.covered_s) << at;
  ExpectNear(c.share_pct, d.share_pct, "share " + at);
  ExpectNear(c.mean_used_pct, d.mean_used_pct, "used " + at);
  ExpectNear(c.mean_rx_bytes_per_s, d.mean_rx_bytes_per_s, "thrash rx " + at);
  ExpectNear(c.mean_tx_bytes_per_s, d.mean_tx_bytes_per_s, "thrash tx " + at);
}

// Random ticks (readings missing at random, irregular steps, gaps longer than a window, windows
// and thresholds changed by a config reload): after every tick the running window's verdicts are
// the pure judges' on the same samples.
TEST(GpuSampleWindowTest, RunningSumsGiveThePureJudgesVerdictsEveryTick) {
  std::mt19937 rng(20261205);
  std::uniform_real_distribution<double> unit(0, 1);
  auto maybe = [&](double p, double value) -> std::optional<float> {
    return unit(rng) < p ? std::optional<float>(static_cast<float>(value)) : std::nullopt;
  };
  GpuSampleWindow w;
  std::deque<GpuWindowSample> mirror;
  UnderuseParams up;
  ThrashingParams tp;
  up.window_s = 120;
  tp.window_s = 60;
  double t = 1000;
  int detected_underuse = 0, detected_thrashing = 0;
  for (int tick = 0; tick < 6000; ++tick) {
    double r = unit(rng);
    t += r < 0.002 ? 400 : (r < 0.2 ? 0.5 + 3 * unit(rng) : 1);
    if (tick % 1500 == 700) {  // a config reload
      up.window_s = 60 + 120 * unit(rng);
      up.max_mean_util_pct = 30 + 30 * unit(rng);
      tp.window_s = 30 + 90 * unit(rng);
      tp.min_used_pct = 85 + 10 * unit(rng);
    }
    // Phases: an underused, held GPU with a CPU limiter, then a thrashing one, then noise.
    const int phase = (tick / 500) % 3;
    GpuWindowSample s;
    s.at_s = t;
    s.util_pct = maybe(0.97, phase == 0 ? 25 + 10 * unit(rng) : 100 * unit(rng));
    s.held = phase != 2 || unit(rng) < 0.5;
    s.memory_used_pct = maybe(0.95, phase == 1 ? 97 + 3 * unit(rng) : 100 * unit(rng));
    s.pcie_rx_bytes_per_s = maybe(0.95, (phase == 1 ? 3e9 : 0) + 2e10 * unit(rng) * unit(rng));
    s.pcie_tx_bytes_per_s = maybe(0.95, (phase == 1 ? 3e9 : 0) + 2e10 * unit(rng) * unit(rng));
    s.pcie_link_bytes_per_s = maybe(0.9, kGen5x16);
    s.cpu_busy_pct = maybe(0.9, phase == 0 ? 95 : 100 * unit(rng));
    s.iowait_pct = maybe(0.9, 30 * unit(rng));
    s.net_link_pct = maybe(0.5, 100 * unit(rng));
    if (s.net_link_pct && unit(rng) < 0.7) s.net_name = unit(rng) < 0.5 ? "eth1" : "mlx5_0/1";
    s.waiting_requests = maybe(0.1, 5 * unit(rng));
    mirror.push_back(s);
    w.Add(s, up, tp);
    const double keep_s = std::max(up.window_s, tp.window_s);
    while (!mirror.empty() && t - mirror.front().at_s > keep_s) mirror.pop_front();
    ASSERT_EQ(w.size(), mirror.size()) << "tick " << tick;
    ExpectSameVerdicts(w, mirror, t, up, tp, "tick " + std::to_string(tick));
    detected_underuse += w.Underuse().detected;
    detected_thrashing += w.Thrashing().detected;
    if (HasFailure()) break;
  }
  // The sequence exercised both findings, not only the quiet verdicts.
  EXPECT_GT(detected_underuse, 100);
  EXPECT_GT(detected_thrashing, 100);
}

// A long run at the largest readings (PCIe at 64 GB/s) never drifts: the sums are recomputed from
// the samples every kExactEvery ticks.
TEST(GpuSampleWindowTest, LongRunsDoNotDrift) {
  GpuSampleWindow w;
  std::deque<GpuWindowSample> mirror;
  UnderuseParams up;
  ThrashingParams tp;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int tick = 0; tick < 3 * static_cast<int>(GpuSampleWindow::kExactEvery) + 17; ++tick) {
    GpuWindowSample s;
    s.at_s = tick;
    s.util_pct = static_cast<float>(100 * unit(rng));
    s.memory_used_pct = static_cast<float>(90 + 10 * unit(rng));
    s.pcie_rx_bytes_per_s = static_cast<float>(6.4e10 * unit(rng));
    s.pcie_tx_bytes_per_s = static_cast<float>(6.4e10 * unit(rng));
    mirror.push_back(s);
    w.Add(s, up, tp);
    while (tick - mirror.front().at_s > std::max(up.window_s, tp.window_s)) mirror.pop_front();
  }
  ExpectSameVerdicts(w, mirror, mirror.back().at_s, up, tp, "end");
}

// A clock that goes back starts the window afresh instead of judging samples from the future.
TEST(GpuSampleWindowTest, TimeGoingBackStartsAfresh) {
  GpuSampleWindow w;
  UnderuseParams up;
  ThrashingParams tp;
  for (int t = 0; t < 700; ++t) {
    GpuWindowSample s;
    s.at_s = 1000 + t;
    s.util_pct = 30;
    s.held = true;
    w.Add(s, up, tp);
  }
  EXPECT_TRUE(w.Underuse().detected);
  GpuWindowSample back;
  back.at_s = 10;
  back.util_pct = 30;
  back.held = true;
  w.Add(back, up, tp);
  EXPECT_EQ(w.size(), 1u);
  EXPECT_FALSE(w.Underuse().detected);
  EXPECT_EQ(w.Underuse().samples, 1);
}

}  // namespace
}  // namespace gpudoctor
