// Fuzzes target parsing ([network] targets, --target: hosts, host:port and http(s) URLs), the
// /proc/net/route parser and the /proc/net/arp lookup (an entry found is for the address asked).
// Invariants: a parsed target has a host; a port only for TCP and URLs (always for those); a URL's
// path starts with '/' and its normalised Url() parses back to the same host, port and path.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "net/neighbor_table.h"
#include "net/route_table.h"
#include "net/target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using gpudoctor::ProbeMethod;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto t = gpudoctor::ParseTarget(text);
  if (t.ok()) {
    if (t->host.empty()) __builtin_trap();
    bool wants_port = t->method == ProbeMethod::kTcp || t->IsUrl();
    if (t->port.has_value() != wants_port || (t->port && *t->port == 0)) __builtin_trap();
    if (t->IsUrl()) {
      if (t->path.empty() || t->path.front() != '/') __builtin_trap();
      auto again = gpudoctor::ParseTarget(t->Url());
      if (!again.ok() || again->host != t->host || again->port != t->port ||
          again->path != t->path || again->method != t->method) {
        __builtin_trap();
      }
    } else if (!t->path.empty()) {
      __builtin_trap();
    }
  }
  (void)gpudoctor::ParseDefaultRoute(text);
  for (std::string_view ip : {"192.168.1.1", "10.0.0.1"}) {
    auto e = gpudoctor::FindArpEntry(text, ip, "eth0");
    if (e && (e->ip != ip || (e->flags & 0x8) != 0)) __builtin_trap();
  }
  return 0;
}
