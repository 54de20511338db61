// Fuzzes the per-task parsers of the process probe: /proc/PID/stat, sched, schedstat, uptime,
// wchan.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parsers/pid_stat.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto st = gpudoctor::ParsePidStat(text);
  if (st.ok() && (st->pid <= 0 || st->ppid < 0)) __builtin_trap();
  auto exec = gpudoctor::ParseSchedExecStartMs(text);
  if (exec && *exec < 0) __builtin_trap();
  gpudoctor::SchedInfo info = gpudoctor::ParseSchedInfo(text);
  if (info.exec_start_ms && !(*info.exec_start_ms >= 0)) __builtin_trap();
  if (info.sum_exec_runtime_ms && !(*info.sum_exec_runtime_ms >= 0)) __builtin_trap();
  auto ss = gpudoctor::ParseSchedstat(text);
  if (ss && ss->run_ns == 0 && ss->wait_ns == 0 && ss->timeslices == 0) __builtin_trap();
  if (st.ok() && st->processor && *st->processor < 0) __builtin_trap();
  auto up = gpudoctor::ParseUptimeS(text);
  if (up && *up < 0) __builtin_trap();
  (void)gpudoctor::ParseWchan(text);
  return 0;
}
