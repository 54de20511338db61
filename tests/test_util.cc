#include "test_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace gpudoctor::testing {
namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "gpudoctor-test-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void TempDir::Write(const std::string& rel, const std::string& content) const {
  fs::path p = fs::path(path_) / rel;
  fs::create_directories(p.parent_path());
  std::ofstream f(p, std::ios::binary);
  f << content;
}

void TempDir::MakeFifo(const std::string& rel) const {
  fs::path p = fs::path(path_) / rel;
  fs::create_directories(p.parent_path());
  fs::remove(p);
  if (mkfifo(p.c_str(), 0644) != 0) throw std::runtime_error("mkfifo failed");
}

void TempDir::MakeDir(const std::string& rel) const {
  fs::create_directories(fs::path(path_) / rel);
}

void TempDir::Symlink(const std::string& target, const std::string& rel) const {
  fs::path p = fs::path(path_) / rel;
  fs::create_directories(p.parent_path());
  fs::remove(p);
  fs::create_symlink(target, p);
}

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int BindLoopback(int backlog, uint16_t* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      (backlog > 0 && listen(fd, backlog) != 0) ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(fd);
    throw std::runtime_error("binding 127.0.0.1 failed");
  }
  *port = ntohs(a.sin_port);
  return fd;
}

bool WaitUntil(const std::function<bool()>& cond, std::chrono::milliseconds timeout,
               std::chrono::milliseconds every) {
  auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(every);
  }
  return cond();
}

std::string FixturePath(const std::string& rel) {
  return std::string(GPUDOCTOR_FIXTURES) + "/" + rel;
}

RunResult RunProgram(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                     const std::map<std::string, std::string>& env, const std::string& stdin_data) {
  int out_pipe[2], err_pipe[2], in_pipe[2];
  if (pipe(out_pipe) || pipe(err_pipe) || pipe(in_pipe)) throw std::runtime_error("pipe failed");
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
      close(fd);
    }
    setpgid(0, 0);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  signal(SIGPIPE, SIG_IGN);
  if (!stdin_data.empty()) {
    size_t off = 0;
    while (off < stdin_data.size()) {
      ssize_t n = write(in_pipe[1], stdin_data.data() + off, stdin_data.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
  }
  close(in_pipe[1]);

  RunResult r;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  bool killed = false;
  while (open_fds > 0) {
    auto left = timeout - std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start);
    if (left.count() <= 0) {
      kill(-pid, SIGKILL);
      killed = true;
      break;
    }
    int rc = poll(fds, 2, static_cast<int>(left.count()));
    if (rc < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (auto& p : fds) {
    if (p.fd >= 0) close(p.fd);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!killed && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

RunResult RunGpudoctor(const std::vector<std::string>& args, std::chrono::milliseconds timeout,
                       const std::map<std::string, std::string>& env,
                       const std::string& stdin_data) {
  // Tests may only send traffic to 127.0.0.1 or to hosts in namespaces they create. A check with
  // every probe on the real host would ping its default gateway: demand an explicit choice.
  bool is_check = !args.empty() && args[0] == "check";
  bool chooses = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--probes" || args[i] == "--target" || args[i] == "--reference") chooses = true;
    if (args[i] == "--connect") chooses = true;  // asks a watch, runs no probe
    if (args[i] == "--skip-probes" && i + 1 < args.size() &&
        args[i + 1].find("reachability") != std::string::npos) {
      chooses = true;
    }
  }
  bool fails_early = std::find(args.begin(), args.end(), "--config") != args.end();
  if (is_check && !chooses && !fails_early && args.size() > 1) {
    throw std::logic_error(
        "test runs `check` with the reachability probe on the real host (it would probe the "
        "default gateway): pass --probes, --target or --skip-probes reachability");
  }
  std::vector<std::string> argv = {GPUDOCTOR_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProgram(argv, timeout, env, stdin_data);
}

std::string FakeNvmlLib(bool minimal) {
  return std::string(GPUDOCTOR_BUILD_DIR) + (minimal ? "/tests/fake_nvml/minimal/libnvidia-ml.so.1"
                                                     : "/tests/fake_nvml/libnvidia-ml.so.1");
}

}  // namespace gpudoctor::testing
