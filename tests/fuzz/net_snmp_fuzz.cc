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
  gpudoctor::UdpSenderInputs in;
  in.counters_before = &b;
  in.counters_after = &a;
  in.window_s = 1;
  (void)gpudoctor::CollectUdpSenders(in);
  return 0;
}
