// Context-length distribution for the KV planner: how long the sequences (prompt plus output, in
// tokens) are, with relative weights. From `--context N` (one length) or a file of
// `TOKENS[,WEIGHT]` lines (`#` comments and blank lines allowed; weight defaults to 1).
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace gpudoctor::plan {

inline constexpr uint32_t kMaxContextTokens = 10'000'000;

struct ContextBucket {
  uint32_t tokens = 0;  // 1..kMaxContextTokens
  double weight = 1;    // > 0, relative
};

struct ContextDist {
  std::vector<ContextBucket> buckets;  // never empty once parsed

  uint32_t MaxTokens() const;
  double MeanTokens() const;  // weighted
  // Weighted mean of ceil(tokens / block_tokens): paged blocks one sequence holds.
  double MeanBlocks(uint32_t block_tokens) const;
};

ContextDist SingleContext(uint32_t tokens);
// Errors (invalid_argument) name the line number and its text; at most 100000 buckets.
Result<ContextDist> ParseContextDist(std::string_view text);

}  // namespace gpudoctor::plan
