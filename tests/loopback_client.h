// A raw TCP client of a server on 127.0.0.1, for tests that speak HTTP byte by byte (hostile
// clients, pipelining). Header-only, test code.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

namespace gpudoctor::testing {

// A blocking socket connected to 127.0.0.1:port; -1 when the connection failed. A positive
// `rcvbuf_bytes` shrinks its receive buffer first (a client that reads slowly fills it soon).
inline int ConnectLoopback(int port, int rcvbuf_bytes = 0) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (rcvbuf_bytes > 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf_bytes, sizeof rcvbuf_bytes);
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace gpudoctor::testing
