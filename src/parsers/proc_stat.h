// Parsers for /proc/stat and /proc/loadavg (proc(5)). Pure functions on file contents.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/status.h"

namespace gpudoctor {

// Aggregate "cpu" line of /proc/stat, in USER_HZ ticks. Fields a kernel does not print are 0.
struct CpuTimes {
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  // guest and guest_nice are already included in user and nice; not counted again.
  uint64_t Total() const { return user + nice + system + idle + iowait + irq + softirq + steal; }
  uint64_t Busy() const { return user + nice + system + irq + softirq + steal; }
};

struct ProcStat {
  CpuTimes total;
  int cpu_lines = 0;  // number of "cpuN" lines = online logical CPUs
};

// Errors: parse_error naming the line when the aggregate "cpu" line is missing or malformed.
Result<ProcStat> ParseProcStat(std::string_view text);

struct LoadAvg {
  double load1 = 0, load5 = 0, load15 = 0;
};
Result<LoadAvg> ParseLoadAvg(std::string_view text);

// Shares of the window between two samples, in percent. nullopt when fewer than
// kMinCpuShareTicks ticks (all CPUs together) elapsed: with one tick in the window a single
// timer interrupt reads as "100% busy" on an idle host, so a share needs enough ticks to mean
// anything (50 ticks: 2% resolution; at USER_HZ 100 that is 2 cores over 250 ms).
inline constexpr uint64_t kMinCpuShareTicks = 50;
struct CpuShares {
  double busy_pct = 0, iowait_pct = 0, steal_pct = 0;
};
std::optional<CpuShares> CpuSharesBetween(const CpuTimes& before, const CpuTimes& after);

}  // namespace gpudoctor
