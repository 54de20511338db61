// Fuzzes the small parsers of the network layer's outside input: sysfs link speed and IB
// state/rate, /proc/PID/stat, /etc/passwd, fd links, ICMP echo replies, exe link targets
// (the temporary-directory judgement of proc.suspicious).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "facts/miner_signs.h"
#include "net/icmp_packet.h"
#include "net/infiniband_sysfs.h"
#include "net/nic_sysfs.h"
#include "net/proc_scan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto s = gpudoctor::ParseLinkSpeedMbps(text); s && *s <= 0) __builtin_trap();
  (void)gpudoctor::ParseIbStateName(text);
  if (auto r = gpudoctor::ParseIbRateGbps(text); r && !(*r > 0)) __builtin_trap();
  (void)gpudoctor::ParsePidStat(text);
  (void)gpudoctor::ParsePasswd(text);
  (void)gpudoctor::ParseSocketLink(text);
  (void)gpudoctor::IsNvidiaGpuDevice(text);
  (void)gpudoctor::ParseEchoReply(text, false, true);
  (void)gpudoctor::ParseEchoReply(text, true, false);
  auto kind = gpudoctor::ClassifyTempExe(text);
  if ((kind == gpudoctor::TempExe::kNotTemp) == gpudoctor::ExeInTempDir(text)) __builtin_trap();
  return 0;
}
