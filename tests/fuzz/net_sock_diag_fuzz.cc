// Fuzzes the sock_diag netlink reply parser: any buffer must parse or fail cleanly.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "net/sock_diag.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view buf(reinterpret_cast<const char*>(data), size);
  std::vector<gpudoctor::TcpSocketInfo> out;
  bool done = false;
  (void)gpudoctor::ParseSockDiagReply(buf, out, &done);
  return 0;
}
