// The fast straggler analysis (robust_stats.h, FindOutliers' single pass) must give exactly what
// the previous implementation gave (tests/fleet_outliers_reference.h: per-window groups, medians
// and MADs by nth_element on doubles). Tolerance: none. Medians and spreads are compared bit for
// bit with the direct computation on many distributions (ties, outliers, sorted, constant, sizes
// around the banded path's threshold), and whole straggler and idle lists field by field on
// generated fleets (tests/fleet_gen.h, 200 and 2,000 nodes), on a bench-like fleet with groups
// of 12,000 GPUs, and on the same samples shuffled with several samples per window (the ordering
// fallback). A change that loses precision or a verdict fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fleet/analysis.h"
#include "fleet/outliers.h"
#include "fleet/report_reader.h"
#include "fleet/robust_stats.h"
#include "fleet_gen.h"
#include "fleet_outliers_reference.h"

namespace gpudoctor::fleet {
namespace {

// Distributions of n values (float) that stress selection: see the cases below.
std::vector<float> Values(int kind, size_t n, std::mt19937& rng) {
  std::normal_distribution<float> noise(0, 5);
  std::uniform_int_distribution<int> small(0, 3);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    switch (kind) {
      case 0:  // clock-like noise
        v[i] = 1980 + noise(rng);
        break;
      case 1:  // all equal (utilisation 97 everywhere)
        v[i] = 97;
        break;
      case 2:  // four distinct values: ties at the middle ranks
        v[i] = 60 + small(rng);
        break;
      case 3:  // noise with 10% far outliers on both sides
        v[i] = i % 10 == 0 ? (i % 20 == 0 ? 0.f : 1e6f) : 650 + noise(rng);
        break;
      case 4:  // sorted
        v[i] = static_cast<float>(i) * 0.5f;
        break;
      case 5:  // reverse sorted, duplicated pairs
        v[i] = static_cast<float>((n - i) / 2);
        break;
      case 6:  // two clusters, the middle between them
        v[i] = (i % 2 == 0 ? 100.f : 900.f) + noise(rng);
        break;
      case 7:  // half one value, half noise: the middle ranks straddle the tie
        v[i] = i < n / 2 ? 1400.f : 1400 + std::fabs(noise(rng));
        break;
      case 8:  // infinities and signed zeros among noise
        v[i] = i % 97 == 0   ? std::numeric_limits<float>::infinity()
               : i % 89 == 0 ? -std::numeric_limits<float>::infinity()
               : i % 7 == 0  ? (i % 14 == 0 ? -0.f : 0.f)
                             : noise(rng);
        break;
      default:  // periodic: every 8th slot (a node's GPU 0) low
        v[i] = i % 8 == 0 ? 1400 + noise(rng) : 1980 + noise(rng);
        break;
    }
  }
  if (kind == 0 || kind == 3 || kind == 6) std::shuffle(v.begin(), v.end(), rng);
  return v;
}

TEST(FleetRobustStatsTest, MedianOfIsExactlyTheSortedMedian) {
  std::mt19937 rng(7);
  std::vector<float> scratch_f;
  std::vector<double> scratch_d;
  const size_t sizes[] = {0, 1, 2, 3, 4, 5, 100, 4095, 4096, 4097, 5000, 5001, 12000, 50001};
  int banded = 0;
  for (int kind = 0; kind <= 9; ++kind) {
    for (size_t n : sizes) {
      std::vector<float> v = Values(kind, n, rng);
      std::vector<double> ref(v.begin(), v.end()), as_double(v.begin(), v.end());
      const double want = MedianInPlace(ref);
      const double got_f = MedianOf(std::span<float>(v), scratch_f);
      const double got_d = MedianOf(std::span<double>(as_double), scratch_d);
      EXPECT_EQ(got_f, want) << "kind " << kind << " n " << n;
      EXPECT_EQ(got_d, want) << "kind " << kind << " n " << n;
      banded += n >= 4096;
    }
  }
  EXPECT_GT(banded, 0);
}

TEST(FleetRobustStatsTest, RobustSpreadIsExactlyMaxOfScaledMadAndFloor) {
  std::mt19937 rng(11);
  std::vector<double> dev, scratch, ref;
  std::vector<float> scratch_f;
  int floor_won = 0, mad_won = 0;
  for (int kind = 0; kind <= 9; ++kind) {
    if (kind == 8) continue;  // infinite values make an infinite or NaN MAD: not a case here
    for (size_t n : {5, 100, 4097, 12000}) {
      std::vector<float> v = Values(kind, n, rng);
      std::vector<double> m(v.begin(), v.end());
      const double median = MedianInPlace(m);
      ref.assign(v.begin(), v.end());
      for (auto& x : ref) x = std::fabs(x - median);
      std::vector<double> sorted_dev = ref;
      const double mad = MedianInPlace(ref);
      // Floors around the scaled MAD, including exactly at it and one ulp either side.
      std::vector<double> floors = {1.0, 2.0, 15.0, 54.6, 1e9};
      for (double f : {1.4826 * mad, mad, 1.4826 * mad * (1 + 1e-12), 1.4826 * mad * 0.999}) {
        if (f <= 0) continue;
        floors.push_back(f);
        floors.push_back(std::nextafter(f, 0.0));
        floors.push_back(std::nextafter(f, 1e300));
      }
      for (double floor : floors) {
        const double want = std::max(1.4826 * mad, floor);
        const double got = RobustSpread(v, median, floor, dev, scratch);
        EXPECT_EQ(got, want) << "kind " << kind << " n " << n << " floor " << floor;
        (want == floor ? floor_won : mad_won) += 1;
      }
    }
  }
  EXPECT_GT(floor_won, 0);
  EXPECT_GT(mad_won, 0);
}

void ExpectSame(const std::vector<Straggler>& got, const std::vector<Straggler>& want,
                const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const Straggler &a = got[i], &b = want[i];
    SCOPED_TRACE(what + " straggler " + std::to_string(i) + " card " + std::to_string(b.card));
    EXPECT_EQ(a.card, b.card);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.windows_compared, b.windows_compared);
    EXPECT_EQ(a.windows_outlier, b.windows_outlier);
    EXPECT_EQ(a.throttle_seen, b.throttle_seen);
    EXPECT_EQ(a.waits_on, b.waits_on);
    EXPECT_EQ(a.holds_back, b.holds_back);
    EXPECT_EQ(a.advice, b.advice);
    ASSERT_EQ(a.metrics.size(), b.metrics.size());
    for (size_t m = 0; m < a.metrics.size(); ++m) {
      EXPECT_EQ(a.metrics[m].metric, b.metrics[m].metric);
      EXPECT_EQ(a.metrics[m].windows, b.metrics[m].windows);
      EXPECT_EQ(a.metrics[m].gpu_median, b.metrics[m].gpu_median);  // exact
      EXPECT_EQ(a.metrics[m].peer_median, b.metrics[m].peer_median);
    }
  }
}

void ExpectSameIdle(const std::vector<IdleGpu>& got, const std::vector<IdleGpu>& want,
                    const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].card, want[i].card) << what;
    EXPECT_EQ(got[i].windows_idle, want[i].windows_idle) << what;
    EXPECT_EQ(got[i].windows_seen, want[i].windows_seen) << what;
  }
}

// Both implementations on `d` with `opt`: identical lists, and (optionally) something found.
size_t Compare(const FleetData& d, const OutlierOptions& opt, const std::string& what) {
  OutlierResult fast = FindOutliers(d, opt);
  ExpectSame(fast.stragglers, reference::ReferenceFindStragglers(d, opt), what);
  ExpectSameIdle(fast.idle, reference::ReferenceFindIdle(d, opt), what);
  return fast.stragglers.size();
}

class FleetOutliersExactGenTest : public ::testing::TestWithParam<int> {};

TEST_P(FleetOutliersExactGenTest, SameStragglersAndIdleAsTheReference) {
  testing::FleetGenOptions gen;
  gen.nodes = GetParam();
  gen.seed = 20260110;
  testing::GeneratedFleet fleet = testing::GenerateFleet(gen);
  FleetData d;
  for (const auto& r : fleet.reports) ASSERT_TRUE(AddReport(r.json, r.source, fleet.now_s, d).ok());
  DropTimeOutliers(d);
  EXPECT_GT(Compare(d, OutlierOptions{}, "generated"), 0u);
  OutlierOptions eager;
  eager.persist_windows = 1;
  eager.min_peers = 2;
  eager.z_threshold = 2;
  EXPECT_GT(Compare(d, eager, "generated, eager"), 0u);
}

INSTANTIATE_TEST_SUITE_P(Sizes, FleetOutliersExactGenTest, ::testing::Values(200, 2000));

// A bench-like fleet (one model: groups of `gpus`, above the banded median's threshold) with
// every class planted, noise wide enough that some MADs exceed their floor, counters, and cards
// missing from some windows.
FleetData BenchLikeFleet(int gpus, int windows, int per_window) {
  FleetData d;
  std::mt19937 rng(42);
  std::normal_distribution<float> noise(0, 5), wide(0, 60);
  std::uniform_int_distribution<int> offset(0, 299);
  for (int g = 0; g < gpus; ++g) {
    Card c;
    c.node = "node" + std::to_string(g / 8);
    c.pci_bus_id = "0000:" + std::to_string(10 + g % 8) + ":00.0";
    c.serial = "SN" + std::to_string(g);
    c.model = g % 5 == 0 ? "NVIDIA A100-SXM4-80GB" : "NVIDIA H100 80GB HBM3";
    c.power_limit_w = g % 211 == 0 ? 500.f : 700.f;
    d.cards.push_back(c);
    if (g % 16 == 0)
      d.card_jobs.push_back({static_cast<uint32_t>(g), 0, "job" + std::to_string(g / 64)});
  }
  for (int w = 0; w < windows; ++w) {
    for (int g = 0; g < gpus; ++g) {
      if (g % 101 == 0 && w % 3 == 1) continue;  // missing from some windows
      for (int k = 0; k < per_window; ++k) {
        GpuSample s;
        s.card = static_cast<uint32_t>(g);
        s.time_s = 1768003200 + int64_t{w} * 300 + (per_window > 1 ? offset(rng) : 0);
        const bool slow = g % 997 == 0 && w > 1;
        const bool capped = g % 499 == 0 && w > 0;
        s.sm_clock_mhz = (slow || capped ? 1400.f : 1980.f) + noise(rng);
        s.power_w = (capped ? 760.f : 650.f) + (g % 3 == 0 ? wide(rng) : noise(rng));
        s.util_pct = g % 1499 == 0 ? 20.f : g % 733 == 0 ? 2.f : 97.f;
        if (g % 29 == 0 && w % 4 == 0) s.util_pct.reset();
        s.temp_c = (g % 1201 == 0 ? 90.f : 60.f) + noise(rng) / 5;
        s.clock_event_reasons = slow ? 8u : capped ? 4u : g % 887 == 0 ? 2u : 0u;
        s.ecc_sbe = g % 613 == 0 ? static_cast<uint32_t>(50 * w) : 0u;
        if (g % 7 != 0) s.pcie_replays = static_cast<uint32_t>(w);
        d.samples.push_back(s);
      }
    }
  }
  return d;
}

TEST(FleetOutliersExactTest, BenchLikeFleetInOrderAndShuffled) {
  FleetData d = BenchLikeFleet(15000, 10, 1);
  EXPECT_GT(Compare(d, OutlierOptions{}, "bench-like"), 5u);
  // Several samples per window, in random storage order: the ordering fallback, and the latest
  // sample of a window replacing earlier ones.
  FleetData shuffled = BenchLikeFleet(6000, 8, 3);
  std::mt19937 rng(3);
  std::shuffle(shuffled.samples.begin(), shuffled.samples.end(), rng);
  EXPECT_GT(Compare(shuffled, OutlierOptions{}, "shuffled"), 0u);
  OutlierOptions wide_window;
  wide_window.window_s = 900;
  wide_window.persist_windows = 2;
  Compare(shuffled, wide_window, "shuffled, 900 s windows");
  // Window order but one card's samples out of time order within a window.
  FleetData swapped = BenchLikeFleet(6000, 8, 2);
  for (size_t i = 0; i + 1 < swapped.samples.size(); i += 2) {
    std::swap(swapped.samples[i], swapped.samples[i + 1]);
  }
  Compare(swapped, OutlierOptions{}, "swapped pairs");
  // In order until the very last sample (an early window's): every window already judged in the
  // first pass must be forgotten before the ordered pass.
  FleetData late = BenchLikeFleet(6000, 8, 1);
  GpuSample early = late.samples[5];
  early.sm_clock_mhz = 900;
  late.samples.push_back(early);
  EXPECT_GT(Compare(late, OutlierOptions{}, "late out-of-order sample"), 0u);
  Compare(FleetData{}, OutlierOptions{}, "empty");
}

TEST(FleetOutliersExactTest, AnalyzeUsesTheOnePassResult) {
  FleetData d = BenchLikeFleet(3000, 6, 1);
  FleetAnalysis a = Analyze(d, FleetOptions{});
  ExpectSame(a.stragglers, FindStragglers(d, OutlierOptions{}), "analyze");
  ExpectSameIdle(a.idle, FindIdle(d, OutlierOptions{}), "analyze");
  EXPECT_FALSE(a.idle.empty());
}

}  // namespace
}  // namespace gpudoctor::fleet
