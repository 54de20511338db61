#include "plan/context_dist.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/strings.h"

namespace gpudoctor::plan {

uint32_t ContextDist::MaxTokens() const {
  uint32_t m = 0;
  for (const auto& b : buckets) m = std::max(m, b.tokens);
  return m;
}

double ContextDist::MeanTokens() const {
  double sum = 0, w = 0;
  for (const auto& b : buckets) {
    sum += b.weight * b.tokens;
    w += b.weight;
  }
  return w > 0 ? sum / w : 0;
}

double ContextDist::MeanBlocks(uint32_t block_tokens) const {
  double sum = 0, w = 0;
  for (const auto& b : buckets) {
    sum += b.weight * static_cast<double>((b.tokens + block_tokens - 1) / block_tokens);
    w += b.weight;
  }
  return w > 0 ? sum / w : 0;
}

ContextDist SingleContext(uint32_t tokens) { return ContextDist{{{tokens, 1.0}}}; }

Result<ContextDist> ParseContextDist(std::string_view text) {
  ContextDist d;
  int line_no = 0;
  for (std::string_view raw : Split(text, "\n", /*skip_empty=*/false)) {
    ++line_no;
    std::string_view line = Trim(raw);
    if (line.empty() || line[0] == '#') continue;
    auto where = [&] {
      return "context-dist line " + std::to_string(line_no) + " '" + Sanitize(line, 60) + "': ";
    };
    auto fields = Split(line, ", \t");
    if (fields.empty() || fields.size() > 2) {
      return InvalidArgument(where() + "expected TOKENS[,WEIGHT]");
    }
    auto tokens = ParseInt64(fields[0]);
    if (!tokens || *tokens < 1 || *tokens > kMaxContextTokens) {
      return InvalidArgument(where() + "tokens must be an integer in [1, " +
                             std::to_string(kMaxContextTokens) + "]");
    }
    double weight = 1;
    if (fields.size() == 2) {
      auto w = ParseDouble(fields[1]);
      if (!w || !(*w > 0) || *w > 1e15) {
        return InvalidArgument(where() + "weight must be a positive number");
      }
      weight = *w;
    }
    if (d.buckets.size() >= 100000) {
      return InvalidArgument(where() + "more than 100000 lines");
    }
    d.buckets.push_back({static_cast<uint32_t>(*tokens), weight});
  }
  if (d.buckets.empty()) return InvalidArgument("context-dist: no TOKENS[,WEIGHT] line");
  return d;
}

}  // namespace gpudoctor::plan
