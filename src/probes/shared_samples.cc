#include "probes/shared_samples.h"

#include <thread>

namespace gpudoctor {

const SharedSamples::TcpSample& SharedSamples::TcpBefore() {
  std::call_once(tcp_before_once_, [&] {
    tcp_before_.sockets = DumpTcpSockets();
    tcp_before_.at = SteadyClock::now();
    ++tcp_dumps_;
  });
  return tcp_before_;
}

const SharedSamples::TcpSample& SharedSamples::TcpAfter(TimePoint window_end) {
  std::call_once(tcp_after_once_, [&] {
    std::this_thread::sleep_until(window_end);
    tcp_after_.sockets = DumpTcpSockets();
    tcp_after_.at = SteadyClock::now();
    ++tcp_dumps_;
  });
  return tcp_after_;
}

const ProcessScan& SharedSamples::ProcessesBefore() {
  std::call_once(proc_before_once_, [&] {
    ProcScanOptions light;
    light.read_fds = false;
    light.keep_stat = true;  // the process probe's leaders (one walk for the three probes)
    light.deadline = deadline_;
    proc_before_ = ScanProcesses(fs_, light);
    ++proc_walks_;
  });
  return proc_before_;
}

const ProcessScan& SharedSamples::ProcessesAfter(TimePoint window_end) {
  std::call_once(proc_after_once_, [&] {
    std::this_thread::sleep_until(window_end);
    ProcScanOptions full;
    full.read_exe = true;
    full.deadline = deadline_;
    proc_after_ = ScanProcesses(fs_, full);
    ++proc_walks_;
  });
  return proc_after_;
}

}  // namespace gpudoctor
