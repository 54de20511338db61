// Request traces for the batching simulator: parsed from a CSV of real requests or generated
// from an arrival rate and uniform length ranges with a seed (same seed, same trace, on every
// platform: our own SplitMix64, not <random>'s distributions). Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace gpudoctor::plan {

struct Request {
  double arrival_s = 0;        // seconds from the start of the trace, >= 0
  uint32_t prompt_tokens = 0;  // >= 1
  uint32_t output_tokens = 0;  // >= 1
};

// Uniform over [lo, hi], or (exponential) ceil of an exponential with mean `mean`, clipped to
// [lo, hi]: real chat outputs are long-tailed, a few answers much longer than most.
struct LengthRange {
  uint32_t lo = 1, hi = 1;  // inclusive, 1 <= lo <= hi
  bool exponential = false;
  double mean = 0;  // exponential only
};
// "512", "128:2048" (uniform) or "exp:256:4096" (exponential, mean 256, at most 4096). Error
// names the value.
Result<LengthRange> ParseLengthRange(std::string_view s);

// The inverse of ParseLengthRange: "512", "128:2048", "exp:256:4096".
std::string FormatLengthRange(const LengthRange& r);

struct TraceSpec {
  double rate_per_s = 1;  // Poisson arrivals, > 0
  uint64_t requests = 1000;
  uint64_t seed = 1;
  LengthRange prompt{512, 512};
  LengthRange output{128, 128};
};

std::vector<Request> GenerateTrace(const TraceSpec& spec);

// CSV: `arrival_s,prompt_tokens,output_tokens` per line; an optional header line (first line
// whose first field is not a number), `#` comments and blank lines are skipped. Rows are sorted
// by arrival (stable). Errors (invalid_argument) name the line number and its text. At most
// 10 million rows.
Result<std::vector<Request>> ParseTraceCsv(std::string_view text);

}  // namespace gpudoctor::plan
