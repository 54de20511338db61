// SharedSamples: the reads several probes of one `check` need, taken once and shared: the TCP
// socket table at both ends of the sampling window (sock_diag dumps) and the /proc process walk
// before the window (stat and comm) and after it (plus fd and exe links, never for D-state tasks).
// Before, the sockets and suspicious probes each dumped the socket table twice and walked /proc up
// to twice.
//
// The first probe to ask takes the sample; the others wait for it (std::call_once), so a
// sample is taken at most once per check. Under `watch` there is no SharedSamples (probes keep
// their own carries between ticks). Thread-safe.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "core/deadline.h"
#include "core/root_fs.h"
#include "core/status.h"
#include "net/proc_scan.h"
#include "net/recent_tcp_dump.h"
#include "net/sock_diag.h"

namespace gpudoctor {

class SharedSamples {
 public:
  SharedSamples(RootFs fs, TimePoint scan_deadline)
      : fs_(std::move(fs)), deadline_(scan_deadline) {}

  using TcpSample = TcpTable;  // the table and when its read ended
  // The socket table at the start of the window, and at its end (`window_end`: the first caller
  // sleeps until then; later callers get the same sample). The end's table is the start's
  // sockets looked up one by one (LookupTcpSockets) plus a dump of the listeners when no TCP
  // connection was opened in the meantime (Tcp ActiveOpens and PassiveOpens of the namespace's
  // /proc/net/snmp the same before the first dump and after the lookups, read from the kernel's
  // own procfs only) and the start had at most kMaxTcpLookups sockets that do not listen: the same
  // sockets a dump lists, without a second walk of the kernel's established hash (whose size,
  // not the sockets', sets a dump's cost). Otherwise, or when a lookup fails, a full dump.
  const TcpSample& TcpBefore();
  const TcpSample& TcpAfter(TimePoint window_end);
  // /proc before the window (stat + comm, no fds, no owner uid; each process's parsed stat kept:
  // the process probe's leaders) and after it (with fd and exe links; without the kernel threads
  // the walk before found, when it was taken: ProcScanOptions::skip_kernel_threads).
  const ProcessScan& ProcessesBefore();
  const ProcessScan& ProcessesAfter(TimePoint window_end);

  static constexpr size_t kMaxTcpLookups = 4096;

  int tcp_dumps() const { return tcp_dumps_; }  // samples of the table taken (dump or lookups)
  bool tcp_after_from_lookups() const { return tcp_after_from_lookups_; }
  int proc_walks() const { return proc_walks_; }

 private:
  std::optional<std::vector<TcpSocketInfo>> TcpTableFromLookups();

  RootFs fs_;
  TimePoint deadline_;
  std::once_flag tcp_before_once_, tcp_after_once_, proc_before_once_, proc_after_once_;
  TcpSample tcp_before_, tcp_after_;
  ProcessScan proc_before_, proc_after_;
  std::vector<int> kernel_threads_;  // pids proc_before_ found to be kernel threads, sorted
  std::atomic<bool> before_done_{false};
  std::optional<std::pair<uint64_t, uint64_t>> opens_before_;
  int tcp_dumps_ = 0;  // written inside call_once only
  bool tcp_after_from_lookups_ = false;
  int proc_walks_ = 0;
};

}  // namespace gpudoctor
