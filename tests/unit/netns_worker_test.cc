// Work started from a thread in a fresh network namespace (tests/net_test_env.h) runs in that
// namespace, and work started after it in the process's own, whatever idle workers the deadline
// runner's pool had before: a pooled worker has the namespace of the thread that started it.
// Without this the ICMP tests read replies in the wrong namespace when the whole suite runs in
// one process (ManyTargetsTest).
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <string>

#include "core/deadline.h"
#include "core/worker_pool.h"
#include "net_test_env.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

// The calling thread's network namespace ("net:[4026531840]"), or "" when unreadable.
std::string ThreadNetns() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/thread-self/ns/net", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

std::string NetnsOfWork() {
  auto in =
      RunWithDeadline([] { return ThreadNetns(); }, SteadyClock::now() + std::chrono::seconds(5));
  return in.value_or("timed out");
}

TEST(NetnsWorkerTest, WorkRunsInTheNamespaceOfTheThreadThatStartsIt) {
  const std::string outside = ThreadNetns();
  ASSERT_FALSE(outside.empty()) << "no /proc/thread-self/ns/net";
  // An idle worker of the outer namespace, as earlier tests leave.
  ASSERT_EQ(NetnsOfWork(), outside);
  ASSERT_TRUE(testing::WaitUntil([] { return IdleWorkerCount() >= 1; }));

  std::string inside, inside_work;
  std::string why;
  if (!testing::RunInFreshNetns(
          [&] {
            inside = ThreadNetns();
            inside_work = NetnsOfWork();
            // Leave an idle worker of the inner namespace behind.
            testing::WaitUntil([] { return IdleWorkerCount() >= 1; });
          },
          &why)) {
    GTEST_SKIP() << "needs a network namespace: " << why;
  }
  ASSERT_FALSE(inside.empty());
  EXPECT_NE(inside, outside);
  EXPECT_EQ(inside_work, inside);
  EXPECT_EQ(NetnsOfWork(), outside);
}

}  // namespace
}  // namespace gpudoctor
