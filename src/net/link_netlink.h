// Network interfaces from rtnetlink (NETLINK_ROUTE, an RTM_GETLINK dump): for every interface of
// this network namespace its name, flags, operstate, carrier, carrier changes and the counters of
// IFLA_STATS64 (struct rtnl_link_stats64: the same numbers /sys/class/net/IF/statistics/* print,
// both from dev_get_stats). One dump (a send and a few receives) replaces a dozen sysfs reads per
// interface; `watch` reads it every tick (net/nic_sysfs.h). The link speed is not in it (ethtool).
// Semantics matched to sysfs: operstate is the kernel's for a running interface and "down" for
// one not up (as both sysfs and rtnetlink print it); carrier is absent for an interface not up
// (sysfs answers EINVAL then). Reads are bounded by a receive timeout.
// Thread-safety: a LinkDumper is used by one thread at a time; the parser is pure.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "net/netlink_reply.h"

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

// Keeps one NETLINK_ROUTE socket open across dumps.
class LinkDumper {
 public:
  LinkDumper() = default;
  ~LinkDumper();
  LinkDumper(const LinkDumper&) = delete;
  LinkDumper& operator=(const LinkDumper&) = delete;

  // Every interface of this network namespace. Errors: unsupported (no netlink socket),
  // io_error, timeout (no answer within 1 s), parse_error.
  Result<std::vector<NetlinkLink>> Dump();

 private:
  int fd_ = -1;
  uint32_t seq_ = 0;
  NetlinkBuffer buf_;
};

}  // namespace gpudoctor
