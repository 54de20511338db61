// The real `gpudoctor watch` (fake NVML) on loopback under hostile HTTP clients, and SIGHUP
// reloads that change what the running daemon serves:
// - 200 hostile connections (slow-loris trickling a head byte by byte, and clients sending
//   endless header lines) while a scraper with the token polls /metrics and /healthz: every
//   request is answered promptly and the daemon's anonymous RSS (heap and stacks) grows by less
//   than 5 MiB (file-backed code pages are left out: watch releases them after set-up and the
//   first tick, and serving requests maps them back from the page cache);
// - SIGHUP with a rewritten token file revokes the old token (401) at once; SIGHUP with a new
//   listen address moves the server; a new [[notify.webhook]] starts receiving; an address that
//   cannot be bound refuses the whole reload and the old config keeps serving.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "atomic_file.h"
#include "child_process.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;
using testing::FixturePath;

using testing::FreePort;

bool WaitFor(const std::function<bool()>& cond, double timeout_s) {
  auto end = Clock::now() + std::chrono::milliseconds(static_cast<int>(timeout_s * 1000));
  while (Clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return cond();
}

int ConnectNonBlocking(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);  // EINPROGRESS
  return fd;
}

long AnonRssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("RssAnon:", 0) == 0) return std::stol(line.substr(8));
  }
  return -1;
}

class HttpAbuseE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/http_abuse_e2e_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    WriteToken("old-token");
    SetScenario("h100_busy.scenario");
  }
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      bool gone = WaitFor([&] { return ::waitpid(pid_, nullptr, WNOHANG) == pid_; }, 10);
      if (!gone) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
      }
    }
    std::filesystem::remove_all(dir_);
  }
  void SetScenario(const std::string& base) {
    testing::WriteScenario(dir_ + "/live.scenario", base);
  }
  void WriteToken(const std::string& token) {
    std::string path = dir_ + "/token";
    std::ofstream(path + ".tmp") << token << "\n";
    std::filesystem::permissions(
        path + ".tmp", std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    std::rename((path + ".tmp").c_str(), path.c_str());
  }
  void WriteConfig(int port, const std::string& extra = "") {
    std::ofstream(dir_ + "/gpudoctor.toml.tmp")
        << "[watch]\nlisten = \"127.0.0.1:" << port << "\"\ntoken_file = \"" << dir_ << "/token\"\n"
        << extra << "\n[finding.\"gpu.thermal\"]\nfor_s = 0\nresolve_after_s = 1\n";
    std::rename((dir_ + "/gpudoctor.toml.tmp").c_str(), (dir_ + "/gpudoctor.toml").c_str());
  }
  void StartWatch() {
    port_ = FreePort();
    WriteConfig(port_);
    pid_ = ::fork();
    if (pid_ == 0) {
      int fd = ::open((dir_ + "/watch.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::setenv("FAKE_NVML_SCENARIO", (dir_ + "/live.scenario").c_str(), 1);
      std::string bin = GPUDOCTOR_BIN,
                  lib = std::string(GPUDOCTOR_BUILD_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1";
      std::string config = dir_ + "/gpudoctor.toml", db = dir_ + "/h.db";
      std::string sysfs = FixturePath("sysfs/hgx_h100");
      ::execl(bin.c_str(), bin.c_str(), "watch", "--interval", "1", "--config", config.c_str(),
              "--db", db.c_str(), "--probes", "nvml,pci_gpu", "--nvml-lib", lib.c_str(),
              "--path.sysfs", sysfs.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ASSERT_TRUE(WaitFor([&] { return Get(port_, "/healthz") == 200; }, 30)) << Log();
  }
  std::string Log() const { return testing::ReadFileOrDie(dir_ + "/watch.log"); }
  // Status of one GET on a fresh connection (-1: no answer); body in `body`.
  int Get(int port, const std::string& path, const std::string& token = "",
          double* seconds = nullptr, std::string* body = nullptr) {
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(2, 0);
    c.set_read_timeout(5, 0);
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    auto start = Clock::now();
    auto r = c.Get(path.c_str(), h);
    if (seconds) *seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (body && r) *body = r->body;
    if (!r) last_error_ = httplib::to_string(r.error());
    return r ? r->status : -1;
  }
  void Hup() { ::kill(pid_, SIGHUP); }
  size_t CountInLog(const std::string& needle) const {
    std::string log = Log();
    size_t n = 0;
    for (size_t p = log.find(needle); p != std::string::npos; p = log.find(needle, p + 1)) ++n;
    return n;
  }

  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::string last_error_;  // of the last Get without an answer
};

// 200 hostile connections: half trickle a head one byte at a time, half send header lines as
// fast as they can (and reconnect whenever the server closes them).
class Hostiles {
 public:
  explicit Hostiles(int port) : port_(port), thread_([this] { Run(); }) {}
  ~Hostiles() {
    stop_ = true;
    thread_.join();
  }
  uint64_t reconnects() const { return reconnects_; }

 private:
  void Run() {
    const int kSlow = 100, kHuge = 100;
    const std::string kStart = "GET /metrics HTTP/1.1\r\nX-Slow: ";
    std::vector<int> fds(kSlow + kHuge, -1);
    std::string huge;
    for (int i = 0; i < 16; ++i)
      huge += "X-Huge-" + std::to_string(i) + ": " + std::string(1000, 'h') + "\r\n";
    auto open = [&](size_t i) {
      if (fds[i] >= 0) ::close(fds[i]);
      fds[i] = ConnectNonBlocking(port_);
      ++reconnects_;
    };
    for (size_t i = 0; i < fds.size(); ++i) open(i);
    // Until every non-blocking connect has completed (writable), at most 5 s; one that has not
    // is found gone below and reconnected.
    auto connected = Clock::now() + std::chrono::seconds(5);
    for (int fd : fds) {
      if (fd < 0) continue;
      pollfd p{fd, POLLOUT, 0};
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(connected - Clock::now());
      if (left.count() > 0) ::poll(&p, 1, static_cast<int>(left.count()));
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      ::send(fds[i], kStart.data(), kStart.size(), MSG_NOSIGNAL);
    }
    while (!stop_) {
      for (size_t i = 0; i < fds.size(); ++i) {
        bool slow = i < static_cast<size_t>(kSlow);
        ssize_t n = slow ? ::send(fds[i], "a", 1, MSG_NOSIGNAL)
                         : ::send(fds[i], huge.data(), huge.size(), MSG_NOSIGNAL);
        char sink[4096];
        ssize_t r = ::recv(fds[i], sink, sizeof sink, MSG_DONTWAIT);
        bool gone = (n < 0 && errno != EAGAIN) || r == 0 || (r < 0 && errno != EAGAIN);
        if (gone) {
          open(i);
          ::send(fds[i], kStart.data(), kStart.size(), MSG_NOSIGNAL);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the trickle's pace
    }
    for (int fd : fds) ::close(fd);
  }

  int port_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> reconnects_{0};
  std::thread thread_;
};

TEST_F(HttpAbuseE2eTest, HostileConnectionsNeitherStarveScrapesNorGrowMemory) {
  StartWatch();
  for (int i = 0; i < 20; ++i) Get(port_, "/metrics", "old-token");  // buffers warm
  long before = AnonRssKb(pid_);
  ASSERT_GT(before, 0);
  int asked = 0, answered = 0;
  double worst = 0;
  std::string failures;
  {
    Hostiles hostiles(port_);
    auto end = Clock::now() + std::chrono::seconds(8);
    while (Clock::now() < end) {
      for (const char* path : {"/metrics", "/healthz"}) {
        double s = 0;
        ++asked;
        int status = Get(port_, path, path[1] == 'm' ? "old-token" : "", &s);
        if (status == 200) ++answered;
        if (status != 200)
          failures += std::string(path) + " " + std::to_string(status) + " " + last_error_ + "; ";
        worst = std::max(worst, s);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the scraper's pace
    }
    EXPECT_GT(hostiles.reconnects(), 200u) << "the server never closed a hostile connection";
  }
  long after = AnonRssKb(pid_);
  EXPECT_EQ(answered, asked) << failures << Log();
  EXPECT_LT(worst, 1.0);
  EXPECT_LT(after - before, 5 * 1024) << "anonymous RSS " << before << " kB -> " << after << " kB";
}

TEST_F(HttpAbuseE2eTest, SighupRevokesTheTokenMovesTheListenerAndRebuildsNotifiers) {
  StartWatch();
  EXPECT_EQ(Get(port_, "/metrics", "old-token"), 200);
  // Revoke: the same token file, new content.
  WriteToken("new-token");
  Hup();
  ASSERT_TRUE(WaitFor([&] { return Get(port_, "/metrics", "old-token") == 401; }, 10)) << Log();
  EXPECT_EQ(Get(port_, "/metrics", "new-token"), 200);
  EXPECT_EQ(CountInLog("config reloaded (token)"), 1u) << Log();

  // A new address and a webhook: the server moves, the notifier is built.
  std::mutex mu;
  std::vector<json> bodies;
  httplib::Server rx;
  rx.Post("/hook", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu);
    bodies.push_back(json::parse(req.body, nullptr, false));
    res.set_content("ok", "text/plain");
  });
  int rx_port = rx.bind_to_any_port("127.0.0.1");
  std::thread rx_thread([&] { rx.listen_after_bind(); });
  int port2 = FreePort();
  WriteConfig(port2, "dcgm_compat = true\n\n[[notify.webhook]]\nurl = \"http://127.0.0.1:" +
                         std::to_string(rx_port) + "/hook\"\n");
  Hup();
  EXPECT_TRUE(WaitFor([&] { return Get(port2, "/metrics", "new-token") == 200; }, 10)) << Log();
  EXPECT_TRUE(WaitFor([&] { return Get(port_, "/healthz") == -1; }, 10)) << "old port still open";
  std::string metrics;
  Get(port2, "/metrics", "new-token", nullptr, &metrics);
  EXPECT_NE(metrics.find("DCGM_FI_DEV_GPU_TEMP{"), std::string::npos) << "dcgm_compat not applied";
  SetScenario("thermal.scenario");
  bool fired = WaitFor(
      [&] {
        std::lock_guard<std::mutex> lock(mu);
        return !bodies.empty();
      },
      20);
  EXPECT_TRUE(fired) << Log();

  // An address that cannot be bound: the whole reload is refused, the old config serves on.
  int busy_port = 0;
  {
    uint16_t p = 0;
    int busy = testing::BindLoopback(16, &p);
    busy_port = p;
    WriteToken("third-token");
    WriteConfig(busy_port);
    Hup();
    EXPECT_TRUE(WaitFor([&] { return CountInLog("config reload rejected") == 1; }, 10)) << Log();
    ::close(busy);
  }
  EXPECT_EQ(Get(port2, "/metrics", "new-token"), 200) << "the refused reload changed the token";
  EXPECT_EQ(Get(port2, "/metrics", "third-token"), 401);
  std::string log = Log();
  EXPECT_NE(log.find("config reload rejected, keeping the old one: cannot listen on 127.0.0.1:" +
                     std::to_string(busy_port) + ": in use"),
            std::string::npos)
      << log;
  rx.stop();
  rx_thread.join();
}

TEST_F(HttpAbuseE2eTest, SighupRefusesKeysItCannotApplyLive) {
  StartWatch();
  WriteConfig(port_, "raw_retention_h = 12\n");
  WriteToken("new-token");
  Hup();
  EXPECT_TRUE(WaitFor([&] { return CountInLog("config reload rejected") == 1; }, 10)) << Log();
  EXPECT_NE(Log().find("[watch] raw_retention_h cannot change while watch runs"), std::string::npos)
      << Log();
  EXPECT_EQ(Get(port_, "/metrics", "old-token"), 200) << "a refused reload must change nothing";
}

}  // namespace
}  // namespace gpudoctor
