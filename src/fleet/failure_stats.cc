#include "fleet/failure_stats.h"

#include <algorithm>
#include <map>

#include "core/strings.h"
#include "fleet/onsets.h"

namespace gpudoctor::fleet {
namespace {

CategoryStats Make(const std::string& name, int failures, double gpu_days) {
  CategoryStats c;
  c.category = name;
  c.failures = failures;
  if (gpu_days <= 0) {
    c.arithmetic = "no observed GPU-time";
    return c;
  }
  double rate = failures / gpu_days;
  if (failures > 0) c.mtbf_gpu_hours = gpu_days * 24 / failures;
  c.arithmetic = std::to_string(failures) + " failures / " + FormatDouble(gpu_days, 2) +
                 " GPU-days = " + FormatDouble(rate, 5) + " per GPU-day;";
  for (int i = 0; i < 3; ++i) {
    c.per_day_at[i] = rate * kProjectionGpus[i];
    c.arithmetic += std::string(i ? "," : "") + " x " + std::to_string(kProjectionGpus[i]) +
                    " GPUs = " + FormatDouble(c.per_day_at[i], 2) + "/day";
  }
  return c;
}

}  // namespace

FailureStats ComputeFailureStats(const FleetData& data, const std::vector<size_t>& onsets,
                                 int64_t window_s) {
  FailureStats st;
  struct Span {
    int64_t first = 0, last = 0;
    int gpus = 0;
    bool seen = false;
  };
  std::map<std::string, Span> spans;
  std::map<std::string, Span>::iterator last = spans.end();  // reports come grouped by node
  for (const auto& r : data.reports) {
    if (last == spans.end() || last->first != r.node) last = spans.try_emplace(r.node).first;
    Span& s = last->second;
    if (!s.seen) {
      s.first = s.last = r.time_s;
      s.seen = true;
    }
    s.first = std::min(s.first, r.time_s);
    s.last = std::max(s.last, r.time_s);
    s.gpus = std::max(s.gpus, r.gpu_count);
  }
  for (const auto& [node, s] : spans) {
    st.gpus += s.gpus;
    st.gpu_days += static_cast<double>(s.last - s.first + window_s) * s.gpus / 86400.0;
  }
  std::map<std::string, int> counts;
  for (size_t i : onsets) {
    const auto& e = data.findings[i];
    if (e.severity != Severity::kCrit) continue;
    ++counts[CategoryOf(e)];
    ++st.failures;
  }
  for (const char* c : kCategories) st.categories.push_back(Make(c, counts[c], st.gpu_days));
  st.categories.push_back(Make("all", st.failures, st.gpu_days));
  if (st.failures < 10) {
    st.note = "only " + std::to_string(st.failures) +
              " failures observed: the rates and projections are rough (collect a longer "
              "history before sizing spares or checkpoint intervals on them)";
  }
  return st;
}

}  // namespace gpudoctor::fleet
