// A TCP socket as the sock_diag dump reports it, for tests of the process signs. Header-only,
// test code.
#pragma once

#include <cstdint>
#include <string>

#include "net/sock_diag.h"

namespace gpudoctor::testing {

// Socket `inode` in TCP state `state` (1 established, 10 listen) from local port `lport` to
// `remote` ("203.0.113.9:14444") on port `rport`.
inline TcpSocketInfo Sock(uint64_t inode, int state, const std::string& remote, uint16_t rport,
                          uint16_t lport = 40000) {
  TcpSocketInfo s;
  s.inode = inode;
  s.state = state;
  s.remote = remote;
  s.remote_port = rport;
  s.local_port = lport;
  return s;
}

}  // namespace gpudoctor::testing
