// Fuzzes the /proc/net/snmp and /proc/net/snmp6 counter parsers and the UDP sender aggregation
// fed with what they parsed: any text must parse or fail with a clear error, never crash.
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "net/udp_senders.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::map<std::string, uint64_t> a, b;
  (void)gpudoctor::ParseSnmpCounters(text, a);
  (void)gpudoctor::ParseSnmp6Counters(text, b);
  // The filtered parse (what `check` and `watch` run) agrees with the full one on success and
  // on failure: every line is checked either way, and what it keeps is what the full one has.
  auto agrees = [&](auto parse) {
    std::map<std::string, uint64_t> full, only;
    bool full_ok = parse(text, full, {}).ok();
    if (parse(text, only, gpudoctor::kUdpSenderCounters).ok() != full_ok) __builtin_trap();
    for (const auto& [name, value] : only) {
      auto it = full.find(name);
      if (it == full.end() || it->second != value) __builtin_trap();
    }
  };
  agrees([](std::string_view t, std::map<std::string, uint64_t>& out,
            std::span<const std::string_view> only) {
    return gpudoctor::ParseSnmpCounters(t, out, only);
  });
  agrees([](std::string_view t, std::map<std::string, uint64_t>& out,
            std::span<const std::string_view> only) {
    return gpudoctor::ParseSnmp6Counters(t, out, only);
  });
  gpudoctor::UdpSenderInputs in;
  in.counters_before = &b;
  in.counters_after = &a;
  in.window_s = 1;
  (void)gpudoctor::CollectUdpSenders(in);
  return 0;
}
