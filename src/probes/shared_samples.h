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

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/deadline.h"
#include "core/root_fs.h"
#include "core/status.h"
#include "net/proc_scan.h"
#include "net/sock_diag.h"

namespace gpudoctor {

class SharedSamples {
 public:
  SharedSamples(RootFs fs, TimePoint scan_deadline)
      : fs_(std::move(fs)), deadline_(scan_deadline) {}

  struct TcpSample {
    Result<std::vector<TcpSocketInfo>> sockets = std::vector<TcpSocketInfo>{};
    TimePoint at{};
  };
  // The socket table at the start of the window, and at its end (`window_end`: the first caller
  // sleeps until then; later callers get the same sample).
  const TcpSample& TcpBefore();
  const TcpSample& TcpAfter(TimePoint window_end);
  // /proc before the window (stat + comm, no fds; each process's parsed stat kept: the process
  // probe's leaders) and after it (with fd and exe links).
  const ProcessScan& ProcessesBefore();
  const ProcessScan& ProcessesAfter(TimePoint window_end);

  int tcp_dumps() const { return tcp_dumps_; }
  int proc_walks() const { return proc_walks_; }

 private:
  RootFs fs_;
  TimePoint deadline_;
  std::once_flag tcp_before_once_, tcp_after_once_, proc_before_once_, proc_after_once_;
  TcpSample tcp_before_, tcp_after_;
  ProcessScan proc_before_, proc_after_;
  int tcp_dumps_ = 0;  // written inside call_once only
  int proc_walks_ = 0;
};

}  // namespace gpudoctor
