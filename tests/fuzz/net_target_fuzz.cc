// Fuzzes target parsing ([network] targets, --target) and the /proc/net/route parser.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "net/route_table.h"
#include "net/target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto t = gpudoctor::ParseTarget(text);
  if (t.ok()) {
    if (t->host.empty()) __builtin_trap();
    if (t->port && (*t->port == 0 || t->method != gpudoctor::ProbeMethod::kTcp)) __builtin_trap();
  }
  (void)gpudoctor::ParseDefaultRoute(text);
  return 0;
}
