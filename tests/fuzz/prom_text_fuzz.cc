// Fuzzes the Prometheus text exposition parser (what inference servers and jobs serve on
// /metrics), the selector parser, and the engines' normalisation on whatever parsed: a parse
// never crashes; every sample belongs to a family whose type is one of the five; a histogram's
// summed buckets are ascending by bound; a quantile, when there is one, is not NaN.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "inference/engine_metrics.h"
#include "inference/inference_window.h"
#include "inference/prom_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudoctor;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  PromTextLimits lim;
  lim.max_samples = 5000;
  auto r = ParsePromText(text, lim);
  (void)ParsePromSelector(text.substr(0, 256));
  if (!r.ok()) return 0;
  for (const auto& f : *r) {
    if (f.type != "counter" && f.type != "gauge" && f.type != "histogram" && f.type != "summary" &&
        f.type != "untyped") {
      __builtin_trap();
    }
    if (auto h = SumPromHistogram(f)) {
      for (size_t i = 1; i < h->buckets.size(); ++i) {
        if (!(h->buckets[i - 1].first < h->buckets[i].first)) __builtin_trap();
      }
      auto q = PromHistogramQuantile(*h, 0.95);
      (void)q;
    }
  }
  for (auto e : {InferenceEngine::kAuto, InferenceEngine::kVllm, InferenceEngine::kTgi,
                 InferenceEngine::kSglang, InferenceEngine::kTriton}) {
    EngineReading reading = NormaliseEngine(e, *r);
    InferenceWindow w;
    InferenceFacts facts;
    w.Add(reading, 0, facts);
    w.Add(reading, 1, facts);
    if (facts.preemptions_window && *facts.preemptions_window < 0 &&
        std::isfinite(*facts.preemptions_window)) {
      // Same reading twice: no increase can be negative.
      __builtin_trap();
    }
  }
  return 0;
}
