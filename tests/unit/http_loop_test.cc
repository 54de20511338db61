// The connection layer of the watch HTTP server (serve/http_loop.h) with handlers of its own:
// shutdown drops queued requests instead of running them, the urgent lane keeps a worker for the
// scrape, a request with a body is refused with the right status, and a process out of
// descriptors rests its listener instead of spinning.
#include "serve/http_loop.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "loopback_client.h"

namespace gpudoctor {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

int Connect(int port) { return testing::ConnectLoopback(port); }

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// The first answer's head and body (up to `limit_s`): "" when none came.
std::string ReadAnswer(int fd, double limit_s) {
  std::string got;
  auto start = Clock::now();
  while (SecondsSince(start) < limit_s) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
    size_t head_end = got.find("\r\n\r\n");
    size_t cl = got.find("Content-Length: ");
    if (head_end != std::string::npos && cl != std::string::npos && cl < head_end) {
      size_t len = std::stoul(got.substr(cl + 16));
      if (got.size() >= head_end + 4 + len) break;
    }
  }
  return got;
}

// The stat file of this process's first thread named `name`, open (-1 when there is none): read
// with ThreadCpuSeconds, which needs no new descriptor.
int OpenThreadStat(const std::string& name) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string n;
    if (std::getline(comm, n) && n == name) {
      return ::open((task.path() / "stat").c_str(), O_RDONLY | O_CLOEXEC);
    }
  }
  return -1;
}

// CPU seconds (user + system) of the thread whose stat file `fd` is.
double ThreadCpuSeconds(int fd) {
  char buf[1024];
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return -1;
  std::string text(buf, static_cast<size_t>(n));
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string f;
  long ticks = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14 || i == 15) ticks += std::stol(f);
  }
  return static_cast<double>(ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Descriptors taken and a descriptor limit lowered, given back however the test ends.
struct DescriptorsTaken {
  rlimit saved{};
  std::vector<int> fds;
  ~DescriptorsTaken() { GiveBack(); }
  void GiveBack() {
    for (int fd : fds) ::close(fd);
    fds.clear();
    if (saved.rlim_cur != 0) ::setrlimit(RLIMIT_NOFILE, &saved);
    saved = {};
  }
};

HttpResponse Text(std::string body) {
  HttpResponse r;
  r.content_type = "text/plain";
  r.body = std::move(body);
  return r;
}

TEST(HttpLoopTest, StopDropsQueuedRequestsAndWaitsOnlyForRunningOnes) {
  std::atomic<int> handled{0};
  HttpLoopOptions o;
  o.workers = 1;
  auto loop = HttpLoop::Start(
      "127.0.0.1", 0, o, [](const HttpRequest&) { return std::nullopt; },
      [&](const HttpRequest&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        ++handled;
        return Text("slow");
      });
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  std::vector<int> fds;
  for (int i = 0; i < 12; ++i) {
    int fd = Connect((*loop)->port());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(SendAll(fd, "GET /q HTTP/1.1\r\nHost: x\r\n\r\n"));
    fds.push_back(fd);
  }
  // Every request queued behind the one running (12 x 0.3 s = 3.6 s if all ran).
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  auto start = Clock::now();
  (*loop)->Stop();
  EXPECT_LT(SecondsSince(start), 1.5);
  EXPECT_LE(handled.load(), 2);
  for (int fd : fds) ::close(fd);
}

TEST(HttpLoopTest, PipelinedBytesWaitingCountInTheMemoryBudget) {
  HttpLoopOptions o;
  o.workers = 1;
  o.head_budget_bytes = 64 * 1024;
  std::atomic<bool> release{false};
  auto loop = HttpLoop::Start(
      "127.0.0.1", 0, o, [](const HttpRequest&) { return std::nullopt; },
      [&](const HttpRequest&) {
        for (int i = 0; i < 300 && !release.load(); ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return Text("ok");
      });
  ASSERT_TRUE(loop.ok());
  // 8 clients x ~15 KiB of requests pipelined behind one being served: 120 KiB held while the
  // connections wait for their answers, 64 KiB allowed.
  std::string pipelined;
  while (pipelined.size() < 15 * 1024) {
    pipelined += "GET /q HTTP/1.1\r\nX-Pad: " + std::string(1000, 'p') + "\r\n\r\n";
  }
  std::vector<int> fds;
  for (int i = 0; i < 8; ++i) {
    int fd = Connect((*loop)->port());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(SendAll(fd, pipelined));
    fds.push_back(fd);
  }
  auto start = Clock::now();
  while ((*loop)->stats().evicted < 3 && SecondsSince(start) < 3) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GE((*loop)->stats().evicted, 3u);
  release = true;
  for (int fd : fds) ::close(fd);
}

TEST(HttpLoopTest, UrgentRequestsGoFirstAndAlwaysFindAWorker) {
  HttpLoopOptions o;
  o.workers = 2;
  o.urgent = [](const HttpRequest& r) { return r.path == "/metrics"; };
  std::atomic<int> slow_running{0}, slow_peak{0};
  auto loop = HttpLoop::Start(
      "127.0.0.1", 0, o, [](const HttpRequest&) { return std::nullopt; },
      [&](const HttpRequest& r) {
        if (r.path == "/metrics") return Text("scrape");
        int now = ++slow_running;
        int peak = slow_peak.load();
        while (now > peak && !slow_peak.compare_exchange_weak(peak, now)) {
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2500));
        --slow_running;
        return Text("history");
      });
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  std::vector<int> slow;
  for (int i = 0; i < 3; ++i) {
    int fd = Connect((*loop)->port());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(SendAll(fd, "GET /api/v1/history HTTP/1.1\r\nHost: x\r\n\r\n"));
    slow.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  int scrape = Connect((*loop)->port());
  ASSERT_GE(scrape, 0);
  auto start = Clock::now();
  ASSERT_TRUE(SendAll(scrape, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::string answer = ReadAnswer(scrape, 5);
  // One worker is kept for the scrape: it does not wait for a history query to finish (2.5 s).
  EXPECT_LT(SecondsSince(start), 1.5);
  EXPECT_NE(answer.find("scrape"), std::string::npos) << answer;
  EXPECT_EQ(slow_peak.load(), 1);  // the other requests took turns on the one other worker
  for (int fd : slow) EXPECT_NE(ReadAnswer(fd, 10).find("history"), std::string::npos);
  ::close(scrape);
  for (int fd : slow) ::close(fd);
}

TEST(HttpLoopTest, ABodyIsRefusedWith400WhereTheMethodIsAllowedAnd405Elsewhere) {
  HttpLoopOptions o;
  o.allowed_methods = [](const HttpRequest& r) {
    return std::string(r.path.starts_with("/api/v1/job/") ? "POST" : "GET, HEAD");
  };
  auto loop = HttpLoop::Start(
      "127.0.0.1", 0, o, [](const HttpRequest&) { return std::nullopt; },
      [](const HttpRequest&) { return Text("ok"); });
  ASSERT_TRUE(loop.ok());
  int fd = Connect((*loop)->port());
  ASSERT_TRUE(SendAll(fd,
                      "POST /api/v1/job/train/step?step=3 HTTP/1.1\r\nHost: x\r\n"
                      "Content-Length: 1\r\n\r\nx"));
  std::string post = ReadAnswer(fd, 3);
  ::close(fd);
  EXPECT_EQ(post.rfind("HTTP/1.1 400 ", 0), 0u) << post;
  EXPECT_NE(post.find("query string"), std::string::npos) << post;
  EXPECT_EQ(post.find("Allow:"), std::string::npos) << post;
  fd = Connect((*loop)->port());
  ASSERT_TRUE(SendAll(fd, "PUT /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx"));
  std::string put = ReadAnswer(fd, 3);
  ::close(fd);
  EXPECT_EQ(put.rfind("HTTP/1.1 405 ", 0), 0u) << put;
  EXPECT_NE(put.find("Allow: GET, HEAD"), std::string::npos) << put;
  fd = Connect((*loop)->port());
  ASSERT_TRUE(SendAll(fd, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx"));
  std::string post_elsewhere = ReadAnswer(fd, 3);
  ::close(fd);
  EXPECT_EQ(post_elsewhere.rfind("HTTP/1.1 405 ", 0), 0u) << post_elsewhere;
  fd = Connect((*loop)->port());
  ASSERT_TRUE(
      SendAll(fd, "GET /api/v1/job/x/step HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx"));
  std::string get_step = ReadAnswer(fd, 3);
  ::close(fd);
  EXPECT_EQ(get_step.rfind("HTTP/1.1 405 ", 0), 0u) << get_step;
  EXPECT_NE(get_step.find("Allow: POST"), std::string::npos) << get_step;
}

TEST(HttpLoopTest, OutOfDescriptorsTheListenerRestsInsteadOfSpinning) {
  auto loop = HttpLoop::Start(
      "127.0.0.1", 0, {}, [](const HttpRequest&) { return std::nullopt; },
      [](const HttpRequest&) { return Text("ok"); });
  ASSERT_TRUE(loop.ok());
  const int port = (*loop)->port();
  // The loop thread names itself once it runs: wait for it.
  int loop_stat = -1;
  for (int i = 0; i < 200 && loop_stat < 0; ++i) {
    loop_stat = OpenThreadStat("gd-http");
    if (loop_stat < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(loop_stat, 0);
  std::vector<int> clients;
  {
    // A small table, then every free slot of it taken but a few for the clients' sockets.
    DescriptorsTaken taken;
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &taken.saved), 0);
    rlimit small = taken.saved;
    small.rlim_cur = std::min<rlim_t>(taken.saved.rlim_cur, 512);
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &small), 0);
    taken.fds.push_back(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    ASSERT_GE(taken.fds[0], 0);
    for (int fd = ::dup(taken.fds[0]); fd >= 0; fd = ::dup(taken.fds[0])) taken.fds.push_back(fd);
    for (int i = 0; i < 8; ++i) {
      ::close(taken.fds.back());
      taken.fds.pop_back();
    }
    for (int i = 0; i < 8; ++i) {
      int fd = Connect(port);  // the kernel completes the handshake; accept(2) gets EMFILE
      if (fd >= 0) clients.push_back(fd);
    }
    ASSERT_FALSE(clients.empty());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const double cpu0 = ThreadCpuSeconds(loop_stat);
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    const double cpu = ThreadCpuSeconds(loop_stat) - cpu0;
    EXPECT_GT((*loop)->stats().accept_paused, 0u);
    // A spinning loop would take most of a core for the second; resting, a few wake-ups.
    EXPECT_LT(cpu, 0.3);
  }
  ::close(loop_stat);
  // Descriptors back: the waiting clients are accepted and answered.
  ASSERT_TRUE(SendAll(clients[0], "GET /x HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_NE(ReadAnswer(clients[0], 3).find("ok"), std::string::npos);
  for (int fd : clients) ::close(fd);
}

}  // namespace
}  // namespace gpudoctor
