// systemd notification: with $NOTIFY_SOCKET set, SdNotify sends the state as one datagram to
// that socket (what systemd reads for Type=notify and WatchdogSec); without it, nothing is sent.
#include "watch/sd_notify.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "test_util.h"

namespace gpudoctor {
namespace {

class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    bound_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~NotifySocket() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  bool bound() const { return bound_; }
  // One datagram within `timeout_ms`, or "" when none came.
  std::string Receive(int timeout_ms) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) != 1) return "";
    char buf[512];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool bound_ = false;
};

TEST(SdNotifyTest, SendsEachStateToTheNotifySocketAndNothingWithoutIt) {
  testing::TempDir dir;
  NotifySocket socket(dir.path() + "/notify");
  ASSERT_TRUE(socket.bound());
  ::unsetenv("NOTIFY_SOCKET");
  SdNotify("READY=1");  // no socket named: a no-op
  EXPECT_EQ(socket.Receive(100), "");

  ::setenv("NOTIFY_SOCKET", (dir.path() + "/notify").c_str(), 1);
  SdNotify("READY=1");
  std::string got = socket.Receive(2000);
  if (got.empty()) {
    ::unsetenv("NOTIFY_SOCKET");
    GTEST_SKIP() << "libsystemd.so.0 not loadable here: SdNotify is a no-op by contract";
  }
  EXPECT_EQ(got, "READY=1");
  SdNotify("WATCHDOG=1");
  EXPECT_EQ(socket.Receive(2000), "WATCHDOG=1");
  ::unsetenv("NOTIFY_SOCKET");
}

}  // namespace
}  // namespace gpudoctor
