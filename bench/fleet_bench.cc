// Fleet analysis benchmarks (issue 12 item 5). Two measurements, printed as key=value lines:
//   analysis: 100,000 GPUs x 60 samples x 10 metrics (generated in memory: SM clock, power,
//             utilisation, temperature, 4 counters, max clock, power limit), then Analyze()
//             (stragglers, table, lemons, stats); target < 1 s and < 1 GiB peak RSS.
//   reports:  12,500 node reports (8 GPUs each, real check --json shape) written to a temp
//             directory, then ReadReports() + Analyze().
// Usage: fleet_bench [--gpus N] [--samples N] [--nodes N] (no Google Benchmark loop: one timed
// run each, like the targets are stated).
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "fleet/analysis.h"
#include "fleet/report_reader.h"

namespace {
using namespace gpudoctor::fleet;
using Clock = std::chrono::steady_clock;

double PeakRssMiB() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024.0;
}

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}

double Seconds(Clock::time_point a) {
  return std::chrono::duration<double>(Clock::now() - a).count();
}

void Analysis(int gpus, int samples) {
  FleetData d;
  d.cards.reserve(gpus);
  std::mt19937 rng(42);
  std::normal_distribution<float> noise(0, 5);
  const int per_node = 8;
  for (int g = 0; g < gpus; ++g) {
    Card c;
    c.node = "node" + std::to_string(g / per_node);
    c.pci_bus_id = "0000:" + std::to_string(10 + g % per_node) + ":00.0";
    c.serial = "SN" + std::to_string(g);
    c.model = g % 2 ? "NVIDIA H100 80GB HBM3" : "NVIDIA A100-SXM4-80GB";
    c.index = g % per_node;
    c.max_sm_clock_mhz = 1980;
    c.power_limit_w = 700;
    d.cards.push_back(std::move(c));
  }
  for (int n = 0; n < gpus / per_node; ++n) {
    for (int w = 0; w < samples; ++w) {
      NodeReport r;
      r.node = d.cards[n * per_node].node;
      r.time_s = 1768003200 + w * 300;
      r.gpu_count = per_node;
      d.reports.push_back(std::move(r));
    }
  }
  d.samples.reserve(static_cast<size_t>(gpus) * samples);
  for (int w = 0; w < samples; ++w) {
    for (int g = 0; g < gpus; ++g) {
      GpuSample s;
      s.card = static_cast<uint32_t>(g);
      s.time_s = 1768003200 + w * 300;
      bool slow = g % 997 == 0 && w > 2;
      s.sm_clock_mhz = (slow ? 1400.f : 1980.f) + noise(rng);
      s.power_w = 650 + noise(rng);
      s.util_pct = g % 1499 == 0 ? 20.f : 97.f;
      s.temp_c = 60 + noise(rng) / 5;
      s.clock_event_reasons = slow ? 8u : 0u;
      s.ecc_sbe = 0;
      s.ecc_dbe = 0;
      s.pcie_replays = static_cast<uint32_t>(w);
      d.samples.push_back(s);
    }
  }
  double gen_rss = PeakRssMiB();
  auto t0 = Clock::now();
  double cpu0 = CpuSeconds();
  FleetAnalysis a = Analyze(d, FleetOptions{});
  double secs = Seconds(t0), cpu = CpuSeconds() - cpu0;
  std::printf(
      "bench=fleet_analysis gpus=%d samples_per_gpu=%d metrics=10 seconds=%.3f cpu_seconds=%.3f "
      "peak_rss_mib=%.0f rss_after_generation_mib=%.0f stragglers=%zu nodes=%zu\n",
      gpus, samples, secs, cpu, PeakRssMiB(), gen_rss, a.stragglers.size(), a.table.size());
}

void Reports(int nodes) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("fleet_bench_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string tpl_path =
      std::string(GPUDOCTOR_SOURCE_DIR) + "/tests/fixtures/fleet/cluster/node01-w0.json";
  std::ifstream in(tpl_path);
  nlohmann::json tpl = nlohmann::json::parse(in, nullptr, false);
  if (tpl.is_discarded()) {
    std::fprintf(stderr, "fleet_bench: cannot read %s\n", tpl_path.c_str());
    return;
  }
  for (int n = 0; n < nodes; ++n) {
    tpl["host"] = "node" + std::to_string(n);
    for (auto& g : tpl["gpus"]) {
      g["serial"] = "SN" + std::to_string(n) + "-" + std::to_string(g["index"].get<int>());
      g["uuid"] = "GPU-" + std::to_string(n) + "-" + std::to_string(g["index"].get<int>());
    }
    std::ofstream(dir / ("node" + std::to_string(n) + ".json")) << tpl.dump(2);
  }
  auto t0 = Clock::now();
  double cpu0 = CpuSeconds();
  FleetData d;
  gpudoctor::Status s = ReadReports(dir.string(), 1900000000, d);
  double read_s = Seconds(t0);
  auto t1 = Clock::now();
  FleetAnalysis a = Analyze(d, FleetOptions{});
  double analyse_s = Seconds(t1), cpu = CpuSeconds() - cpu0;
  std::printf(
      "bench=fleet_reports nodes=%d gpus=%zu read_seconds=%.3f analyse_seconds=%.3f "
      "cpu_seconds=%.3f peak_rss_mib=%.0f problems=%zu ok=%d\n",
      nodes, d.cards.size(), read_s, analyse_s, cpu, PeakRssMiB(), d.problems.size(),
      s.ok() ? 1 : 0);
  (void)a;
  fs::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  int gpus = 100000, samples = 60, nodes = 12500;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    int v = std::atoi(argv[i + 1]);
    if (k == "--gpus") gpus = v;
    if (k == "--samples") samples = v;
    if (k == "--nodes") nodes = v;
  }
  if (gpus > 0) Analysis(gpus, samples);
  if (nodes > 0) Reports(nodes);
  return 0;
}
