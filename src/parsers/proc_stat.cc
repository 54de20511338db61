#include "parsers/proc_stat.h"

#include <string>

#include "core/strings.h"

namespace gpudoctor {

Result<ProcStat> ParseProcStat(std::string_view text) {
  ProcStat st;
  bool have_total = false;
  int line_no = 0;
  for (std::string_view line : SplitLines(text)) {
    ++line_no;
    if (!StartsWith(line, "cpu")) continue;
    auto fields = Split(line, " \t");
    if (fields.empty()) continue;
    if (fields[0] != "cpu") {
      if (ParseUint64(fields[0].substr(3))) ++st.cpu_lines;
      continue;
    }
    if (fields.size() < 5) {
      return ParseError("line " + std::to_string(line_no) + ": cpu line has " +
                        std::to_string(fields.size() - 1) + " fields, need at least 4");
    }
    uint64_t* slots[] = {&st.total.user,   &st.total.nice, &st.total.system,  &st.total.idle,
                         &st.total.iowait, &st.total.irq,  &st.total.softirq, &st.total.steal};
    for (size_t i = 1; i < fields.size() && i <= 8; ++i) {
      auto v = ParseUint64(fields[i]);
      if (!v) {
        return ParseError("line " + std::to_string(line_no) + ": field " + std::to_string(i) +
                          " is not a number: '" + Sanitize(fields[i], 32) + "'");
      }
      *slots[i - 1] = *v;
    }
    have_total = true;
  }
  if (!have_total) return ParseError("no aggregate 'cpu' line");
  return st;
}

Result<LoadAvg> ParseLoadAvg(std::string_view text) {
  auto fields = Split(text, " \t\n");
  if (fields.size() < 3) return ParseError("expected 3 load values");
  auto a = ParseDouble(fields[0]), b = ParseDouble(fields[1]), c = ParseDouble(fields[2]);
  if (!a || !b || !c || *a < 0 || *b < 0 || *c < 0) {
    return ParseError("load values are not non-negative numbers");
  }
  return LoadAvg{*a, *b, *c};
}

std::optional<CpuShares> CpuSharesBetween(const CpuTimes& before, const CpuTimes& after) {
  // Counters can go backwards (CPU hotplug); treat a negative delta as no data.
  if (after.Total() <= before.Total()) return std::nullopt;
  if (after.Total() - before.Total() < kMinCpuShareTicks) return std::nullopt;  // too few to judge
  auto delta = [](uint64_t a, uint64_t b) { return b >= a ? static_cast<double>(b - a) : 0.0; };
  double total = static_cast<double>(after.Total() - before.Total());
  CpuShares s;
  s.busy_pct = 100.0 *
               (delta(before.user, after.user) + delta(before.nice, after.nice) +
                delta(before.system, after.system) + delta(before.irq, after.irq) +
                delta(before.softirq, after.softirq) + delta(before.steal, after.steal)) /
               total;
  s.iowait_pct = 100.0 * delta(before.iowait, after.iowait) / total;
  s.steal_pct = 100.0 * delta(before.steal, after.steal) / total;
  if (s.busy_pct > 100) s.busy_pct = 100;
  return s;
}

}  // namespace gpudoctor
