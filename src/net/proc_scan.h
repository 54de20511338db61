// Process scan for the network layer: /proc/PID/stat (state, CPU ticks), /proc/PID/comm, the
// owner uid (stat(2) of /proc/PID), and — only for tasks NOT in state D — the fd links
// (/proc/PID/fd/N → "socket:[INODE]", "/dev/nvidia0") and the exe link. Tasks in D state get
// stat and comm only: nothing that could touch their memory map (signals.md §9).
// /etc/passwd (through RootFs) maps uids to user names. Thread-safe; pure parsers exposed.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/deadline.h"
#include "core/root_fs.h"
#include "parsers/pid_stat.h"

namespace gpudoctor {

// "socket:[12345]" → 12345; nullopt otherwise.
std::optional<uint64_t> ParseSocketLink(std::string_view link);
// "/dev/nvidia0" (a GPU, not nvidiactl / nvidia-uvm / nvidia-modeset) → true.
bool IsNvidiaGpuDevice(std::string_view link);

// /etc/passwd text → uid → name. Malformed lines are skipped.
std::map<uint32_t, std::string> ParsePasswd(std::string_view text);

struct ScannedProcess {
  int pid = 0;
  std::string comm;
  char state = '?';
  uint64_t cpu_ticks = 0;               // utime + stime
  std::optional<uint64_t> start_ticks;  // start time after boot: tells pid reuse apart
  std::optional<uint32_t> uid;
  bool kernel_thread = false;  // PF_KTHREAD in stat's flags: no files, no exe, uid 0
  bool fds_read = false;       // false for D-state tasks, unreadable fd dirs and refused links
  std::vector<uint64_t> socket_inodes;
  bool gpu_device_open = false;
  std::string exe;  // exe link target; empty when not read
  // The whole parsed stat line, only with ProcScanOptions::keep_stat (the process probe reads
  // its fields from the check's shared walk instead of walking /proc itself). A pointer: held in
  // place it made every scanned process 120 bytes larger, kept or not (288 instead of 168 bytes;
  // `watch`'s walks never keep it).
  std::shared_ptr<const PidStat> stat;
};

struct ProcScanOptions {
  bool read_fds = true;
  bool read_exe = false;
  bool keep_stat = false;  // fill ScannedProcess::stat
  bool read_uid = true;    // stat(2) of /proc/PID for ScannedProcess::uid
  size_t max_processes = 100000;
  // Sorted pids a walk moments before found to be kernel threads (may be null). Their stat is read
  // straight from /proc (open PID/stat, read, close) without opening their directory, and their
  // uid is 0 without a stat(2): on a many-core node most tasks are per-CPU kernel threads. A pid
  // whose stat no longer says kernel thread (reused) is read in full.
  const std::vector<int>* kernel_threads = nullptr;
  // With kernel_threads: the pids it names are passed over without any read and are absent from
  // the scan (ProcessScan::kernel_threads_skipped counts them), for a walk whose readers have no
  // use for kernel threads (no files, no sockets, never a miner): `check`'s walk at the end of
  // its window, moments after the walk that found them. A pid a process took in between is
  // missed by that walk: pids are handed out in turn, so not within a window of a second.
  bool skip_kernel_threads = false;
  // Stop when this passes (checked every kScanDeadlineStride /proc entries and fds); nullopt:
  // no limit.
  std::optional<TimePoint> deadline;
};

inline constexpr size_t kScanDeadlineStride = 32;

struct ProcessScan {
  std::vector<ScannedProcess> processes;
  int skipped_dstate = 0;
  // Stopped at the deadline: processes after the last one listed were not read (and the last
  // one's fd list may be partial).
  bool truncated = false;
  TimePoint started_at{};  // when the walk began
  // Kernel threads read through PID/stat alone because ProcScanOptions::kernel_threads named
  // them (and they still are): what the hint saved, for tests and cost accounting.
  int kernel_threads_hinted = 0;
  int kernel_threads_skipped = 0;  // passed over unread (ProcScanOptions::skip_kernel_threads)
};

// Never fails: an unreadable /proc gives an empty scan.
ProcessScan ScanProcesses(const RootFs& fs, const ProcScanOptions& opts);

// `watch`: one full scan (fd and exe links) for every probe of a round that needs one (sockets,
// suspicious, inference discovery run in the same tick and used to walk /proc each). Returns the
// scan of the same procfs that started at most max_age before this call, else takes a new one
// (read_fds and read_exe on, `deadline` as ScanProcesses) and, with `newer_than`, only one that
// started after it (a probe that diffs against its previous run's scan must not get that scan
// again). A new scan of the procfs the last one walked reads the kernel threads that one found
// through their stat alone (ProcScanOptions::kernel_threads). One scan at a time: a caller that
// would wait past its deadline for another's scan scans on its own. Only a weak reference to a scan
// is kept here, so no scan outlives the callers holding it: the probes of a round run one after
// another, so `watch` holds the round's walk for the tick (probes/round_walk.h). Thread-safe.
std::shared_ptr<const ProcessScan> RecentFullScan(const RootFs& fs,
                                                  std::chrono::milliseconds max_age,
                                                  std::optional<TimePoint> deadline,
                                                  std::optional<TimePoint> newer_than = {});
// Walks RecentFullScan took in this process (each new one, none it handed out again): for tests
// and cost accounting. Thread-safe.
uint64_t RecentFullScansTaken();

}  // namespace gpudoctor
