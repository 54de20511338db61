// NVML sampling cost against the fake NVML (8x H100 scenario): wall time of one whole sample of
// all 8 GPUs with a zero window (our own time plus the fake's trivial answers: init, 8 worker
// threads, every call, event drain, shutdown) and the NVML calls per GPU, read from the fake's
// call counter. Targets (issue: GPU layer): <= 30 calls per GPU, <= 20 ms for 8 GPUs.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "nvml/sampler.h"
#include "rules/engine.h"

namespace gpudoctor {
namespace {

std::string FakeLib() {
  return std::string(GPUDOCTOR_BUILD_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1";
}

void SampleScenario(benchmark::State& state, const char* scenario) {
  std::string path = std::string(GPUDOCTOR_FIXTURES) + "/nvml/" + scenario;
  setenv("FAKE_NVML_SCENARIO", path.c_str(), 1);
  NvmlSampleOptions o;
  o.library_path = FakeLib();
  o.window = std::chrono::milliseconds(0);
  int max_calls = 0;
  size_t gpus = 0;
  for (auto _ : state) {
    o.deadline = SteadyClock::now() + std::chrono::seconds(10);
    GpuLayerFacts f = SampleNvml(o);
    gpus = f.gpus.size();
    for (const auto& g : f.gpus) max_calls = std::max(max_calls, g.nvml_calls);
    Snapshot snap;
    snap.gpu = std::move(f);
    benchmark::DoNotOptimize(EvaluateRules(snap, Thresholds()));
  }
  void* h = dlopen(FakeLib().c_str(), RTLD_NOW | RTLD_NOLOAD);
  auto count = h ? reinterpret_cast<int (*)(int)>(dlsym(h, "fake_nvml_call_count")) : nullptr;
  state.counters["gpus"] = static_cast<double>(gpus);
  state.counters["max_calls_per_gpu"] = max_calls;
  if (count != nullptr) state.counters["fake_counted_gpu0"] = count(0);
}

void BM_SampleHealthyIdle8Gpus(benchmark::State& state) {
  SampleScenario(state, "h100_healthy.scenario");
}
// Busy GPUs add the two PCIe throughput calls (the fake sleeps 20 ms in each, like the driver);
// in a check they run inside the sampling window, so they add calls but no wall time there.
void BM_SampleHealthyBusy8Gpus(benchmark::State& state) {
  SampleScenario(state, "h100_busy.scenario");
}
BENCHMARK(BM_SampleHealthyIdle8Gpus)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SampleHealthyBusy8Gpus)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(20);

}  // namespace
}  // namespace gpudoctor

BENCHMARK_MAIN();
