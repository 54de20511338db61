#include "parsers/pid_stat.h"

#include <array>
#include <limits>

#include "core/strings.h"

namespace gpudoctor {
namespace {

bool IsTaskState(char c) {
  switch (c) {
    case 'R':
    case 'S':
    case 'D':
    case 'Z':
    case 'T':
    case 't':
    case 'X':
    case 'x':
    case 'K':
    case 'W':
    case 'P':
    case 'I':
      return true;
    default:
      return false;
  }
}

}  // namespace

Result<PidStat> ParsePidStat(std::string_view text) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return ParseError("pid stat: no '(comm)' field");
  }
  PidStat st;
  auto pid = ParseInt64(text.substr(0, open));
  if (!pid || *pid <= 0 || *pid > std::numeric_limits<int>::max()) {
    return ParseError("pid stat: pid is not a positive number");
  }
  st.pid = static_cast<int>(*pid);
  st.comm = Sanitize(text.substr(open + 1, close - open - 1), 64);
  // The fields after the comm, split without allocating (this runs for every task every watch
  // tick): the first kMaxFields are kept; `count` stops there (only "at least N" is asked).
  constexpr size_t kMaxFields = 37;
  std::array<std::string_view, kMaxFields> fields;
  size_t count = 0;
  {
    const std::string_view s = text.substr(close + 1);
    auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n'; };
    size_t i = 0;
    while (count < kMaxFields) {
      while (i < s.size() && space(s[i])) ++i;
      if (i >= s.size()) break;
      size_t j = i;
      while (j < s.size() && !space(s[j])) ++j;
      fields[count++] = s.substr(i, j - i);
      i = j;
    }
  }
  struct {
    const std::array<std::string_view, kMaxFields>& f;
    size_t n;
    size_t size() const { return n; }
    std::string_view operator[](size_t k) const { return f[k]; }
  } rest{fields, count};
  if (rest.size() < 2) return ParseError("pid stat: truncated after comm");
  if (rest[0].size() != 1 || !IsTaskState(rest[0][0])) {
    return ParseError("pid stat: unknown state '" + Sanitize(rest[0], 8) + "'");
  }
  st.state = rest[0][0];
  auto ppid = ParseInt64(rest[1]);
  if (!ppid || *ppid < 0 || *ppid > std::numeric_limits<int>::max()) {
    return ParseError("pid stat: ppid is not a number");
  }
  st.ppid = static_cast<int>(*ppid);
  if (rest.size() >= 7) st.flags = ParseUint64(rest[6]);  // field 9
  // After the comm: state is field 3, so utime (14) and stime (15) are rest[11] and rest[12].
  if (rest.size() >= 13) {
    st.utime_ticks = ParseUint64(rest[11]);
    st.stime_ticks = ParseUint64(rest[12]);
  }
  if (rest.size() >= 18) {  // field 20
    auto n = ParseInt64(rest[17]);
    if (n && *n > 0 && *n <= std::numeric_limits<int>::max()) st.num_threads = static_cast<int>(*n);
  }
  if (rest.size() >= 20) st.start_ticks = ParseUint64(rest[19]);  // field 22
  if (rest.size() >= 37) {                                        // field 39
    auto cpu = ParseInt64(rest[36]);
    if (cpu && *cpu >= 0 && *cpu < (1 << 20)) st.processor = static_cast<int>(*cpu);
  }
  return st;
}

std::optional<double> ParseSchedExecStartMs(std::string_view text) {
  return ParseSchedInfo(text).exec_start_ms;
}

SchedInfo ParseSchedInfo(std::string_view text) {
  SchedInfo info;
  for (std::string_view line : SplitLines(text)) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = Trim(line.substr(0, colon));
    std::string_view value = Trim(line.substr(colon + 1));
    if (key == "se.exec_start" || key == "se.sum_exec_runtime") {
      auto v = ParseDouble(value);
      if (!v || !(*v >= 0) || *v > 1e15) continue;  // also rejects NaN
      (key == "se.exec_start" ? info.exec_start_ms : info.sum_exec_runtime_ms) = *v;
    } else if (key == "nr_switches") {
      info.nr_switches = ParseUint64(value);
    }
  }
  return info;
}

std::optional<Schedstat> ParseSchedstat(std::string_view text) {
  auto fields = Split(text, " \t\n");
  if (fields.size() != 3) return std::nullopt;
  auto run = ParseUint64(fields[0]), wait = ParseUint64(fields[1]), slices = ParseUint64(fields[2]);
  if (!run || !wait || !slices) return std::nullopt;
  if (*run == 0 && *wait == 0 && *slices == 0) return std::nullopt;  // schedstats off
  return Schedstat{*run, *wait, *slices};
}

std::optional<double> ParseUptimeS(std::string_view text) {
  auto fields = Split(text, " \t\n");
  if (fields.empty()) return std::nullopt;
  auto v = ParseDouble(fields[0]);
  if (!v || *v < 0) return std::nullopt;
  return *v;
}

std::string ParseWchan(std::string_view text) {
  std::string_view w = Trim(text);
  if (w.empty() || w == "0") return "";
  return Sanitize(w, 64);
}

}  // namespace gpudoctor
