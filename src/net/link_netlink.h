// Network interfaces from rtnetlink (NETLINK_ROUTE, an RTM_GETLINK dump): for every interface of
// this network namespace its name, flags, operstate, carrier, carrier changes and the counters of
// IFLA_STATS64 (struct rtnl_link_stats64: the same numbers /sys/class/net/IF/statistics/* print,
// both from dev_get_stats). One dump (a send and a few receives) replaces a dozen sysfs reads per
// interface; `watch` reads it every tick (net/nic_sysfs.h), through LinkDumper::Links: the
// counters alone (RTM_GETSTATS) while no link change is announced. The link speed is not in it
// (ethtool).
// Semantics matched to sysfs: operstate is the kernel's for a running interface and "down" for
// one not up (as both sysfs and rtnetlink print it); carrier is absent for an interface not up
// (sysfs answers EINVAL then). Reads are bounded by a receive timeout.
// Thread-safety: a LinkDumper is used by one thread at a time; the parser is pure.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "net/netlink_reply.h"

struct nlmsghdr;

namespace gpudoctor {

struct NetlinkLink {
  int index = 0;
  std::string name;
  uint32_t flags = 0;           // ifi_flags; bit 0 IFF_UP
  std::string operstate;        // "up", "down", "unknown", ... (sysfs's words); "" when absent
  std::optional<bool> carrier;  // absent when the interface is not up
  std::optional<uint64_t> carrier_changes;
  // rx_bytes, tx_bytes, rx_packets, tx_packets, rx_errors, tx_errors, rx_dropped, tx_dropped
  std::optional<std::array<uint64_t, 8>> stats;
};

// Parses one buffer of an RTM_GETLINK dump reply (netlink messages), appending interfaces to
// `out`. Sets *done on NLMSG_DONE. Errors: parse_error on a malformed message (length past the
// buffer, an attribute past its message), io_error on NLMSG_ERROR. Pure; for tests and fuzzing.
Status ParseLinkDumpReply(std::string_view buf, std::vector<NetlinkLink>& out, bool* done);

// IF_OPER_* → the word sysfs's operstate prints ("unknown" for values past the table).
std::string_view OperstateName(uint8_t operstate);

// One interface's counters from an RTM_GETSTATS dump (IFLA_STATS_LINK_64 only): the same eight
// numbers, in the same order, as NetlinkLink::stats.
struct NetlinkLinkStats {
  int index = 0;
  std::array<uint64_t, 8> stats{};
};

// Parses one buffer of an RTM_GETSTATS dump reply, appending the interfaces that carry
// IFLA_STATS_LINK_64 to `out`. Errors and *done as ParseLinkDumpReply. Pure; for tests and fuzzing.
Status ParseLinkStatsReply(std::string_view buf, std::vector<NetlinkLinkStats>& out, bool* done);

// Keeps one NETLINK_ROUTE socket open across dumps.
//
// Links() is what `watch` reads every tick: a full RTM_GETLINK dump fills every attribute of every
// interface (inet6 configuration and statistics among them: ~1.5 KiB an interface, 180 KiB and
// ~0.13 ms of kernel time a tick on a node with 120 interfaces), where only the counters move
// from tick to tick. So Links() dumps everything only when something else may have changed: on
// its first call, when the kernel announced a link change (a second socket subscribed to
// RTNLGRP_LINK: every change of flags, operstate, carrier, name or the interface list sends
// RTM_NEWLINK / RTM_DELLINK there), when that announcement may have been lost (the socket
// overflowed, ENOBUFS), when the counters' dump lists an interface set other than the last full
// dump's, or kFullDumpEvery after the last one; otherwise an RTM_GETSTATS dump of the 64-bit
// counters alone (~0.2 KiB an interface) updates the last full dump's links. A kernel that
// refuses RTM_GETSTATS (older than 4.7) gets full dumps, as before.
class LinkDumper {
 public:
  static constexpr std::chrono::seconds kFullDumpEvery{30};

  LinkDumper() = default;
  ~LinkDumper();
  LinkDumper(const LinkDumper&) = delete;
  LinkDumper& operator=(const LinkDumper&) = delete;

  // Every interface of this network namespace. Errors: unsupported (no netlink socket),
  // io_error, timeout (no answer within 1 s), parse_error.
  Result<std::vector<NetlinkLink>> Dump();
  // The counters of every interface (RTM_GETSTATS). Errors as Dump().
  Result<std::vector<NetlinkLinkStats>> DumpStats();
  // Every interface, as Dump() returns them, at the cost described above. `now`: the caller's
  // clock (tests pass a fake one). Errors as Dump(); a failed counters' dump falls back to a
  // full one.
  Result<std::vector<NetlinkLink>> Links(TimePoint now);

  uint64_t full_dumps() const { return full_dumps_; }    // made by Links()
  uint64_t stats_dumps() const { return stats_dumps_; }  // made by Links()

 private:
  // True when the change socket says (or cannot rule out) that a link changed since the last
  // call; drains it.
  bool LinksChanged();
  // Sends the dump request (`len` bytes at `request`; its length, flags and sequence are set here)
  // on the request socket, opened on first use, and hands the reply's parts to `parse`. A failed
  // send or receive closes the socket (the next request opens a fresh one).
  Status Request(nlmsghdr* request, size_t len,
                 const std::function<Status(std::string_view, bool* done)>& parse);

  int fd_ = -1;
  int changes_fd_ = -1;  // subscribed to RTNLGRP_LINK; -1 before the first Links() or if unusable
  bool stats_refused_ = false;  // the kernel refused RTM_GETSTATS (before 4.7): full dumps only
  uint32_t seq_ = 0;
  NetlinkBuffer buf_;
  std::vector<NetlinkLink> links_;  // the last full dump, counters updated since
  std::optional<TimePoint> full_at_;
  uint64_t full_dumps_ = 0, stats_dumps_ = 0;
};

}  // namespace gpudoctor
