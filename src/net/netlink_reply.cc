#include "net/netlink_reply.h"

#include <linux/netlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <climits>
#include <cstring>

namespace gpudoctor {

bool NetlinkReplyWalker::Next(NetlinkMessage* msg) {
  while (!done_ && status_.ok() && off_ + sizeof(nlmsghdr) <= buf_.size()) {
    nlmsghdr h;
    std::memcpy(&h, buf_.data() + off_, sizeof h);
    if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > buf_.size() - off_) {
      status_ = ParseError(std::string(kind_.what) + ": malformed netlink message length");
      return false;
    }
    std::string_view body = buf_.substr(off_ + NLMSG_HDRLEN, h.nlmsg_len - NLMSG_HDRLEN);
    // NLMSG_ALIGN of a length up to the buffer's size: no overflow; past the end ends the walk.
    off_ += NLMSG_ALIGN(h.nlmsg_len);
    if (h.nlmsg_type == NLMSG_DONE) {
      done_ = true;
      return false;
    }
    if (h.nlmsg_type == NLMSG_ERROR) {
      int err = 0;
      if (body.size() >= sizeof(int)) std::memcpy(&err, body.data(), sizeof err);
      if (err == 0) continue;  // an acknowledgement
      if (kind_.skipped_errno != 0 && err == -kind_.skipped_errno) {
        ++skipped_errors_;
        continue;
      }
      if (kind_.unsupported_errno != 0 && err == -kind_.unsupported_errno) {
        status_ = Unsupported(std::string(kind_.what) + ": " + std::string(kind_.unsupported_text));
      } else {
        // A negative errno as the kernel sends it; anything else (a positive value, INT_MIN,
        // whose negation overflows) is named by its number.
        std::string text =
            err < 0 && err != INT_MIN ? std::strerror(-err) : "error code " + std::to_string(err);
        status_ = IoError(std::string(kind_.what) + ": kernel error: " + text);
      }
      return false;
    }
    msg->type = h.nlmsg_type;
    msg->body = body;
    return true;
  }
  return false;
}

Status ReceiveNetlinkReply(int fd, NetlinkBuffer& buf, const NetlinkReplyKind& kind,
                           const std::function<Status(std::string_view, bool* done)>& parse) {
  const std::string what(kind.what);
  bool done = false;
  for (int rounds = 0; !done; ++rounds) {
    if (rounds > 100000) return IoError(what + ": reply does not end");
    ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return TimeoutError(what + ": no reply");
      return IoError(what + " recv: " + std::strerror(errno));
    }
    if (n == 0) return IoError(what + ": socket closed");
    Status st = parse(std::string_view(buf.data(), static_cast<size_t>(n)), &done);
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

Status SendNetlinkRequest(int fd, const void* msg, size_t len, const char* what) {
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd, msg, len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    return IoError(std::string(what) + " send: " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace gpudoctor
