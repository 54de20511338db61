// Fuzz target: ParseLinkDumpReply (rtnetlink RTM_GETLINK dump replies: netlink headers,
// ifinfomsg, attributes) and ParseLinkStatsReply (RTM_GETSTATS dump replies: if_stats_msg and
// IFLA_STATS_LINK_64), on the same bytes. Must never crash, read past the buffer or loop; parsed
// interfaces carry a bounded, printable name.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "net/link_netlink.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<gpudoctor::NetlinkLink> out;
  bool done = false;
  auto s = gpudoctor::ParseLinkDumpReply(
      std::string_view(reinterpret_cast<const char*>(data), size), out, &done);
  (void)s;
  for (const auto& link : out) {
    if (link.name.empty()) std::abort();
    if (link.carrier && (link.flags & 1) == 0) std::abort();  // carrier only when up
  }
  std::vector<gpudoctor::NetlinkLinkStats> stats;
  done = false;
  s = gpudoctor::ParseLinkStatsReply(std::string_view(reinterpret_cast<const char*>(data), size),
                                     stats, &done);
  (void)s;
  if (stats.size() > size / 16 + 1) std::abort();  // each came from a message of its own
  return 0;
}
