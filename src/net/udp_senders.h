// Who sends UDP and raw traffic: owners of UDP and raw sockets (sock_diag dumps, inodes mapped
// to processes through /proc/PID/fd), with their non-loopback peers and queue sizes, and the
// namespace-wide send rates from the kernel's SNMP counters (/proc/net/snmp, /proc/net/snmp6).
// The kernel keeps no per-socket byte counters for UDP or raw sockets and cgroup v2 does not
// account network bytes, so without eBPF there are no per-process UDP byte counts: the evidence
// says so (UdpTrafficFacts::method). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "facts/net_facts.h"
#include "net/proc_scan.h"
#include "net/sock_diag.h"

namespace gpudoctor {

// /proc/net/snmp ("Udp: InDatagrams ... OutDatagrams ..." header line, then the values line with
// the same prefix) and /proc/net/snmp6 ("Udp6OutDatagrams 12" lines) → "Udp.OutDatagrams",
// "Ip.OutRequests", "Udp6.OutDatagrams" ... → value. Appends to `out` the counters named in
// `only`, or every counter when `only` is empty (a caller wants a handful of the ~200: building
// a key and a map node for each was most of a `check`'s user time in these files). Every line is
// checked either way. Errors: parse_error naming the line when a values line does not match its
// header or a value is not a number.
Status ParseSnmpCounters(std::string_view snmp, std::map<std::string, uint64_t>& out,
                         std::span<const std::string_view> only = {});
Status ParseSnmp6Counters(std::string_view snmp6, std::map<std::string, uint64_t>& out,
                          std::span<const std::string_view> only = {});

// The counters CollectUdpSenders reads (its rates), for ParseSnmpCounters' `only`.
inline constexpr std::string_view kUdpSenderCounters[] = {"Udp.OutDatagrams", "Udp6.OutDatagrams",
                                                          "Ip.OutRequests", "Tcp.OutSegs",
                                                          "UdpLite.OutDatagrams"};

inline constexpr std::string_view kUdpBytesMethod =
    "owners: sock_diag UDP/raw dumps + /proc/PID/fd socket inodes; rates: /proc/net/snmp "
    "OutDatagrams (namespace-wide); bytes not available for UDP: peers and queue sizes only "
    "(no per-socket counters in the kernel, no eBPF)";

struct UdpSenderInputs {
  // Dumps of UDP and raw sockets (either protocol, both mixed) at several moments of the window.
  std::vector<const std::vector<TcpSocketInfo>*> samples;
  const std::vector<ScannedProcess>* processes = nullptr;
  // The /proc walk at the start of the window (may be null): CPU ticks used in the window rank
  // senders whose queues were empty at both dumps (a sendto loop burns CPU; an idle resolver does
  // not). Same pid and start time only.
  const std::vector<ScannedProcess>* processes_before = nullptr;
  const std::map<std::string, uint64_t>* counters_before = nullptr;  // may be null
  const std::map<std::string, uint64_t>* counters_after = nullptr;   // may be null
  double window_s = 0;
  bool raw_supported = true;
  size_t max_senders = 10;
  size_t max_peers = 8;
};

// Senders ranked by the largest send queue seen, then CPU ticks used in the window (when
// processes_before is given), then distinct peers, then sockets. Sockets
// connected only to loopback are left out; sockets no visible process holds are not attributed.
UdpTrafficFacts CollectUdpSenders(const UdpSenderInputs& in);

}  // namespace gpudoctor
