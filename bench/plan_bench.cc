// The batching simulator on 100,000 generated requests (the budget: under 2 s for both
// policies), llama-3-8b on an H100 at two loads: moderate (2 req/s, the GPU ~99% busy under
// continuous batching) and overload (20 req/s, queues grow). Also the KV planner alone.
#include <benchmark/benchmark.h>

#include "plan/batching_plan.h"

namespace {
using namespace gpudoctor::plan;

BatchingInput Llama8bOnH100() {
  BatchingInput in;
  in.kv.model = FindModelPreset("llama-3-8b")->shape;
  in.kv.gpu_mem_bytes = 80ull << 30;
  in.gpu = *FindGpuSpec("h100");
  in.batch_size = 32;
  return in;
}

std::vector<Request> Trace(double rate) {
  TraceSpec spec{rate, 100000, 1, *ParseLengthRange("256:2048"), *ParseLengthRange("exp:256:2048")};
  return GenerateTrace(spec);
}

void BM_Simulate100k(benchmark::State& state) {
  double rate = static_cast<double>(state.range(0));
  auto trace = Trace(rate);
  auto config = BuildSimConfig(Llama8bOnH100(), trace, nullptr);
  if (!config.ok()) {
    state.SkipWithError(config.status().message().c_str());
    return;
  }
  for (auto _ : state) {
    PolicyResult s = SimulateStatic(trace, *config);
    PolicyResult c = SimulateContinuous(trace, *config);
    benchmark::DoNotOptimize(s.p99_latency_s);
    benchmark::DoNotOptimize(c.p99_latency_s);
  }
  state.counters["requests"] = static_cast<double>(trace.size());
}
BENCHMARK(BM_Simulate100k)->Arg(2)->Arg(20)->Unit(benchmark::kMillisecond);

void BM_GenerateTrace100k(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(Trace(2));
}
BENCHMARK(BM_GenerateTrace100k)->Unit(benchmark::kMillisecond);

void BM_PlanKv(benchmark::State& state) {
  KvPlanInput in;
  in.model = FindModelPreset("llama-3-70b")->shape;
  in.tp = 4;
  in.gpu_mem_bytes = 80ull << 30;
  for (auto _ : state) benchmark::DoNotOptimize(PlanKv(in));
}
BENCHMARK(BM_PlanKv);

}  // namespace

BENCHMARK_MAIN();
