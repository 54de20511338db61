#include "net/neighbor_table.h"

#include "core/strings.h"

namespace gpudoctor {

std::optional<ArpEntry> FindArpEntry(std::string_view arp_text, std::string_view ip,
                                     std::string_view device) {
  constexpr uint64_t kAtfPublished = 0x8;  // ATF_PUBL
  std::optional<ArpEntry> found;
  bool header = true;
  for (std::string_view line : SplitLines(arp_text)) {
    if (header) {
      header = false;
      if (StartsWith(Trim(line), "IP address")) continue;
    }
    auto f = Split(line, " \t");
    if (f.size() < 6 || f[0] != ip) continue;
    auto flags = ParseHex(f[2]);
    if (!flags || *flags > 0xffffffffu) continue;
    if (*flags & kAtfPublished) continue;  // this host answering for `ip` (proxy ARP): not `ip`
    ArpEntry e{Sanitize(f[0], 64), static_cast<uint32_t>(*flags), Sanitize(f[3], 64),
               Sanitize(f[5], 32)};
    if (!device.empty() && e.device == device) return e;
    if (!found) found = std::move(e);
  }
  return found;
}

}  // namespace gpudoctor
