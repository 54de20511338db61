// Child processes and ports for the end-to-end tests: a program started with execv whose output
// goes to a log file, stopped with SIGTERM and then SIGKILL; a free loopback port. Not
// thread-safe: one test thread owns each ChildProcess.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace gpudoctor::testing {

// A TCP port on 127.0.0.1 that was free a moment ago (bound, then released: another process may
// take it before the caller binds it).
int FreePort();

class ChildProcess {
 public:
  ChildProcess() = default;
  // Starts argv[0] (a path, no PATH lookup) with `env` added to the environment; standard input
  // is /dev/null, standard output and error go to `log` (created, truncated, mode 0600).
  ChildProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
               const std::string& log) {
    Start(argv, env, log);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() { Stop(); }

  void Start(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
             const std::string& log);
  // SIGTERM, then SIGKILL after `grace`. Returns the exit status; -1 when it died of a signal,
  // -2 when it had to be killed, -3 when nothing was running.
  int Stop(std::chrono::milliseconds grace = std::chrono::seconds(15));
  pid_t pid() const { return pid_; }
  // The log file's content so far.
  std::string Log() const;

 private:
  pid_t pid_ = -1;
  std::string log_;
};

}  // namespace gpudoctor::testing
