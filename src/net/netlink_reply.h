// Netlink replies (NETLINK_ROUTE, NETLINK_SOCK_DIAG): the message walk and the receive loop that
// every dump in src/net shares. A reply is a run of buffers, each holding whole netlink messages
// (nlmsghdr, body, padding to 4 bytes); a dump ends with NLMSG_DONE, and NLMSG_ERROR carries a
// negative errno (0: an acknowledgement). Reference: netlink(7), include/uapi/linux/netlink.h.
// Thread-safety: NetlinkReplyWalker is a value used by one thread; the functions are reentrant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace gpudoctor {

// How a dump's errors read: messages start with `what` ("sock_diag", "rtnetlink"); a kernel
// error equal to -unsupported_errno (when non-zero) is reported as unsupported with
// unsupported_text instead of io_error (sock_diag: ENOENT, no diag module for the protocol).
struct NetlinkReplyKind {
  std::string_view what;
  int unsupported_errno = 0;
  std::string_view unsupported_text;
  // A kernel error equal to -skipped_errno (when non-zero) is counted (skipped_errors()) and
  // skipped like an acknowledgement: the answer to one of many requests that found nothing
  // (sock_diag lookups of sockets that have closed: ENOENT).
  int skipped_errno = 0;
};

// One data message of a reply: its type and its body (the bytes after the header, up to the
// header's length; padding excluded).
struct NetlinkMessage {
  uint16_t type = 0;
  std::string_view body;
};

// Walks the messages of one received buffer:
//   NetlinkReplyWalker w(buf, kind);
//   NetlinkMessage m;
//   while (w.Next(&m)) { ... }
//   if (!w.status().ok()) return w.status();
//   *done = w.done();
// Next skips acknowledgements and stops (false) at the end of the buffer, at NLMSG_DONE (done()
// true) or at an error: status() is then parse_error "<what>: malformed netlink message length"
// (a length shorter than the header or past the buffer), or the NLMSG_ERROR's error (io_error
// "<what>: kernel error: <strerror>", or unsupported per `kind`). Trailing bytes shorter than a
// header are ignored. Never reads outside `buf`.
class NetlinkReplyWalker {
 public:
  NetlinkReplyWalker(std::string_view buf, const NetlinkReplyKind& kind) : buf_(buf), kind_(kind) {}

  bool Next(NetlinkMessage* msg);
  bool done() const { return done_; }
  const Status& status() const { return status_; }
  int skipped_errors() const { return skipped_errors_; }

 private:
  std::string_view buf_;
  const NetlinkReplyKind& kind_;
  size_t off_ = 0;
  bool done_ = false;
  int skipped_errors_ = 0;
  Status status_;
};

// Sends `len` bytes of netlink request(s) at `msg` to the kernel on `fd`. Errors: io_error
// "<what> send: <strerror>".
Status SendNetlinkRequest(int fd, const void* msg, size_t len, const char* what);

// The receive buffer of ReceiveNetlinkReply: kSize bytes, allocated on first use and never zeroed
// (only the bytes a receive wrote are handed on). A zeroed buffer (std::vector<char>(64 KiB))
// touched all 16 of its pages on every dump, receive or not: 16 page faults a dump where the
// buffer was fresh, and a 64 KiB memset every time. Keep one across dumps where the caller can
// (LinkDumper). Not thread-safe: one receive at a time.
class NetlinkBuffer {
 public:
  // A dump's kernel buffer is at most 32 KiB (netlink's max_recvmsg_len); twice that leaves room.
  static constexpr size_t kSize = 64 * 1024;
  char* data() {
    if (!bytes_) bytes_.reset(new char[kSize]);  // default-initialised: not zeroed
    return bytes_.get();
  }
  static constexpr size_t size() { return kSize; }

 private:
  std::unique_ptr<char[]> bytes_;
};

// Receives the reply to a request already sent on `fd` (a netlink socket with a receive timeout)
// into `buf`, handing each received part to `parse`, which sets *done once the reply has ended
// (NLMSG_DONE). Errors: parse's own; timeout "<what>: no reply" when the receive times out;
// io_error on a failed or closed socket or a reply that does not end.
Status ReceiveNetlinkReply(int fd, NetlinkBuffer& buf, const NetlinkReplyKind& kind,
                           const std::function<Status(std::string_view, bool* done)>& parse);

}  // namespace gpudoctor
