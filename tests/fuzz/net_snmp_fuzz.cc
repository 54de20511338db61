// Fuzzes the /proc/net/snmp and /proc/net/snmp6 counter parsers and the UDP sender aggregation
// fed with what they parsed: any text must parse or fail with a clear error, never crash.
#include <cstddef>
#include <cstdint>
#include <map>
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
  std::map<std::string, uint64_t> fa, fb;
  bool full_ok = gpudoctor::ParseSnmpCounters(text, fa).ok();
  std::map<std::string, uint64_t> only;
  if (gpudoctor::ParseSnmpCounters(text, only, gpudoctor::kUdpSenderCounters).ok() != full_ok) {
    __builtin_trap();
  }
  for (const auto& [name, value] : only) {
    if (fa.count(name) == 0 || fa[name] != value) __builtin_trap();
  }
  bool full6_ok = gpudoctor::ParseSnmp6Counters(text, fb).ok();
  std::map<std::string, uint64_t> only6;
  if (gpudoctor::ParseSnmp6Counters(text, only6, gpudoctor::kUdpSenderCounters).ok() != full6_ok) {
    __builtin_trap();
  }
  for (const auto& [name, value] : only6) {
    if (fb.count(name) == 0 || fb[name] != value) __builtin_trap();
  }
  gpudoctor::UdpSenderInputs in;
  in.counters_before = &b;
  in.counters_after = &a;
  in.window_s = 1;
  (void)gpudoctor::CollectUdpSenders(in);
  return 0;
}
