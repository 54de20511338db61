// Pingers: N probes to one address (or, for ICMP, to many addresses at once), spaced, each
// bounded by a timeout. All return within about (count - 1) * interval + timeout (never longer),
// so a caller can budget the whole series.
//
// ICMP (IcmpPingMany, IcmpPing): an unprivileged ICMP datagram socket (SOCK_DGRAM,
// IPPROTO_ICMP) where net.ipv4.ping_group_range admits our gid, else a raw socket (needs
// CAP_NET_RAW). One socket per address family serves every host of the call (one
// raw socket per host made every socket receive every host's replies, overflowing their
// buffers into false loss with hundreds of targets). Replies are matched by source address,
// identifier (raw sockets; the kernel demultiplexes datagram sockets), sequence number and a
// per-host nonce in the payload, so a reply is never credited to another host or series. The
// receive buffer is enlarged (SO_RCVBUFFORCE where permitted, else SO_RCVBUF up to
// net.core.rmem_max), raw sockets filter out everything but echo replies, sends are paced (the
// hosts' probes are spread evenly over each interval, never sent as one burst), and the RTT
// uses the kernel's receive timestamp (SO_TIMESTAMPNS) when it is plausible, else the time the
// reply was read; a reply is late (lost) when that RTT exceeds the timeout. While every reply
// has carried a usable kernel timestamp, replies are read at the next send instead of waking
// for each (when they are read no longer matters). Errors: unsupported when neither socket can be
// opened for a family (the caller falls back to TCP).
//
// TCP (TcpPing): a non-blocking connect() per probe; the RTT is the time to the SYN-ACK, or to
// the RST: a refused connection means the host answered, so it counts as a reply with
// port_closed set (a firewall that drops gives a timeout = loss). Connections are closed with
// SO_LINGER 0 (RST), leaving no TIME_WAIT behind. Thread-safe; each call owns its sockets.
//
// Giving up on silence (PingOptions::give_up_silent, off by default): a series that has had no
// answer at all (no reply; for TCP no SYN-ACK, RST or error) that long after its first probe
// sends no more probes and stops waiting; `sent` counts the probes actually sent, all lost, and
// `gave_up_silent` is set. For the implicit default gateway, a router on the host's own link
// that answers nothing in half a second answers nothing at all: the whole series would only
// make `check` wait ~1.8 s for the same verdict.
//
// Listening before sending more (PingOptions::quiet_after, off by default): from probe
// quiet_after on, a probe is sent only when the series had a reply by its due time; the others
// pass unsent (not lost: `sent` counts what went out). A host silent so far gets no more probes
// while the first ones may still be answered; its first reply, however late, lets the rest of
// the series go out as due. With give_up_silent the series still ends at that time. For the
// implicit default gateway: a router that drops pings (this VM's, Azure's) cost 25 echoes in
// half a second to learn nothing the ARP table does not tell; now 5.
//
// Stopping a clean series (PingOptions::clean_after, off by default): when probe k >=
// clean_after is due and every probe sent so far has been answered in time, the series ends
// there (`sent` counts the probes sent, `stopped_clean` is set); one lost, late or unsent probe
// and it runs to the end. For the implicit default gateway: a link that answered the first half
// of its probes (20 of 40) is healthy as far as half a second of pings can tell, and the other
// half cost as much again (on a VM, each echo ~0.1 ms of CPU: a quarter of a `check`); a link
// that dropped one gets the whole series to measure its loss.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/status.h"
#include "net/target.h"

namespace gpudoctor {

struct PingOptions {
  int count = 5;
  std::chrono::milliseconds interval{200};      // between probe starts
  std::chrono::milliseconds timeout{1000};      // per probe
  std::chrono::milliseconds give_up_silent{0};  // 0: never give up (see above)
  int clean_after = 0;                          // 0: never stop a clean series (see above)
  int quiet_after = 0;                          // 0: always send every probe (see above)
};

struct PingResult {
  std::string method;  // "icmp-dgram", "icmp-raw", "tcp"
  // ICMP: replies whose RTT came from the kernel's receive timestamp (the rest were timed
  // when read).
  int kernel_timestamps = 0;
  int sent = 0;
  std::vector<double> rtts_ms;  // replies in send order
  bool port_closed = false;     // TCP: at least one RST
  std::string last_error;       // e.g. "network unreachable" when sends failed
  bool gave_up_silent = false;  // stopped early: no answer within opts.give_up_silent
  bool stopped_clean = false;   // stopped early: all of opts.clean_after or more answered
};

// One result per address, in input order; a family without an ICMP socket gives unsupported
// for its addresses only. With n addresses, probe k of address i is sent at
// t0 + k * interval + i * interval / n. opts.give_up_silent, clean_after and quiet_after apply
// to the addresses whose entry in `may_cut_short` is true (empty: to all of them); the others get
// the whole series.
std::vector<Result<PingResult>> IcmpPingMany(const std::vector<ResolvedAddress>& addrs,
                                             const PingOptions& opts,
                                             const std::vector<bool>& may_cut_short = {});
Result<PingResult> IcmpPing(const ResolvedAddress& addr, const PingOptions& opts);
// addr's port is ignored; `port` is used.
PingResult TcpPing(const ResolvedAddress& addr, uint16_t port, const PingOptions& opts);

}  // namespace gpudoctor
