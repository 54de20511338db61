// Fuzzes the outside input of the watch HTTP server: listen addresses, the history
// endpoint's and the bandwidth report's query parameters (split "k=v&k=v" as the server hands
// them over) and token files. Invariants: ports 0-65535, a parsed query names a known metric, a
// bandwidth query has since <= until and a plan in (0, 1e7], a token is non-empty printable ASCII.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "metrics/metric_table.h"
#include "serve/bandwidth_route.h"
#include "serve/http_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudoctor;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto a = ParseListenAddress(text); a.ok() && (a->port < 0 || a->port > 65535)) {
    __builtin_trap();
  }
  std::multimap<std::string, std::string> params;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t amp = text.find('&', pos);
    std::string_view kv = text.substr(pos, amp == std::string_view::npos ? amp : amp - pos);
    size_t eq = kv.find('=');
    params.emplace(std::string(kv.substr(0, eq)),
                   eq == std::string_view::npos ? "" : std::string(kv.substr(eq + 1)));
    if (amp == std::string_view::npos) break;
    pos = amp + 1;
  }
  if (auto q = ParseHistoryQuery(params, 1800000000); q.ok() && FindMetric(q->metric) == nullptr) {
    __builtin_trap();
  }
  if (auto b = ParseBandwidthQuery(params, 1800000000); b.ok()) {
    if (b->until_unix_s < b->since_unix_s) __builtin_trap();
    if (b->options.plan_mbps_flag &&
        !(*b->options.plan_mbps_flag > 0 && *b->options.plan_mbps_flag <= 1e7)) {
      __builtin_trap();
    }
  }
  if (auto t = ParseTokenFileContent(text); t.ok()) {
    if (t->empty()) __builtin_trap();
    for (char c : *t) {
      if (c < 0x21 || c > 0x7e) __builtin_trap();
    }
  }
  return 0;
}
