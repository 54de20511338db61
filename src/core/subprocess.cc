#include "core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <system_error>
#include <thread>

namespace gpudoctor {

bool ReapKilledChild(int pid, int* status) {
  for (int i = 0; i < 100; ++i) {
    const pid_t w = waitpid(pid, status, WNOHANG);
    if (w == pid || (w < 0 && errno == ECHILD)) return w == pid;
    usleep(10000);
  }
  try {
    std::thread([pid] {
      int ignored = 0;
      while (waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
      }
    }).detach();
  } catch (const std::system_error&) {
    // No thread: the zombie stays until this process exits; the caller still does not wait.
  }
  return false;
}

Result<ProcessResult> RunProcess(const std::vector<std::string>& argv, double timeout_s,
                                 size_t max_output) {
  if (argv.empty()) return InvalidArgument("empty command");
  int out_pipe[2], err_pipe[2], exec_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return IoError("pipe: " + std::string(strerror(errno)));
  if (pipe2(err_pipe, O_CLOEXEC) != 0 || pipe2(exec_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return IoError("pipe: " + std::string(strerror(errno)));
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return IoError("fork: " + std::string(strerror(errno)));
  if (pid == 0) {
    // Only async-signal-safe calls from here on (a fork of a threaded process).
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    setpgid(0, 0);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    execvp(args[0], args.data());
    int e = errno;
    ssize_t ignored = write(exec_pipe[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(exec_pipe[1]);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  // The exec's outcome: the pipe closes at a successful exec, or carries its errno. An exec of a
  // program on a hung mount never returns: waited for only until the deadline.
  int exec_errno = 0;
  bool exec_failed = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    pollfd p{exec_pipe[0], POLLIN, 0};
    const int n = left > 0 ? poll(&p, 1, static_cast<int>(left)) : 0;
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) {
      exec_failed = read(exec_pipe[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno;
    }
    break;  // read, closed, or out of time (the loop below sees the deadline passed)
  }
  close(exec_pipe[0]);
  ProcessResult r;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  bool* truncated[2] = {&r.out_truncated, &r.err_truncated};
  int open_fds = 2;
  bool timed_out = false;
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    int n = poll(fds, 2, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      char buf[4096];
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        size_t room = max_output - std::min(max_output, sinks[i]->size());
        size_t take = std::min(room, static_cast<size_t>(got));
        sinks[i]->append(buf, take);
        if (take < static_cast<size_t>(got)) *truncated[i] = true;
      } else if (got == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  if (timed_out) kill(-pid, SIGKILL);
  int status = 0;
  // Reap: a child that exited, or one killed just now. One that closed its output but lives on
  // gets a second, then SIGKILL; one that cannot die is left to a reaper (ReapKilledChild).
  bool reaped = false;
  for (int i = 0; i < 100 && !reaped; ++i) {
    reaped = waitpid(pid, &status, WNOHANG) == pid;
    if (!reaped) usleep(10000);
  }
  if (!reaped) {
    kill(-pid, SIGKILL);
    if (!ReapKilledChild(pid, &status)) status = SIGKILL;  // as if killed: exit_code -1
  }
  if (exec_failed) {
    return NotFound(argv[0] + ": cannot run (" + std::string(strerror(exec_errno)) + ")");
  }
  if (timed_out) {
    return TimeoutError(argv[0] + " did not finish within " +
                        std::to_string(timeout_s).substr(0, 4) + " s");
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace gpudoctor
