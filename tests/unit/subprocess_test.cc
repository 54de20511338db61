// RunProcess and ReapKilledChild (core/subprocess.h): what a child inherits from the daemon, and
// that the caller is never held by a child that will not go.
#include "core/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

namespace gpudoctor {
namespace {

using Clock = std::chrono::steady_clock;

// The hex mask of `field` ("SigBlk", "SigIgn") in the child's /proc/self/status.
uint64_t ChildMask(const std::string& status_text, const std::string& field) {
  size_t at = status_text.find(field + ":");
  if (at == std::string::npos) return ~uint64_t{0};
  return std::stoull(status_text.substr(at + field.size() + 1), nullptr, 16);
}

// watch blocks SIGTERM, SIGINT and SIGHUP on every thread (its signal thread takes them) and a
// daemon may ignore SIGPIPE: a child must start with neither, or systemd's SIGTERM and any
// `timeout` inside the child are lost.
TEST(RunProcessTest, TheChildStartsWithNoSignalBlockedOrIgnored) {
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &block, &old), 0);
  auto old_pipe = signal(SIGPIPE, SIG_IGN);
  auto r = RunProcess({"cat", "/proc/self/status"}, 5);
  signal(SIGPIPE, old_pipe);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(ChildMask(r->out, "SigBlk"), 0u) << r->out;
  EXPECT_EQ(ChildMask(r->out, "SigIgn") & (uint64_t{1} << (SIGPIPE - 1)), 0u) << r->out;
}

// A child that does not go when asked (here: not killed at all, so it lives on): the caller gets
// control back after a second, and the child is still reaped once it ends (no zombie for good).
TEST(RunProcessTest, ReapingAChildThatDoesNotDieNeverHoldsTheCaller) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execlp("sleep", "sleep", "3", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  auto start = Clock::now();
  EXPECT_FALSE(ReapKilledChild(pid, &status));
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 1.5);
  ::kill(pid, SIGKILL);
  // The reaper thread collects it: the pid disappears (a zombie would still answer kill 0).
  bool gone = false;
  for (int i = 0; i < 300 && !gone; ++i) {
    gone = ::kill(pid, 0) != 0 && errno == ESRCH;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone);
  // A child killed and reaped at once.
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  ::kill(pid, SIGKILL);
  ASSERT_TRUE(ReapKilledChild(pid, &status));
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

TEST(RunProcessTest, AChildThatOutlivesItsTimeoutIsKilledAndNamed) {
  auto start = Clock::now();
  auto r = RunProcess({"sleep", "30"}, 0.3);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 2.0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kTimeout);
  auto missing = RunProcess({"/nonexistent/gpudoctor-test-program"}, 5);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace gpudoctor
