#include "probes/shared_samples.h"

#include <algorithm>
#include <thread>

#include "net/udp_senders.h"

namespace gpudoctor {
namespace {

// Tcp.ActiveOpens and Tcp.PassiveOpens of the calling thread's network namespace (the one a
// sock_diag socket it opens sees). nullopt unless procfs is the kernel's own /proc (a fixture's
// counters say nothing about the real sockets) and the counters read.
std::optional<std::pair<uint64_t, uint64_t>> TcpOpens(const RootFs& fs) {
  if (fs.procfs() != RootFs().procfs()) return std::nullopt;
  auto text = fs.ReadProc("thread-self/net/snmp", 64 * 1024);
  if (!text.ok()) return std::nullopt;
  std::map<std::string, uint64_t> counters;
  static constexpr std::string_view kOpens[] = {"Tcp.ActiveOpens", "Tcp.PassiveOpens"};
  if (!ParseSnmpCounters(*text, counters, kOpens).ok()) return std::nullopt;
  auto active = counters.find("Tcp.ActiveOpens"), passive = counters.find("Tcp.PassiveOpens");
  if (active == counters.end() || passive == counters.end()) return std::nullopt;
  return std::make_pair(active->second, passive->second);
}

}  // namespace

const SharedSamples::TcpSample& SharedSamples::TcpBefore() {
  std::call_once(tcp_before_once_, [&] {
    opens_before_ = TcpOpens(fs_);
    tcp_before_.sockets = DumpTcpSockets();
    tcp_before_.at = SteadyClock::now();
    ++tcp_dumps_;
  });
  return tcp_before_;
}

const SharedSamples::TcpSample& SharedSamples::TcpAfter(TimePoint window_end) {
  std::call_once(tcp_after_once_, [&] {
    std::this_thread::sleep_until(window_end);
    if (auto table = TcpTableFromLookups()) {
      tcp_after_.sockets = std::move(*table);
      tcp_after_from_lookups_ = true;
    } else {
      tcp_after_.sockets = DumpTcpSockets();
    }
    tcp_after_.at = SteadyClock::now();
    ++tcp_dumps_;
  });
  return tcp_after_;
}

std::optional<std::vector<TcpSocketInfo>> SharedSamples::TcpTableFromLookups() {
  if (!opens_before_ || !tcp_before_.sockets.ok()) return std::nullopt;
  std::vector<const TcpSocketInfo*> known;
  for (const TcpSocketInfo& s : *tcp_before_.sockets) {
    if (s.state != 10) known.push_back(&s);  // TCP_LISTEN: from the listeners' dump
  }
  if (known.size() > kMaxTcpLookups) return std::nullopt;
  // A connection opened already (a busy host opens several a second): the full dump at once,
  // without the lookups it would have to throw away.
  if (TcpOpens(fs_) != opens_before_) return std::nullopt;
  auto table = DumpTcpListeners();  // listeners first, as a full dump lists them
  if (!table.ok()) return std::nullopt;
  auto found = LookupTcpSockets(known);
  if (!found.ok()) return std::nullopt;
  // Read after the lookups: a connection opened before they ended changes the counters.
  if (TcpOpens(fs_) != opens_before_) return std::nullopt;
  for (TcpSocketInfo& s : *found) table->push_back(std::move(s));
  return std::move(*table);
}

const ProcessScan& SharedSamples::ProcessesBefore() {
  std::call_once(proc_before_once_, [&] {
    ProcScanOptions light;
    light.read_fds = false;
    light.keep_stat = true;  // the process probe's leaders (one walk for the three probes)
    light.read_uid = false;  // owners come from the walk after the window
    light.deadline = deadline_;
    proc_before_ = ScanProcesses(fs_, light);
    for (const ScannedProcess& p : proc_before_.processes) {
      if (p.kernel_thread) kernel_threads_.push_back(p.pid);
    }
    std::sort(kernel_threads_.begin(), kernel_threads_.end());
    ++proc_walks_;
    before_done_.store(true);
  });
  return proc_before_;
}

const ProcessScan& SharedSamples::ProcessesAfter(TimePoint window_end) {
  std::call_once(proc_after_once_, [&] {
    std::this_thread::sleep_until(window_end);
    ProcScanOptions full;
    full.read_exe = true;
    full.deadline = deadline_;
    // The walk at the window's start knows the kernel threads (when a probe asked for it); the
    // probes that read this walk (sockets, suspicious) have no use for them: not read again.
    if (before_done_.load()) {
      full.kernel_threads = &kernel_threads_;
      full.skip_kernel_threads = true;
    }
    proc_after_ = ScanProcesses(fs_, full);
    ++proc_walks_;
  });
  return proc_after_;
}

}  // namespace gpudoctor
