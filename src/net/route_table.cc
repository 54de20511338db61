#include "net/route_table.h"

#include <arpa/inet.h>

#include "core/strings.h"

namespace gpudoctor {

std::optional<DefaultRoute> ParseDefaultRoute(std::string_view route_text) {
  constexpr uint64_t kRtfUp = 0x1, kRtfGateway = 0x2;
  std::optional<DefaultRoute> best;
  bool header = true;
  for (std::string_view line : SplitLines(route_text)) {
    if (header) {
      header = false;
      if (StartsWith(Trim(line), "Iface")) continue;
    }
    auto f = Split(line, " \t");
    if (f.size() < 8) continue;
    auto dest = ParseHex(f[1]);
    auto gw = ParseHex(f[2]);
    auto flags = ParseHex(f[3]);
    auto metric = ParseInt64(f[6]);
    auto mask = ParseHex(f[7]);
    if (!dest || !gw || !flags || !metric || !mask) continue;
    if (*dest != 0 || *mask != 0 || *gw == 0 || *gw > 0xffffffffu) continue;
    if ((*flags & (kRtfUp | kRtfGateway)) != (kRtfUp | kRtfGateway)) continue;
    if (*metric < 0 || *metric > 1'000'000'000) continue;
    // The kernel prints the in-memory (network order) word with %08X on a little-endian host.
    in_addr a{};
    a.s_addr = static_cast<uint32_t>(*gw);
    char buf[INET_ADDRSTRLEN] = {};
    if (inet_ntop(AF_INET, &a, buf, sizeof buf) == nullptr) continue;
    if (best && best->metric <= *metric) continue;
    best = DefaultRoute{Sanitize(f[0], 32), buf, static_cast<int>(*metric)};
  }
  return best;
}

}  // namespace gpudoctor
