// Parsers for the per-task files the process probe may read: /proc/PID/stat (proc_pid_stat(5)),
// /proc/PID/sched (scheduler debug), /proc/PID/schedstat and /proc/uptime. Pure functions;
// thread-safe. The probe never reads cmdline, environ, maps, smaps or status of a task: those
// can block forever on a task stuck in D state while holding its mm lock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace gpudoctor {

struct PidStat {
  int pid = 0;
  std::string comm;  // field 2 without the parentheses; may contain spaces and ')'
  char state = '?';  // R S D Z T t X x K W P I
  int ppid = 0;
  // Fields 14 and 15: CPU time in user and kernel mode, in clock ticks (sysconf(_SC_CLK_TCK)).
  // Absent when the line is shorter (never on a real kernel).
  std::optional<uint64_t> utime_ticks, stime_ticks;
  // Field 20: threads in the task's process (the same in every task's stat of that process).
  // Absent when the line is shorter or the field is not a positive number.
  std::optional<int> num_threads;
  // Field 22: when the task started, in clock ticks after boot; with the pid, it tells a task
  // from a later one that reused its pid. Absent when the line is shorter.
  std::optional<uint64_t> start_ticks;
  // Field 39: the CPU the task last ran on. Absent when the line is shorter (kernels < 2.2).
  std::optional<int> processor;
  // Field 9: the task's PF_* flags. Absent when the line is shorter or the field is no number.
  std::optional<uint64_t> flags;
  // PF_KTHREAD (0x00200000) in flags: a kernel thread (no files, no exe, no memory map).
  bool IsKernelThread() const { return flags && (*flags & 0x00200000u) != 0; }
};

// What /proc/PID/sched shows about when and how much a task ran. All absent when malformed.
struct SchedInfo {
  // "se.exec_start": when the task last started running (updated while it runs), in ms of the
  // task clock of the CPU it ran on (rq clock_task: per CPU, excludes irq/steal time, NOT
  // comparable across CPUs nor with /proc/uptime).
  std::optional<double> exec_start_ms;
  std::optional<double> sum_exec_runtime_ms;  // "se.sum_exec_runtime": total CPU time, ms
  std::optional<uint64_t> nr_switches;        // "nr_switches": context switches, all kinds
};

// /proc/PID/schedstat: "run_ns wait_ns timeslices". nullopt when malformed, or "0 0 0" (what
// kernels print when schedstats are off: a task that exists has run at least once).
struct Schedstat {
  uint64_t run_ns = 0;
  uint64_t wait_ns = 0;
  uint64_t timeslices = 0;
};

// The state is the first field after the LAST ')' (comm may contain ')' and spaces).
// Errors: parse_error when there is no "(...)", the pid or ppid is not a positive/non-negative
// number, or the state is not one of the kernel's state letters.
Result<PidStat> ParsePidStat(std::string_view text);

// "se.exec_start  :  123456.789012" of /proc/PID/sched: when the task last started running, in
// ms of the CPU's task clock since boot. nullopt when absent or malformed (kernels without
// CONFIG_SCHED_DEBUG before 6.x lack the file).
std::optional<double> ParseSchedExecStartMs(std::string_view text);

// The fields of SchedInfo from /proc/PID/sched ("name : value" lines); negative or malformed
// values are left absent.
SchedInfo ParseSchedInfo(std::string_view text);

std::optional<Schedstat> ParseSchedstat(std::string_view text);

// First field of /proc/uptime, seconds since boot. nullopt when malformed or negative.
std::optional<double> ParseUptimeS(std::string_view text);

// /proc/PID/wchan: a kernel symbol, or "0" / empty when the task runs or access is denied.
// Returns the sanitized symbol, or "" for none.
std::string ParseWchan(std::string_view text);

}  // namespace gpudoctor
