#include "kmsg/pci_tuple.h"

#include <cstdio>

#include "core/strings.h"

namespace gpudoctor {
namespace {

std::optional<uint32_t> HexField(std::string_view s, size_t max_digits, uint32_t max_value) {
  if (s.empty() || s.size() > max_digits) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    v = v * 16 + d;
  }
  if (v > max_value) return std::nullopt;
  return static_cast<uint32_t>(v);
}

}  // namespace

std::string PciTuple::ToString() const {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, device, function);
  return buf;
}

std::optional<PciTuple> ParsePciTuple(std::string_view text) {
  if (StartsWith(text, "PCI:")) text.remove_prefix(4);
  PciTuple t;
  std::string_view rest = text;
  if (size_t dot = rest.rfind('.'); dot != std::string_view::npos) {
    auto fn = HexField(rest.substr(dot + 1), 1, 7);
    if (!fn) return std::nullopt;
    t.function = *fn;
    rest = rest.substr(0, dot);
  }
  // rest = [domain:]bus:device
  size_t last = rest.rfind(':');
  if (last == std::string_view::npos) return std::nullopt;
  auto dev = HexField(rest.substr(last + 1), 2, 0x1f);
  if (!dev) return std::nullopt;
  t.device = *dev;
  std::string_view head = rest.substr(0, last);
  size_t first = head.rfind(':');
  std::string_view bus_text = first == std::string_view::npos ? head : head.substr(first + 1);
  auto bus = HexField(bus_text, 2, 0xff);
  if (!bus) return std::nullopt;
  t.bus = *bus;
  if (first != std::string_view::npos) {
    auto dom = HexField(head.substr(0, first), 8, 0xffffffffu);
    if (!dom) return std::nullopt;
    t.domain = *dom;
  }
  return t;
}

}  // namespace gpudoctor
