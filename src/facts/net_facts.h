// Facts of the network layer: reachability of configured targets and reference sites,
// NICs and InfiniBand ports from sysfs, per-process socket traffic from sock_diag, and process
// signs worth inspecting. Filled by src/probes/{reachability,nic,sockets,suspicious}_probe.cc.
// Every measured value is optional: absent means unknown/unsupported, never 0.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpudoctor {

// Which list a probed host came from. Targets are what the service depends on; references are
// other sites probed only for comparison; the gateway is probed when nothing is configured.
enum class TargetGroup { kTarget, kReference, kGateway };
const char* TargetGroupName(TargetGroup g);  // "target", "reference", "gateway"

struct TargetProbeFacts {
  std::string name;  // as configured: "10.0.0.5", "storage:2049", "https://api:8443/healthz"
  TargetGroup group = TargetGroup::kTarget;
  std::string address;  // numeric address probed; empty when the name did not resolve
  // "icmp-raw", "icmp-dgram", "tcp", "tcp-fallback:22", "http", "https"; empty when nothing
  // was sent.
  std::string method;
  int sent = 0;                    // probes, or HTTP requests
  int received = 0;                // replies, or HTTP responses (any status)
  std::optional<double> loss_pct;  // absent when nothing was sent
  std::optional<double> rtt_min_ms, rtt_median_ms, rtt_p95_ms, rtt_max_ms;
  std::optional<double> jitter_ms;  // mean absolute difference of consecutive RTTs
  bool port_closed = false;         // TCP: the host answered with RST (reachable, port closed)
  // Why the host could not be probed at all (unresolved name, no socket); empty otherwise.
  // An unreachable host is not an error: it has sent > 0 and received == 0.
  std::string error;
  // Probes went out but the result says nothing about the host: the implicit default gateway,
  // no ICMP socket, and the TCP fallback got no answer at all (routers drop SYNs to closed
  // ports silently). Rules judge no loss or latency for it; `error` says why.
  bool inconclusive = false;
  // The series was still running at the check's deadline (also inconclusive): not measured.
  bool unfinished = false;
  // The implicit gateway only, when it answered none of its probes: whether the kernel's ARP
  // table then held a resolved entry for it (true: it answers ARP, so it drops the probes, as
  // cloud routers do; false: it answers nothing, not even ARP); absent when not looked at or when
  // there is no entry (links without ARP). arp_device: that entry's device.
  std::optional<bool> arp_resolved;
  std::string arp_device;

  // HTTP(S) targets; all absent for ICMP/TCP hosts, whose loss and RTT
  // fields above are in turn absent for URL targets. Times are medians over the responses
  // (connect and TLS: over the requests that got that far), in ms from each request's start.
  std::optional<double> dns_ms;            // resolving the name, once (absent for IP literals)
  std::optional<double> http_connect_ms;   // TCP handshake
  std::optional<double> http_tls_ms;       // TLS handshake (https)
  std::optional<double> http_ttfb_ms;      // time to first byte: connect + TLS + server
  std::optional<double> http_ttfb_p95_ms;  // nearest rank
  std::optional<double> http_wait_ms;      // request sent to first byte: the server's share
  std::optional<int> http_status;          // status of the last response
  std::optional<int> http_failed;  // requests without a response (connect, timeout, TLS) or 5xx
  std::optional<double> http_failed_pct;  // of the requests sent
  std::map<int, int> http_status_counts;  // status -> responses
  std::string http_error;                 // the last failure: curl's message, or "HTTP 503"
  std::string http_error_kind;  // "connect", "timeout", "tls", "protocol", "http_5xx", "other"
};

struct ReachabilityFacts {
  std::vector<TargetProbeFacts> hosts;
  bool gateway_fallback = false;  // no targets configured: the default gateway was probed
};

struct NicFacts {
  std::string name;              // eth0, ens1f0
  bool physical = false;         // has a `device` link (not veth, bridge, tun, lo)
  std::optional<bool> admin_up;  // IFF_UP in `flags`
  std::string operstate;         // up, down, lowerlayerdown, unknown, dormant, ...
  std::optional<bool> carrier;
  std::optional<int64_t> speed_mbps;  // absent when the driver reports none (-1, EINVAL)
  std::optional<double> window_s;
  std::optional<uint64_t> carrier_changes;        // since boot, at the end of the window
  std::optional<uint64_t> carrier_changes_delta;  // within the window
  std::optional<uint64_t> rx_bytes, tx_bytes, rx_packets, tx_packets;  // since boot
  std::optional<double> rx_bytes_per_s, tx_bytes_per_s;
  std::optional<uint64_t> rx_errors_delta, tx_errors_delta, rx_dropped_delta, tx_dropped_delta;
  std::optional<uint64_t> rx_errors, tx_errors, rx_dropped, tx_dropped;  // since boot
};

struct IbPortFacts {
  std::string device;  // mlx5_0
  int port = 0;
  std::string state;       // "ACTIVE", "DOWN", "INIT", "ARMED" (number stripped)
  std::string phys_state;  // "LinkUp", "Polling", "Disabled"
  std::optional<double> rate_gbps;
  std::optional<std::string> link_layer;  // "InfiniBand", "Ethernet"
  std::optional<double> window_s;
  std::map<std::string, uint64_t> counters;        // counters/* at the end of the window
  std::map<std::string, uint64_t> counters_delta;  // growth within the window
};

struct PeerTraffic {
  std::string peer;  // "10.0.0.7:443"
  uint64_t tx_bytes = 0, rx_bytes = 0;
};

struct ProcessTraffic {
  int pid = 0;
  std::string comm;
  std::optional<uint32_t> uid;
  uint64_t tx_bytes = 0, rx_bytes = 0;  // summed over the window, all of its TCP sockets
  std::optional<double> tx_bytes_per_s, rx_bytes_per_s;
  std::vector<PeerTraffic> peers;  // largest first, bounded
};

// Remote peers of established TCP connections grouped by network (/24 for IPv4, /64 for IPv6):
// how the server's clients see it, with no setup.
struct ClientNetworkFacts {
  std::string network;  // "203.0.113.0/24", "2001:db8:1:2::/64"
  int connections = 0;
  std::optional<double> rtt_median_ms;  // of the connections' smoothed RTTs
  std::optional<double> retrans_pct;    // retransmitted / sent segments, all connections
};

// A process holding UDP or raw sockets (from sock_diag, owners through /proc/PID/fd). The kernel
// counts no bytes per UDP or raw socket: peers and queue sizes only.
struct UdpSender {
  int pid = 0;
  std::string comm;
  std::optional<uint32_t> uid;
  int udp_sockets = 0, raw_sockets = 0;  // not counting those connected to loopback only
  int peer_count = 0;                    // distinct non-loopback peers of connected sockets
  std::vector<std::string> peers;        // bounded
  uint64_t send_queue_bytes = 0;         // largest sum of idiag_wqueue seen over the samples
  uint64_t recv_queue_bytes = 0;         // largest sum of idiag_rqueue seen over the samples
};

// Outbound UDP and raw traffic of this host's network namespace. Rates are namespace-wide
// (/proc/net/snmp and snmp6 counters); attribution is by socket ownership.
struct UdpTrafficFacts {
  double window_s = 0;
  std::optional<double> udp_out_datagrams_per_s;  // Udp OutDatagrams + Udp6OutDatagrams
  // IPv4 packets sent that are neither TCP segments nor UDP datagrams (raw sockets, ICMP):
  // Ip OutRequests - Tcp OutSegs - Udp OutDatagrams, never below 0. Approximate.
  std::optional<double> other_out_packets_per_s;
  std::string method;  // how the numbers were obtained, for the evidence
  int sockets_seen = 0;
  bool raw_supported = true;       // false: kernel without raw_diag (< 4.14)
  std::vector<UdpSender> senders;  // most likely sender first, bounded
};

struct SocketTrafficFacts {
  double window_s = 0;
  int sockets_seen = 0;
  uint64_t unmapped_tx_bytes = 0;  // traffic of sockets no visible process holds
  uint64_t loopback_tx_bytes = 0;  // sent to 127.0.0.0/8 or ::1: not counted anywhere else
  // The /proc scan stopped at the check deadline: processes not reached have no traffic here.
  bool process_scan_truncated = false;
  int processes_scanned = 0;
  std::vector<ProcessTraffic> processes;            // largest sender first, bounded
  std::vector<ClientNetworkFacts> client_networks;  // most connections first, bounded
  std::optional<UdpTrafficFacts> udp;               // absent: UDP not looked at
};

// Signs gathered about one process; rules decide whether they are a reason to inspect it.
struct ProcessSigns {
  int pid = 0;
  std::string comm;
  std::optional<uint32_t> uid;
  std::string user;                         // from /etc/passwd; empty when unknown
  bool exe_deleted = false;                 // /proc/PID/exe ends in " (deleted)"
  std::string exe;                          // the exe link target, sanitised
  std::optional<double> cpu_pct;            // over the window, 100 = one core
  std::vector<std::string> outbound_peers;  // established TCP to non-loopback peers, both samples
  std::vector<int> remote_ports;            // remote ports of all outbound connections (end)
  std::vector<int> listen_ports;            // local ports of its listening TCP sockets
  bool gpu_device_open = false;             // holds /dev/nvidiaN (not only nvidiactl)
  // With gpu_device_open and a configured known_gpu_users list: whether `user` is on it.
  std::optional<bool> gpu_user_known;
};

struct ProcessSignFacts {
  std::vector<ProcessSigns> processes;  // only processes with at least one sign worth judging
  int scanned = 0;
  int skipped_dstate = 0;  // tasks in D state whose fds/exe were not read
  // The /proc scan stopped at the check deadline: processes after `scanned` were not looked at.
  bool truncated = false;
};

struct NetworkFacts {
  std::optional<ReachabilityFacts> reachability;
  std::optional<std::vector<NicFacts>> nics;
  std::optional<std::vector<IbPortFacts>> ib_ports;
  std::optional<SocketTrafficFacts> sockets;
  std::optional<ProcessSignFacts> process_signs;
};

}  // namespace gpudoctor
