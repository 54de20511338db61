#include "plan/trace.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/strings.h"
#include "plan/context_dist.h"

namespace gpudoctor::plan {
namespace {

struct SplitMix64 {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double Uniform01Open() {  // (0, 1]
    return (static_cast<double>(Next() >> 11) + 1.0) * 0x1.0p-53;
  }
  uint32_t Between(LengthRange r) {
    if (r.exponential) {
      double v = std::ceil(-r.mean * std::log(Uniform01Open()));
      return static_cast<uint32_t>(
          std::clamp(v, static_cast<double>(r.lo), static_cast<double>(r.hi)));
    }
    uint64_t span = static_cast<uint64_t>(r.hi) - r.lo + 1;
    return r.lo + static_cast<uint32_t>(Next() % span);
  }
};

}  // namespace

Result<LengthRange> ParseLengthRange(std::string_view s) {
  auto bad = [&] {
    return InvalidArgument("expected TOKENS or LO:HI with 1 <= LO <= HI <= " +
                           std::to_string(kMaxContextTokens) + ", got '" + Sanitize(s, 40) + "'");
  };
  if (StartsWith(s, "exp:")) {
    auto parts = Split(s.substr(4), ":", /*skip_empty=*/false);
    auto mean = parts.size() == 2 ? ParseDouble(parts[0]) : std::nullopt;
    auto hi = parts.size() == 2 ? ParseInt64(parts[1]) : std::nullopt;
    if (!mean || !hi || *mean < 1 || *hi < 1 || *hi > kMaxContextTokens || *mean > *hi) {
      return InvalidArgument("expected exp:MEAN:MAX with 1 <= MEAN <= MAX <= " +
                             std::to_string(kMaxContextTokens) + ", got '" + Sanitize(s, 40) + "'");
    }
    return LengthRange{1, static_cast<uint32_t>(*hi), true, *mean};
  }
  std::string_view lo_s = s, hi_s = s;
  if (size_t colon = s.find(':'); colon != std::string_view::npos) {
    lo_s = s.substr(0, colon);
    hi_s = s.substr(colon + 1);
  }
  auto lo = ParseInt64(lo_s), hi = ParseInt64(hi_s);
  if (!lo || !hi || *lo < 1 || *hi < *lo || *hi > kMaxContextTokens) return bad();
  return LengthRange{static_cast<uint32_t>(*lo), static_cast<uint32_t>(*hi)};
}

std::string FormatLengthRange(const LengthRange& r) {
  if (r.exponential) return "exp:" + FormatDouble(r.mean, 1) + ":" + std::to_string(r.hi);
  if (r.lo == r.hi) return std::to_string(r.lo);
  return std::to_string(r.lo) + ":" + std::to_string(r.hi);
}

std::vector<Request> GenerateTrace(const TraceSpec& spec) {
  SplitMix64 rng{spec.seed};
  std::vector<Request> out;
  out.reserve(spec.requests);
  double t = 0;
  for (uint64_t i = 0; i < spec.requests; ++i) {
    t += -std::log(rng.Uniform01Open()) / spec.rate_per_s;
    Request r;
    r.arrival_s = t;
    r.prompt_tokens = rng.Between(spec.prompt);
    r.output_tokens = rng.Between(spec.output);
    out.push_back(r);
  }
  return out;
}

Result<std::vector<Request>> ParseTraceCsv(std::string_view text) {
  std::vector<Request> out;
  int line_no = 0;
  bool seen_row = false;
  for (std::string_view raw : Split(text, "\n", /*skip_empty=*/false)) {
    ++line_no;
    std::string_view line = Trim(raw);
    if (line.empty() || line[0] == '#') continue;
    auto where = [&] {
      return "trace line " + std::to_string(line_no) + " '" + Sanitize(line, 60) + "': ";
    };
    auto fields = Split(line, ",", /*skip_empty=*/false);
    if (!seen_row && !fields.empty() && !ParseDouble(fields[0])) {
      seen_row = true;  // a header: arrival_s,prompt_tokens,output_tokens
      continue;
    }
    seen_row = true;
    if (fields.size() != 3) {
      return InvalidArgument(where() + "expected arrival_s,prompt_tokens,output_tokens");
    }
    auto arrival = ParseDouble(fields[0]);
    if (!arrival || *arrival < 0 || *arrival > 1e9) {
      return InvalidArgument(where() + "arrival time must be a number of seconds >= 0");
    }
    auto prompt = ParseInt64(fields[1]);
    auto output = ParseInt64(fields[2]);
    if (!prompt || *prompt < 1 || *prompt > kMaxContextTokens) {
      return InvalidArgument(where() + "prompt tokens must be an integer in [1, " +
                             std::to_string(kMaxContextTokens) + "]");
    }
    if (!output || *output < 1 || *output > kMaxContextTokens) {
      return InvalidArgument(where() + "output tokens must be an integer in [1, " +
                             std::to_string(kMaxContextTokens) + "]");
    }
    if (out.size() >= 10'000'000) return InvalidArgument(where() + "more than 10 million rows");
    out.push_back({*arrival, static_cast<uint32_t>(*prompt), static_cast<uint32_t>(*output)});
  }
  if (out.empty()) return InvalidArgument("trace: no arrival_s,prompt_tokens,output_tokens row");
  std::stable_sort(out.begin(), out.end(),
                   [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; });
  return out;
}

}  // namespace gpudoctor::plan
