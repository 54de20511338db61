// A parser of the Prometheus text exposition format, version 0.0.4 (what vLLM, TGI, SGLang,
// Triton and most training jobs serve on /metrics; the format is described at
// https://prometheus.io/docs/instrumenting/exposition_formats/):
//
//   # HELP name text with \\ and \n escapes
//   # TYPE name counter|gauge|histogram|summary|untyped
//   name{label="value with \" \\ \n escapes",...} 1.5e3 [timestamp_ms]
//
// Values are Go-style floats including NaN, +Inf, -Inf; timestamps are optional integer
// milliseconds. Metric names may contain ':' (vllm:..., sglang:...). Samples are grouped into
// families by their TYPE line: a histogram `x` owns x_bucket, x_sum and x_count, a summary owns
// x_sum and x_count (and x itself with a quantile label), a counter owns x and x_total. A sample
// with no TYPE line before it forms its own "untyped" family. Other comments (and OpenMetrics'
// "# EOF", "# UNIT") are ignored, as are empty lines and a trailing '\r'.
//
// Errors (parse_error) name the line number and what was wrong there: a bad metric or label
// name, an unterminated label value or block, a bad escape, a value that is not a number, a
// trailing token that is not an integer timestamp. Bounds: at most `max_samples` samples and
// `max_line_bytes` per line (invalid_argument past them). Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace gpudoctor {

using PromLabelSet = std::vector<std::pair<std::string, std::string>>;

struct PromTextSample {
  std::string name;  // the sample's own name (x_bucket, x_sum, ...)
  PromLabelSet labels;
  double value = 0;
  std::optional<int64_t> timestamp_ms;
};

struct PromTextFamily {
  std::string name;
  std::string type = "untyped";  // counter, gauge, histogram, summary, untyped
  std::string help;
  std::vector<PromTextSample> samples;
};

struct PromTextLimits {
  size_t max_samples = 500000;
  size_t max_line_bytes = 64 * 1024;
};

Result<std::vector<PromTextFamily>> ParsePromText(std::string_view text,
                                                  const PromTextLimits& limits = {});

// The family named `name`; nullptr when absent.
const PromTextFamily* FindPromFamily(const std::vector<PromTextFamily>& families,
                                     std::string_view name);

// The value of label `key`; nullptr when the set lacks it.
const std::string* PromLabel(const PromLabelSet& labels, std::string_view key);

// A label matcher of a selector: key="v" (equal) or key!="v" (not equal). A missing label reads
// as "" (as Prometheus does).
struct PromMatcher {
  std::string key, value;
  bool negate = false;
};

// Parses `{key="value",key2!="v2"}` (the braces optional; "" or "{}" match everything).
// InvalidArgument naming the position on a malformed selector; regex matchers (=~, !~) are
// refused with a sentence saying so.
Result<std::vector<PromMatcher>> ParsePromSelector(std::string_view selector);
bool PromMatches(const PromLabelSet& labels, const std::vector<PromMatcher>& matchers);

// One histogram (or the sum of several with the same bucket bounds): cumulative counts per
// upper bound `le`, ascending, +Inf last; sum and count as the server gave them.
struct PromHistogram {
  std::vector<std::pair<double, double>> buckets;  // (le, cumulative count)
  double sum = 0, count = 0;
  bool Empty() const { return buckets.empty() && count == 0; }
};

// Sums every series of histogram `family` whose labels (le aside) match `matchers` into one
// histogram; bucket bounds present in only some series are dropped. nullopt when the family is
// absent, not a histogram, or no series matches.
std::optional<PromHistogram> SumPromHistogram(const PromTextFamily& family,
                                              const std::vector<PromMatcher>& matchers = {});

// The q-quantile (0 < q < 1) by linear interpolation inside the bucket that holds it, as
// Prometheus' histogram_quantile does (the lower edge of the first bucket is 0 when its bound is
// positive; a quantile in the +Inf bucket is the highest finite bound). nullopt with no
// observations.
std::optional<double> PromHistogramQuantile(const PromHistogram& h, double q);

}  // namespace gpudoctor
