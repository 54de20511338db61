// Fleet analysis benchmarks (issue 12 item 5). Two measurements, printed as key=value lines:
//   analysis: 100,000 GPUs x 60 samples x 10 metrics (generated in memory: SM clock, power,
//             utilisation, temperature, 4 counters, max clock, power limit), then Analyze()
//             (stragglers, table, lemons, stats); target <= 1 s and <= 1 GiB peak RSS; then each
//             step of Analyze() again on its own ("step=" lines: where the time goes).
//   reports:  N nodes x W windows of reports (8 GPUs each, real check --json shape, ~26 KB)
//             written to a directory, then ReadReports() + Analyze(); then the report index
//             built, and a `fleet card` and a `fleet slot` query answered through it.
// Usage: fleet_bench [--gpus N] [--samples N] [--nodes N] [--windows W] [--dir DIR] (no Google
// Benchmark loop: one timed run each, like the targets are stated); fleet_bench --generate DIR
// --nodes N --windows W only writes the reports (bench/fleet_scale.sh times the CLI on them).
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "fleet/analysis.h"
#include "fleet/ledger.h"
#include "fleet/onsets.h"
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

// A bench that timed a failed read would print figures of nothing: say so and stop.
void RequireOk(const gpudoctor::Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "fleet_bench: %s: %s\n", what, s.ToString().c_str());
  std::exit(1);
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
  // Where the time goes: each step of Analyze() run again on its own, after it (warm heap).
  FleetOptions o;
  auto step = [](const char* name, auto&& fn) {
    double c0 = CpuSeconds();
    auto t = Clock::now();
    fn();
    std::printf(" step=%s seconds=%.3f cpu_seconds=%.3f\n", name, Seconds(t), CpuSeconds() - c0);
  };
  std::vector<size_t> onsets;
  std::vector<Lemon> lemons;
  FailureStats stats;
  step("onsets", [&] { onsets = FindOnsets(d); });
  step("outliers", [&] { (void)FindOutliers(d, o.outliers); });  // stragglers + idle, one pass
  step("health_table", [&] { (void)BuildHealthTable(d, onsets, a.stragglers); });
  step("lemons", [&] { lemons = FindLemons(d, onsets, o.lemon_min_onsets, o.incident_gap_s); });
  step("identity", [&] { (void)IdentityProblems(d); });
  step("failure_stats", [&] { stats = ComputeFailureStats(d, onsets, o.outliers.window_s); });
  step("interruptions",
       [&] { (void)ComputeInterruptions(d, onsets, lemons, stats.gpu_days, o.incident_gap_s); });
}

// Writes `nodes` x `windows` check --json reports (the real report shape: the cluster fixture,
// 8 GPUs, pretty-printed like check --json) under `dir`, one file per node and window, by
// filling a template (no JSON library per file). Each report carries two findings (a warning
// on GPU 3, and on every 50th node an Xid 79 on GPU 5). Returns the bytes written.
size_t GenerateReports(const std::filesystem::path& dir, int nodes, int windows) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  std::string tpl_path =
      std::string(GPUDOCTOR_SOURCE_DIR) + "/tests/fixtures/fleet/cluster/node01-w0.json";
  std::ifstream in(tpl_path);
  nlohmann::ordered_json tpl = nlohmann::ordered_json::parse(in, nullptr, false);
  if (tpl.is_discarded()) {
    std::fprintf(stderr, "fleet_bench: cannot read %s\n", tpl_path.c_str());
    std::exit(1);
  }
  tpl["host"] = "@HOST@";
  tpl["time"] = "@TIME@";
  tpl["job"] = "slurm:@JOB@";
  tpl["findings"] = nlohmann::ordered_json::array();
  tpl["findings"].push_back(
      {{"id", "gpu.thermal.hot"},
       {"layer", "hardware"},
       {"severity", "warn"},
       {"summary", "GPU 3 temperature high"},
       {"gpu", {{"index", 3}, {"pci_bus_id", "@BUS3@"}, {"serial", "@SN3@"}}}});
  tpl["findings"].push_back("@XID@");
  for (auto& g : tpl["gpus"]) {
    int i = g["index"].get<int>();
    g["serial"] = "@SN" + std::to_string(i) + "@";
    g["uuid"] = "GPU-@HOST@-" + std::to_string(i);
    if (i == 3) tpl["findings"][0]["gpu"]["pci_bus_id"] = g["pci_bus_id"];
  }
  std::string text = tpl.dump(2);
  const std::string xid =
      "{\"id\": \"gpu.xid\", \"layer\": \"hardware\", \"severity\": \"crit\", \"summary\": \"Xid "
      "79 on GPU 5\", \"evidence\": {\"xid\": 79}, \"gpu\": {\"index\": 5}}";
  size_t bytes = 0;
  std::string out;
  for (int n = 0; n < nodes; ++n) {
    char host[32];
    std::snprintf(host, sizeof host, "node%05d", n);
    for (int w = 0; w < windows; ++w) {
      out.clear();
      int64_t t = 1768003200 + int64_t{w} * 300 + n % 60;
      time_t tt = static_cast<time_t>(t);
      tm utc{};
      gmtime_r(&tt, &utc);
      char when[32];
      std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
      for (size_t i = 0; i < text.size();) {
        size_t at = text.find('@', i);
        if (at == std::string::npos) {
          out.append(text, i, std::string::npos);
          break;
        }
        size_t end = text.find('@', at + 1);
        std::string_view key(text.data() + at + 1, end - at - 1);
        bool quoted_xid = key == "XID";
        out.append(text, i, at - i - (quoted_xid ? 1 : 0));
        if (key == "HOST") {
          out += host;
        } else if (key == "TIME") {
          out += when;
        } else if (key == "JOB") {
          out += std::to_string(n / 4);
        } else if (key == "BUS3") {
          out += "0000:3a:00.0";
        } else if (key == "XID") {
          // Replaces the quoted placeholder "@XID@" with an object (or a second warning).
          out += n % 50 == 0 ? xid : "{\"id\": \"host.load.high\", \"severity\": \"info\"}";
          end += 1;  // the closing quote
        } else if (key.substr(0, 2) == "SN") {
          out += "SN" + std::string(host + 4) + "-" + std::string(key.substr(2));
        }
        i = end + 1;
      }
      char name[64];
      std::snprintf(name, sizeof name, "%s-w%02d.json", host, w);
      std::ofstream(dir / name, std::ios::binary) << out;
      bytes += out.size();
    }
  }
  return bytes;
}

void Reports(int nodes, int windows, const std::string& keep_dir) {
  namespace fs = std::filesystem;
  fs::path dir = keep_dir.empty()
                     ? fs::temp_directory_path() / ("fleet_bench_" + std::to_string(getpid()))
                     : fs::path(keep_dir);
  size_t bytes = GenerateReports(dir, nodes, windows);
  auto t0 = Clock::now();
  double cpu0 = CpuSeconds();
  FleetData d;
  gpudoctor::Status s = ReadReports(dir.string(), 1900000000, d);
  double read_s = Seconds(t0), read_cpu = CpuSeconds() - cpu0;
  auto t1 = Clock::now();
  FleetAnalysis a = Analyze(d, FleetOptions{});
  double analyse_s = Seconds(t1), cpu = CpuSeconds() - cpu0;
  std::printf(
      "bench=fleet_reports nodes=%d reports=%zu mib=%.0f gpus=%zu read_seconds=%.3f "
      "read_cpu_seconds=%.3f analyse_seconds=%.3f cpu_seconds=%.3f peak_rss_mib=%.0f "
      "problems=%zu ok=%d\n",
      nodes, d.reports.size(), bytes / 1048576.0, d.cards.size(), read_s, read_cpu, analyse_s, cpu,
      PeakRssMiB(), d.problems.size(), s.ok() ? 1 : 0);
  (void)a;
  // The index: built once (every file parsed), then a card and a slot query as `fleet card` /
  // `fleet slot` run them (read through the index, ledger, faults, verdict).
  fs::path index = dir.string() + ".idx";
  {
    FleetData d2;
    ReadStats st;
    auto t = Clock::now();
    double c0 = CpuSeconds();
    RequireOk(
        ReadReports(dir.string(), 1900000000, d2, std::chrono::seconds(10), index.string(), &st),
        "fleet_index_build");
    std::printf(
        "bench=fleet_index_build nodes=%d seconds=%.3f cpu_seconds=%.3f parsed=%zu "
        "index_mib=%.1f\n",
        nodes, Seconds(t), CpuSeconds() - c0, st.files_parsed, fs::file_size(index) / 1048576.0);
  }
  for (const char* mode : {"card", "slot"}) {
    FleetData d3;
    ReadStats st;
    auto t = Clock::now();
    double c0 = CpuSeconds();
    RequireOk(
        ReadReports(dir.string(), 1900000000, d3, std::chrono::seconds(10), index.string(), &st),
        mode);
    double read = Seconds(t), read_cpu = CpuSeconds() - c0;
    auto ledger = BuildLedger(d3);
    auto faults = HardwareFaults(d3, FindOnsets(d3));
    char name[32];
    std::snprintf(name, sizeof name, "node%05d", nodes / 2);
    const std::string node = name;
    Verdict v = std::string(mode) == "card"
                    ? JudgeCard("SN" + node.substr(4) + "-3", ledger, faults)
                    : JudgeSlot(node + ":0000:3a:00.0", ledger, faults);
    std::printf(
        "bench=fleet_%s_query nodes=%d seconds=%.3f cpu_seconds=%.3f read_seconds=%.3f "
        "read_cpu_seconds=%.3f from_index=%zu parsed=%zu verdict=%s\n",
        mode, nodes, Seconds(t), CpuSeconds() - c0, read, read_cpu, st.files_from_index,
        st.files_parsed, v.verdict.c_str());
  }
  fs::remove(index);
  if (keep_dir.empty()) fs::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  int gpus = 100000, samples = 60, nodes = 2000, windows = 4;
  std::string generate, dir;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    int v = std::atoi(argv[i + 1]);
    if (k == "--gpus") gpus = v;
    if (k == "--samples") samples = v;
    if (k == "--nodes") nodes = v;
    if (k == "--windows") windows = v;
    if (k == "--generate") generate = argv[i + 1];
    if (k == "--dir") dir = argv[i + 1];
  }
  if (!generate.empty()) {  // only write the reports (bench/fleet_scale.sh times the CLI on them)
    size_t bytes = GenerateReports(generate, nodes, windows);
    std::printf("bench=fleet_generate nodes=%d windows=%d mib=%.0f\n", nodes, windows,
                bytes / 1048576.0);
    return 0;
  }
  if (gpus > 0) Analysis(gpus, samples);
  if (nodes > 0) Reports(nodes, windows, dir);
  return 0;
}
