// The netlink message walker and receive loop shared by the sock_diag and rtnetlink dumps
// (net/netlink_reply.h): data messages handed out in order with their bodies, acknowledgements
// skipped, NLMSG_DONE ends the walk, kernel errors and malformed lengths refused with the dump's
// name, and the receive loop over a socket pair (buffers until done, timeout, closed socket).
#include "net/netlink_reply.h"

#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

namespace gpudoctor {
namespace {

constexpr NetlinkReplyKind kKind{"test_diag", ENOENT, "no module"};

// One netlink message: header, body, padding to 4 bytes.
std::string Message(uint16_t type, std::string_view body) {
  nlmsghdr h{};
  h.nlmsg_type = type;
  h.nlmsg_len = static_cast<uint32_t>(NLMSG_LENGTH(body.size()));
  std::string out(reinterpret_cast<const char*>(&h), sizeof h);
  out += body;
  out.resize(NLMSG_ALIGN(out.size()), '\0');
  return out;
}

std::string Error(int err) {
  return Message(NLMSG_ERROR, std::string(reinterpret_cast<const char*>(&err), sizeof err));
}

std::vector<std::pair<uint16_t, std::string>> WalkAll(std::string_view buf, Status* status,
                                                      bool* done) {
  std::vector<std::pair<uint16_t, std::string>> out;
  NetlinkReplyWalker walk(buf, kKind);
  NetlinkMessage m;
  while (walk.Next(&m)) out.emplace_back(m.type, std::string(m.body));
  *status = walk.status();
  *done = walk.done();
  return out;
}

TEST(NetlinkReplyTest, HandsOutDataMessagesInOrderAndSkipsAcks) {
  std::string buf = Message(20, "abc") + Error(0) + Message(21, "") + Message(22, "12345");
  Status st;
  bool done = true;
  auto msgs = WalkAll(buf, &st, &done);
  EXPECT_TRUE(st.ok());
  EXPECT_FALSE(done);
  ASSERT_EQ(msgs.size(), 3u);
  EXPECT_EQ(msgs[0], (std::pair<uint16_t, std::string>{20, "abc"}));  // padding not in the body
  EXPECT_EQ(msgs[1], (std::pair<uint16_t, std::string>{21, ""}));
  EXPECT_EQ(msgs[2], (std::pair<uint16_t, std::string>{22, "12345"}));
}

TEST(NetlinkReplyTest, DoneEndsTheWalkAndLaterMessagesAreNotRead) {
  std::string buf = Message(20, "a") + Message(NLMSG_DONE, std::string(4, '\0')) + Message(21, "b");
  Status st;
  bool done = false;
  auto msgs = WalkAll(buf, &st, &done);
  EXPECT_TRUE(st.ok());
  EXPECT_TRUE(done);
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0].first, 20);
}

TEST(NetlinkReplyTest, KernelErrorsNameTheDumpAndTheMappedErrnoIsUnsupported) {
  Status st;
  bool done = false;
  auto msgs = WalkAll(Message(20, "a") + Error(-EPERM) + Message(21, "b"), &st, &done);
  EXPECT_EQ(msgs.size(), 1u);
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_EQ(st.message(), std::string("test_diag: kernel error: ") + std::strerror(EPERM));
  WalkAll(Error(INT_MIN), &st, &done);  // its negation would overflow: named by number
  EXPECT_EQ(st.message(), "test_diag: kernel error: error code " + std::to_string(INT_MIN));
  WalkAll(Error(-ENOENT), &st, &done);
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_EQ(st.message(), "test_diag: no module");
  // A kind without a mapped errno reports ENOENT as a kernel error.
  constexpr NetlinkReplyKind kPlain{"plain"};
  std::string err = Error(-ENOENT);
  NetlinkReplyWalker walk(err, kPlain);
  NetlinkMessage m;
  EXPECT_FALSE(walk.Next(&m));
  EXPECT_EQ(walk.status().code(), StatusCode::kIoError);
}

TEST(NetlinkReplyTest, MalformedLengthsAreRefusedAndShortTailsIgnored) {
  Status st;
  bool done = false;
  std::string past = Message(20, "abcd");
  past.resize(past.size() - 2);  // the header's length runs past the buffer
  EXPECT_TRUE(WalkAll(past, &st, &done).empty());
  EXPECT_EQ(st.code(), StatusCode::kParseError);
  EXPECT_EQ(st.message(), "test_diag: malformed netlink message length");
  std::string tiny = Message(20, "");
  nlmsghdr h;
  std::memcpy(&h, tiny.data(), sizeof h);
  h.nlmsg_len = 4;  // shorter than its own header
  std::memcpy(tiny.data(), &h, sizeof h);
  WalkAll(tiny, &st, &done);
  EXPECT_EQ(st.code(), StatusCode::kParseError);
  // Fewer bytes than a header after a whole message: the message is read, the tail ignored.
  auto msgs = WalkAll(Message(20, "x") + std::string(7, '\1'), &st, &done);
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(msgs.size(), 1u);
}

// A seqpacket socket pair (message boundaries kept, end of file once closed) stands in for the
// netlink socket: each send is one receive.
class SocketPair {
 public:
  SocketPair() {
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds_), 0);
    timeval tv{0, 200 * 1000};
    ::setsockopt(fds_[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~SocketPair() {
    for (int fd : fds_)
      if (fd >= 0) ::close(fd);
  }
  void Send(const std::string& s) {
    ASSERT_EQ(::send(fds_[1], s.data(), s.size(), 0), ssize_t(s.size()));
  }
  void CloseWriter() {
    ::close(fds_[1]);
    fds_[1] = -1;
  }
  int reader() const { return fds_[0]; }

 private:
  int fds_[2] = {-1, -1};
};

Status ReceiveTypes(int fd, std::vector<uint16_t>* types) {
  NetlinkBuffer buf;
  return ReceiveNetlinkReply(fd, buf, kKind, [&](std::string_view part, bool* done) {
    NetlinkReplyWalker walk(part, kKind);
    NetlinkMessage m;
    while (walk.Next(&m)) types->push_back(m.type);
    *done = walk.done();
    return walk.status();
  });
}

TEST(NetlinkReplyTest, ReceiveReadsBuffersUntilDone) {
  SocketPair p;
  p.Send(Message(20, "a") + Message(21, "b"));
  p.Send(Message(22, "c") + Message(NLMSG_DONE, std::string(4, '\0')));
  p.Send(Message(23, "next reply"));  // not read: the reply ended
  std::vector<uint16_t> types;
  Status st = ReceiveTypes(p.reader(), &types);
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(types, (std::vector<uint16_t>{20, 21, 22}));
}

TEST(NetlinkReplyTest, ReceiveStopsAtTimeoutErrorsAndClosedSockets) {
  {
    SocketPair p;
    p.Send(Message(20, "a"));  // no NLMSG_DONE follows
    std::vector<uint16_t> types;
    Status st = ReceiveTypes(p.reader(), &types);
    EXPECT_EQ(st.code(), StatusCode::kTimeout);
    EXPECT_EQ(st.message(), "test_diag: no reply");
    EXPECT_EQ(types, (std::vector<uint16_t>{20}));
  }
  {
    SocketPair p;
    p.Send(Error(-EPERM));
    std::vector<uint16_t> types;
    EXPECT_EQ(ReceiveTypes(p.reader(), &types).code(), StatusCode::kIoError);
  }
  {
    SocketPair p;
    p.CloseWriter();
    std::vector<uint16_t> types;
    Status st = ReceiveTypes(p.reader(), &types);
    EXPECT_FALSE(st.ok());
    EXPECT_EQ(st.message(), "test_diag: socket closed");
  }
}

}  // namespace
}  // namespace gpudoctor
