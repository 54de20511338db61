// Fuzzes the planner's input parsers: the trace CSV and the context-length distribution. Any
// input must parse into values inside the documented ranges or be refused with a message that
// names a line; a parsed trace is sorted by arrival, and a tiny simulation of it must keep its
// invariants (every request completed or rejected, KV never above capacity).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "plan/batch_sim.h"
#include "plan/context_dist.h"
#include "plan/trace.h"

using namespace gpudoctor::plan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto dist = ParseContextDist(text);
  if (dist.ok()) {
    if (dist->buckets.empty()) __builtin_trap();
    for (const auto& b : dist->buckets) {
      if (b.tokens < 1 || b.tokens > kMaxContextTokens || !(b.weight > 0)) __builtin_trap();
    }
    double mean = dist->MeanTokens();
    if (!(mean >= 1 && mean <= dist->MaxTokens() + 1e-6)) __builtin_trap();
  } else if (dist.status().message().empty()) {
    __builtin_trap();
  }

  auto trace = ParseTraceCsv(text);
  if (!trace.ok()) {
    if (trace.status().message().empty()) __builtin_trap();
    return 0;
  }
  for (size_t i = 0; i < trace->size(); ++i) {
    const Request& r = (*trace)[i];
    if (r.arrival_s < 0 || r.prompt_tokens < 1 || r.output_tokens < 1) __builtin_trap();
    if (i > 0 && r.arrival_s < (*trace)[i - 1].arrival_s) __builtin_trap();
  }
  if (trace->size() > 200) return 0;  // keep the simulation cheap
  for (auto& r : *trace) {            // bound the work: the parser accepts up to 10 million tokens
    r.prompt_tokens = 1 + r.prompt_tokens % 4096;
    r.output_tokens = 1 + r.output_tokens % 512;
  }
  SimConfig c;
  c.cost = {0.001, 1e-5, 1e-8};
  c.kv_bytes_per_token = 1000;
  c.kv_capacity_tokens = 20000;
  c.max_context = 5000;
  c.max_seqs = 16;
  for (const auto& r : {SimulateStatic(*trace, c), SimulateContinuous(*trace, c)}) {
    if (r.completed + r.rejected != trace->size()) __builtin_trap();
    if (r.kv_peak_bytes > r.kv_capacity_bytes) __builtin_trap();
    if (r.busy_s > r.active_s + 1e-6 || r.active_s > r.span_s + 1e-6) __builtin_trap();
  }
  return 0;
}
