// Parser for /proc/net/route (the IPv4 FIB as text, one route a line after a header):
// Iface Destination Gateway Flags RefCnt Use Metric Mask MTU Window IRTT, addresses in hex in
// host (little-endian on x86/arm) byte order as the kernel prints them. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpudoctor {

struct DefaultRoute {
  std::string iface;
  std::string gateway;  // dotted quad
  int metric = 0;
};

// The default route (destination 0/0, flags UP|GATEWAY) with the lowest metric; nullopt when
// there is none or the text is garbled. Malformed lines are skipped.
std::optional<DefaultRoute> ParseDefaultRoute(std::string_view route_text);

}  // namespace gpudoctor
