// KeptTaskStats: under `watch`, the processes probe's descriptors of tasks' stat files
// (/proc/PID/stat, /proc/PID/task/TID/stat) kept from scan to scan, so a scan reads a task it read
// before with one pread at offset 0 (procfs regenerates the line on every read) instead of openat,
// read and close: the path lookup, open and close were most of a scan's kernel time.
// A descriptor names its task, not its number: once the task has exited a read fails (ESRCH), the
// caller Drops it, and the number, if reused, is opened afresh. At most kMaxKeptStatFiles (the
// first tasks a scan meets: low pids, long-lived daemons) and at most a quarter of the soft
// RLIMIT_NOFILE; each open file holds the kernel's one-page read buffer (1 MiB of kernel memory at
// the cap). Kept only on procfs: under a fixture tree every read opens afresh.
// Thread-safety: none; the runner never runs the probe while its previous run is in flight.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace gpudoctor {

class KeptTaskStats {
 public:
  static constexpr size_t kMaxKeptStatFiles = 256;

  KeptTaskStats();
  ~KeptTaskStats();
  KeptTaskStats(const KeptTaskStats&) = delete;
  KeptTaskStats& operator=(const KeptTaskStats&) = delete;

  // A new scan over the procfs root open as `proc_fd`: files are kept only when it is procfs.
  void StartScan(int proc_fd);
  // The kept descriptor of `dir` ("PID" or "PID/task/TID"), or -1; marks it read this scan.
  int Find(const std::string& dir);
  // Takes `fd` (just opened for `dir`) when this scan keeps files and there is room; false: the
  // caller still owns it and closes it.
  bool Keep(const std::string& dir, int fd);
  // Closes `dir`'s descriptor (its task is gone).
  void Drop(const std::string& dir);
  // After a scan that read every task: closes the descriptors it did not read (exited tasks).
  void CloseUnread();
  size_t size() const { return files_.size(); }
  size_t cap() const { return cap_; }

 private:
  struct Entry {
    int fd = -1;
    uint64_t scan = 0;  // the last scan that read it
  };
  std::unordered_map<std::string, Entry> files_;
  uint64_t scan_ = 0;
  size_t cap_ = 0;
  bool keep_ = false;
};

}  // namespace gpudoctor
