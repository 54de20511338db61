// Fuzzes the sock_diag netlink reply parser: any buffer must parse or fail cleanly, for TCP
// (tcp_info attributes read) and for UDP and raw replies (queues only).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "net/sock_diag.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view buf(reinterpret_cast<const char*>(data), size);
  for (int protocol : {6, 17, 255}) {
    std::vector<gpudoctor::TcpSocketInfo> out;
    bool done = false;
    (void)gpudoctor::ParseSockDiagReply(buf, out, &done, protocol);
  }
  return 0;
}
