#include "facts/pci_bus_id.h"

#include <cstdio>

#include "core/strings.h"

namespace gpudoctor {
namespace {

std::optional<uint32_t> HexPart(std::string_view s, size_t max_digits, uint32_t max_value) {
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

std::optional<PciAddress> ParsePciBusId(std::string_view text) {
  text = Trim(text);
  PciAddress a;
  std::string_view rest = text;
  if (size_t dot = rest.rfind('.'); dot != std::string_view::npos) {
    auto fn = HexPart(rest.substr(dot + 1), 1, 7);
    if (!fn) return std::nullopt;
    a.function = *fn;
    rest = rest.substr(0, dot);
  }
  std::string_view parts[3];
  int n = 0;
  size_t start = 0;
  while (true) {
    size_t colon = rest.find(':', start);
    if (n == 3) return std::nullopt;
    parts[n++] = rest.substr(start, colon == std::string_view::npos ? colon : colon - start);
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  if (n < 2) return std::nullopt;
  int i = 0;
  if (n == 3) {
    auto d = HexPart(parts[0], 8, 0xffffffffu);
    if (!d) return std::nullopt;
    a.domain = *d;
    i = 1;
  }
  auto bus = HexPart(parts[i], 2, 0xff);
  auto dev = HexPart(parts[i + 1], 2, 0x1f);
  if (!bus || !dev) return std::nullopt;
  a.bus = *bus;
  a.device = *dev;
  return a;
}

// Appends `v` as lower-case hex, at least `width` digits (more when it needs them).
static void AppendHex(std::string& out, uint32_t v, int width) {
  static constexpr char kDigits[] = "0123456789abcdef";
  char buf[8];
  int n = 0;
  do {
    buf[n++] = kDigits[v & 0xf];
    v >>= 4;
  } while (v != 0);
  for (int i = n; i < width; ++i) out.push_back('0');
  while (n > 0) out.push_back(buf[--n]);
}

// "%04x:%02x:%02x.%x" without printf: this runs once per Xid line, and a storm has millions.
std::string FormatPciBusId(const PciAddress& a) {
  std::string out;
  out.reserve(16);
  AppendHex(out, a.domain, 4);
  out.push_back(':');
  AppendHex(out, a.bus, 2);
  out.push_back(':');
  AppendHex(out, a.device, 2);
  out.push_back('.');
  AppendHex(out, a.function, 1);
  return out;
}

std::string NormalizePciBusId(std::string_view text) {
  auto a = ParsePciBusId(text);
  return a ? FormatPciBusId(*a) : std::string();
}

std::string PciAddress::ToString() const { return FormatPciBusId(*this); }

}  // namespace gpudoctor
