// The network layer through the real binary: a bad --target is a config error (exit 3, naming
// the entry); a TCP target on a 127.0.0.1 listener is probed and reported in the JSON.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test_util.h"

namespace gpudoctor {
namespace {

using testing::RunGpudoctor;

TEST(NetE2eTest, BadTargetIsExit3NamingTheEntry) {
  auto r = RunGpudoctor({"check", "--target", "storage:70000"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("'storage:70000'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("out of range"), std::string::npos) << r.err;
}

TEST(NetE2eTest, ClosedLoopbackPortIsReachableNotAFailure) {
  uint16_t port = 0;
  int fd = testing::BindLoopback(0, &port);
  std::string target = "127.0.0.1:" + std::to_string(port);
  close(fd);  // nothing listens: connections are refused (RST)
  auto r = RunGpudoctor({"check", "--json", "--probes", "reachability", "--target", target});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\"reachability\""), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("net.loss"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gpudoctor
