// Parser for /proc/net/arp (the kernel's IPv4 neighbour table as text, one entry a line after a
// header): IP address, HW type, Flags, HW address, Mask, Device. Flags are hex: ATF_COM (0x2) set
// when the neighbour answered ARP (complete; 0x6 with ATF_PERM for a static entry); an entry the
// kernel is still resolving or gave up on (INCOMPLETE / FAILED) shows 0x0 and a zero address.
// Links without ARP (TUN, WireGuard, PPP) never have entries. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpudoctor {

struct ArpEntry {
  std::string ip;          // dotted quad, as printed
  uint32_t flags = 0;      // ATF_* bits
  std::string hw_address;  // "aa:bb:cc:dd:ee:ff"; zeros while unresolved
  std::string device;
  bool complete() const { return (flags & 0x2) != 0; }  // ATF_COM: the neighbour answered ARP
};

// The entry for `ip` on `device` (any device when `device` is empty; the device's own entry wins
// when both exist); nullopt when there is none. Published entries (ATF_PUBL: this host answering
// for the address, proxy ARP) say nothing about the neighbour and are skipped, as are malformed
// lines.
std::optional<ArpEntry> FindArpEntry(std::string_view arp_text, std::string_view ip,
                                     std::string_view device);

}  // namespace gpudoctor
