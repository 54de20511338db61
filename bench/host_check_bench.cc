// One host-layer probe pass (cpu, memory, pressure, disk, processes) on a fixture tree, with the
// sampling window at 0 so that only reading and parsing are measured. Also each probe alone, and
// the process probe on a synthetic tree of many processes and threads.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "probes/probe.h"
#include "probes/probe_entry_points.h"
#include "rules/engine.h"

namespace {
using namespace gpudoctor;

ProbeContext FixtureContext(const std::string& host) {
  std::string base = std::string(GPUDOCTOR_FIXTURES) + "/hosts/" + host;
  auto settings = std::make_shared<Settings>();
  settings->fs = RootFs(base + "/proc", base + "/sys", base + "/root");
  settings->sample_ms = 0;
  return ProbeContext{settings, SteadyClock::now() + std::chrono::hours(1)};
}

void BM_HostLayerPass(benchmark::State& state) {
  ProbeContext ctx = FixtureContext("dstate-nvidia-smi");
  for (auto _ : state) {
    Snapshot snap;
    for (ProbeFn fn :
         {RunCpuProbe, RunMemoryProbe, RunPressureProbe, RunDiskProbe, RunProcessProbe}) {
      ProbeOutput out = fn(ctx);
      if (out.apply) out.apply(snap);
    }
    auto findings = EvaluateRules(snap, ctx.settings->thresholds);
    benchmark::DoNotOptimize(findings);
  }
}
BENCHMARK(BM_HostLayerPass)->Unit(benchmark::kMicrosecond);

void BM_Probe(benchmark::State& state, ProbeFn fn) {
  ProbeContext ctx = FixtureContext("dstate-nvidia-smi");
  for (auto _ : state) {
    ProbeOutput out = fn(ctx);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK_CAPTURE(BM_Probe, cpu, RunCpuProbe)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Probe, memory, RunMemoryProbe)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Probe, pressure, RunPressureProbe)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Probe, disk, RunDiskProbe)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Probe, processes, RunProcessProbe)->Unit(benchmark::kMicrosecond);

// A synthetic /proc with state.range(0) processes of 8 threads each (a busy GPU server has
// 1-3k processes and 20-40k threads).
void BM_ProcessProbeManyTasks(benchmark::State& state) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("gpudoctor-bench-procs-" + std::to_string(getpid()));
  const int procs = static_cast<int>(state.range(0));
  for (int p = 1; p <= procs; ++p) {
    int pid = p * 10;
    fs::create_directories(dir / std::to_string(pid) / "task");
    std::ofstream(dir / std::to_string(pid) / "stat")
        << pid << " (python3) S 1 " << pid << " " << pid << " 0 -1 4194560 0 0 0 0 1 1\n";
    for (int t = 0; t < 8; ++t) {
      fs::path tdir = dir / std::to_string(pid) / "task" / std::to_string(pid + t);
      fs::create_directories(tdir);
      std::ofstream(tdir / "stat")
          << pid + t << " (worker) S 1 " << pid << " 0 0 -1 4194560 0 0 0 0 1 1\n";
    }
  }
  auto settings = std::make_shared<Settings>();
  settings->fs = RootFs(dir.string(), "/nonexistent", "/nonexistent");
  settings->sample_ms = 0;
  ProbeContext ctx{settings, SteadyClock::now() + std::chrono::hours(1)};
  for (auto _ : state) {
    ProbeOutput out = RunProcessProbe(ctx);
    benchmark::DoNotOptimize(out);
  }
  state.counters["tasks"] = procs * 8;
  fs::remove_all(dir);
}
BENCHMARK(BM_ProcessProbeManyTasks)->Arg(250)->Arg(2000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
