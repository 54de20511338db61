// Test helpers shared by unit and end-to-end tests: temporary fixture trees and running the
// built binary with a timeout. Test-only code.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace gpudoctor::testing {

// A temporary directory removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // Writes `content` to path()/rel, creating parent directories.
  void Write(const std::string& rel, const std::string& content) const;
  void MakeFifo(const std::string& rel) const;
  void MakeDir(const std::string& rel) const;
  void Symlink(const std::string& target, const std::string& rel) const;

 private:
  std::string path_;
};

std::string ReadFileOrDie(const std::string& path);

// A TCP socket bound to 127.0.0.1 on a kernel-chosen port, listening with `backlog` (0: bound
// only, nothing accepts). Returns the fd (caller closes) and sets *port.
// The fake libnvidia-ml.so.1 built from tests/fake_nvml: the full variant, or with `minimal` the
// one without nvmlDeviceGetFieldValues (as older and some virtualised drivers).
std::string FakeNvmlLib(bool minimal = false);

int BindLoopback(int backlog, uint16_t* port);
std::string FixturePath(const std::string& rel);  // tests/fixtures/<rel>

// Polls `cond` every `every` until it holds or `timeout` has passed; returns whether it held. For
// waiting on something that happens in another thread or process (a server up, a file written, a
// tick processed) instead of sleeping a fixed time: give a generous timeout, the wait ends as
// soon as the condition holds.
bool WaitUntil(const std::function<bool()>& cond,
               std::chrono::milliseconds timeout = std::chrono::seconds(10),
               std::chrono::milliseconds every = std::chrono::milliseconds(10));

struct RunResult {
  int exit_code = -1;  // -1: killed by timeout or by a signal
  std::string out, err;
  double seconds = 0;
};

// Runs argv (argv[0] is the program path) with extra environment entries, no stdin, and kills
// it after `timeout`.
RunResult RunProgram(const std::vector<std::string>& argv,
                     std::chrono::milliseconds timeout = std::chrono::seconds(30),
                     const std::map<std::string, std::string>& env = {},
                     const std::string& stdin_data = "");

// Runs the built gpudoctor binary with `args`.
RunResult RunGpudoctor(const std::vector<std::string>& args,
                       std::chrono::milliseconds timeout = std::chrono::seconds(30),
                       const std::map<std::string, std::string>& env = {},
                       const std::string& stdin_data = "");

}  // namespace gpudoctor::testing
