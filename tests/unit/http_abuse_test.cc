// Hostile clients against the watch HTTP server before authentication (serve/http_loop.h):
// oversized heads are refused and closed, slow and idle connections cost no worker and never
// starve /healthz or an authenticated scrape, a flood of connections makes room for new ones.
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "loopback_client.h"
#include "serve/http_loop.h"
#include "serve/http_server.h"
#include "watch_tick_util.h"

namespace gpudoctor {
namespace {

using Clock = std::chrono::steady_clock;

int Connect(int port) { return testing::ConnectLoopback(port); }

// Sends what fits without blocking for long; false once the peer is gone.
bool Send(int fd, std::string_view data) {
  while (!data.empty()) {
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, 2000) <= 0) return false;
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Everything the server sends until it closes (or `limit_s` passes); `closed` tells which.
std::string ReadUntilClose(int fd, double limit_s, bool* closed) {
  std::string got;
  auto end = Clock::now() + std::chrono::milliseconds(static_cast<int>(limit_s * 1000));
  *closed = false;
  while (Clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      *closed = true;
      break;
    }
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

class HttpAbuseTest : public ::testing::Test {
 protected:
  void StartServer(HttpOptions o) {
    o.listen = "127.0.0.1:0";
    auto s = WatchHttpServer::Start(
        o, [this] { return tick_; }, nullptr);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
  }
  int port() const { return server_->port(); }
  // One GET on a fresh connection; the status (-1: no answer) and how long it took.
  int Get(const std::string& path, double* seconds, const std::string& token = "") {
    httplib::Client c("127.0.0.1", port());
    c.set_connection_timeout(2, 0);
    c.set_read_timeout(5, 0);
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    auto start = Clock::now();
    auto r = c.Get(path.c_str(), h);
    if (seconds) *seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return r ? r->status : -1;
  }
  std::shared_ptr<const TickResult> tick_ = testing::MakeTick();
  std::unique_ptr<WatchHttpServer> server_;
};

TEST_F(HttpAbuseTest, OversizedHeadsGet431And414AndAreClosed) {
  StartServer({});
  // Endless small header lines: refused once the head passes 32 KiB.
  int fd = Connect(port());
  ASSERT_GE(fd, 0);
  std::string head = "GET /metrics HTTP/1.1\r\n";
  for (int i = 0; i < 40; ++i)
    head += "X-Pad-" + std::to_string(i) + ": " + std::string(1000, 'a') + "\r\n";
  Send(fd, head);  // may fail half-way once the server has closed
  bool closed = false;
  std::string got = ReadUntilClose(fd, 5, &closed);
  ::close(fd);
  EXPECT_EQ(got.rfind("HTTP/1.1 431 ", 0), 0u) << got;
  EXPECT_NE(got.find("Connection: close"), std::string::npos) << got;
  EXPECT_TRUE(closed);
  // A request line over 8 KiB.
  fd = Connect(port());
  Send(fd, "GET /" + std::string(9000, 'a'));
  got = ReadUntilClose(fd, 5, &closed);
  ::close(fd);
  EXPECT_EQ(got.rfind("HTTP/1.1 414 ", 0), 0u) << got;
  EXPECT_TRUE(closed);
  EXPECT_GE(server_->stats().bad_heads, 2u);
}

TEST_F(HttpAbuseTest, MalformedRequestGets400AndTheConnectionIsClosed) {
  StartServer({});
  int fd = Connect(port());
  // The second request must never be answered: after a 400 the stream cannot be trusted.
  Send(fd, "GET /metrics HTTP/1.1\r\nBad Header\r\n\r\nGET /metrics HTTP/1.1\r\n\r\n");
  bool closed = false;
  std::string got = ReadUntilClose(fd, 5, &closed);
  ::close(fd);
  EXPECT_EQ(got.rfind("HTTP/1.1 400 ", 0), 0u) << got;
  EXPECT_EQ(got.find("HTTP/1.1 200"), std::string::npos) << got;
  EXPECT_TRUE(closed);
  // A request with a body: answered, then closed (the body is never read as a request).
  fd = Connect(port());
  Send(fd, "POST /metrics HTTP/1.1\r\nContent-Length: 24\r\n\r\nGET /metrics HTTP/1.1\r\n\r\n");
  got = ReadUntilClose(fd, 5, &closed);
  ::close(fd);
  EXPECT_EQ(got.rfind("HTTP/1.1 405 ", 0), 0u) << got;
  EXPECT_EQ(got.find("HTTP/1.1 200"), std::string::npos) << got;
  EXPECT_TRUE(closed);
}

TEST_F(HttpAbuseTest, AHeadMustArriveWithinTheRequestTimeout) {
  HttpOptions o;
  o.request_timeout_s = 1;
  StartServer(o);
  int fd = Connect(port());
  auto start = Clock::now();
  // Trickle a header forever, one byte every 100 ms: the deadline is for the whole head.
  bool closed = false;
  for (int i = 0; i < 60 && !closed; ++i) {
    if (!Send(fd, i == 0 ? "GET /metrics HTTP/1.1\r\nX: " : "a")) break;
    ReadUntilClose(fd, 0.1, &closed);
  }
  double s = std::chrono::duration<double>(Clock::now() - start).count();
  ::close(fd);
  EXPECT_TRUE(closed);
  EXPECT_LT(s, 4.0);
  EXPECT_GE(server_->stats().timed_out, 1u);
}

// 16 slow-loris connections used to take every worker (all endpoints hung) and 80 made everyone
// get 503 for as long as they trickled.
TEST_F(HttpAbuseTest, SlowLorisNeverStarvesHealthzOrAScrape) {
  HttpOptions o;
  o.token = "s3cret";
  StartServer(o);
  std::vector<int> fds;
  for (int i = 0; i < 150; ++i) {
    int fd = Connect(port());
    ASSERT_GE(fd, 0);
    Send(fd, "GET /metrics HTTP/1.1\r\nX-Slow: ");
    fds.push_back(fd);
  }
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    while (!stop) {
      for (int fd : fds) ::send(fd, "a", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  double worst = 0;
  int answered = 0;
  for (int i = 0; i < 20; ++i) {
    double s = 0;
    if (Get("/healthz", &s) == 200) ++answered;
    worst = std::max(worst, s);
    if (Get("/metrics", &s, "s3cret") == 200) ++answered;
    worst = std::max(worst, s);
  }
  stop = true;
  trickle.join();
  for (int fd : fds) ::close(fd);
  EXPECT_EQ(answered, 40);
  EXPECT_LT(worst, 1.0);
}

TEST_F(HttpAbuseTest, AtTheConnectionLimitTheSlowestIdleOneMakesRoom) {
  HttpOptions o;
  o.max_connections = 8;
  StartServer(o);
  std::vector<int> fds;
  for (int i = 0; i < 20; ++i) fds.push_back(Connect(port()));
  for (int i = 0; i < 5; ++i) {
    double s = 0;
    EXPECT_EQ(Get("/metrics", &s), 200);
    EXPECT_LT(s, 1.0);
  }
  EXPECT_GE(server_->stats().evicted, 12u);
  for (int fd : fds) ::close(fd);
}

TEST_F(HttpAbuseTest, ClientsThatNeverReadTheirAnswersHoldNoSlot) {
  HttpOptions o;
  o.max_connections = 8;
  StartServer(o);
  // Every slot taken by a client that pipelines requests for the dashboard's script (served
  // without a token, ~90 KiB) and never reads: 99 answers (under the keep-alive limit, which
  // would close the connection) are more than the socket buffers hold, so each one stalls.
  std::string pipelined;
  for (int i = 0; i < 99; ++i) pipelined += "GET /assets/app.js HTTP/1.1\r\nHost: x\r\n\r\n";
  std::vector<int> fds;
  for (int i = 0; i < 8; ++i) {
    int fd = testing::ConnectLoopback(port(), 4096);
    ASSERT_GE(fd, 0);
    Send(fd, pipelined);
    fds.push_back(fd);
  }
  // Past the stall time: the scrape takes the slot of the client that read nothing longest.
  std::this_thread::sleep_for(std::chrono::milliseconds(kStalledWriteMs + 300));
  for (int i = 0; i < 3; ++i) {
    double s = 0;
    EXPECT_EQ(Get("/metrics", &s), 200);
    EXPECT_LT(s, 1.0);
  }
  EXPECT_GE(server_->stats().evicted, 1u);  // a scrape's own slot is free again once it closes
  EXPECT_EQ(server_->stats().shed, 0u);
  for (int fd : fds) ::close(fd);
}

TEST_F(HttpAbuseTest, UnfinishedHeadsShareOneMemoryBudget) {
  HttpOptions o;
  o.head_budget_bytes = 64 * 1024;
  StartServer(o);
  std::vector<int> fds;
  // 12 connections x 24 KiB of a head that never ends = 288 KiB wanted, 64 KiB allowed.
  std::string part = "GET /metrics HTTP/1.1\r\n";
  while (part.size() < 24 * 1024) part += "X-Pad: " + std::string(1000, 'p') + "\r\n";
  for (int i = 0; i < 12; ++i) {
    int fd = Connect(port());
    Send(fd, part);
    fds.push_back(fd);
  }
  auto end = Clock::now() + std::chrono::seconds(5);
  while (server_->stats().evicted < 8 && Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GE(server_->stats().evicted, 8u);
  double s = 0;
  EXPECT_EQ(Get("/metrics", &s), 200);
  for (int fd : fds) ::close(fd);
}

TEST_F(HttpAbuseTest, BearerSchemeIsCaseInsensitive) {
  HttpOptions o;
  o.token = "s3cret";
  StartServer(o);
  for (const char* scheme : {"Bearer", "bearer", "BEARER"}) {
    int fd = Connect(port());
    Send(fd, std::string("GET /metrics HTTP/1.1\r\nConnection: close\r\nauthorization: ") + scheme +
                 " s3cret\r\n\r\n");
    bool closed = false;
    std::string got = ReadUntilClose(fd, 5, &closed);
    ::close(fd);
    EXPECT_EQ(got.rfind("HTTP/1.1 200 ", 0), 0u) << scheme << ": " << got.substr(0, 200);
  }
  int fd = Connect(port());
  Send(fd, "GET /metrics HTTP/1.1\r\nConnection: close\r\nAuthorization: Basic s3cret\r\n\r\n");
  bool closed = false;
  std::string got = ReadUntilClose(fd, 5, &closed);
  ::close(fd);
  EXPECT_EQ(got.rfind("HTTP/1.1 401 ", 0), 0u) << got.substr(0, 200);
}

TEST_F(HttpAbuseTest, PipelinedAndHeadRequests) {
  StartServer({});
  int fd = Connect(port());
  Send(fd,
       "GET /healthz HTTP/1.1\r\n\r\nHEAD /metrics HTTP/1.1\r\n\r\n"
       "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n");
  bool closed = false;
  std::string got = ReadUntilClose(fd, 5, &closed);
  ::close(fd);
  EXPECT_TRUE(closed);
  size_t first = got.find("HTTP/1.1 200");
  size_t second = got.find("HTTP/1.1 200", first + 1);
  size_t third = got.find("HTTP/1.1 200", second + 1);
  ASSERT_NE(third, std::string::npos) << got;
  // HEAD: the length of the body, no body.
  std::string head = got.substr(second, third - second);
  EXPECT_NE(head.find("Content-Length: "), std::string::npos);
  EXPECT_EQ(head.find("gpudoctor_"), std::string::npos) << head;
}

TEST_F(HttpAbuseTest, ReconfigureSwapsTheTokenForTheNextRequest) {
  HttpOptions o;
  o.token = "old";
  StartServer(o);
  EXPECT_EQ(Get("/metrics", nullptr, "old"), 200);
  o.token = "new";
  server_->Reconfigure(o);
  EXPECT_EQ(Get("/metrics", nullptr, "old"), 401);
  EXPECT_EQ(Get("/metrics", nullptr, "new"), 200);
}

}  // namespace
}  // namespace gpudoctor
