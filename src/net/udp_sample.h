// One sample of the UDP and raw socket tables (sock_diag) and the namespace's SNMP counters
// (/proc/thread-self/net/snmp and snmp6 through the root fs layer: the network namespace of the
// calling thread, like the netlink dump; /proc/net/... where thread-self is absent, as in a
// fixture procfs). Never fails: what could not be read is empty and noted. Thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/root_fs.h"
#include "facts/net_facts.h"
#include "net/proc_scan.h"
#include "net/sock_diag.h"

namespace gpudoctor {

struct UdpSample {
  std::vector<TcpSocketInfo> sockets;  // UDP and raw, mixed (TcpSocketInfo::protocol)
  bool udp_ok = false;
  bool raw_supported = false;  // false: no raw_diag (kernel < 4.14) or dump failed
  std::map<std::string, uint64_t> counters;
  bool counters_ok = false;
  TimePoint at{};
};

UdpSample TakeUdpSample(const RootFs& fs);

// The UDP facts between two samples, owners from `processes` (the walk at the window's end);
// `processes_before` (may be null): the walk at its start, for CPU ranking.
UdpTrafficFacts UdpFactsBetween(const UdpSample& before, const UdpSample& after,
                                const std::vector<ScannedProcess>& processes,
                                const std::vector<ScannedProcess>* processes_before = nullptr);

}  // namespace gpudoctor
