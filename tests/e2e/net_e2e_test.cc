// The network layer through the real binary: a bad --target is a config error (exit 3, naming
// the entry); a TCP target on a 127.0.0.1 listener is probed and reported in the JSON; URL
// targets on a local HTTP server (slow, 500, closed port) give the http findings in the JSON
// and in the text report.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

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

TEST(NetE2eTest, BadUrlTargetIsExit3NamingTheEntry) {
  auto r = RunGpudoctor({"check", "--target", "ftp://files.example/"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("unsupported scheme 'ftp'"), std::string::npos) << r.err;
}

// Issue 8 item 9: a slow endpoint, one answering 500 and a closed port, through the binary.
TEST(NetE2eTest, HttpTargetsSlowFailingAndClosed) {
  httplib::Server server;
  server.Get("/slow", [](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    res.set_content("late", "text/plain");
  });
  server.Get("/fail", [](const httplib::Request&, httplib::Response& res) { res.status = 500; });
  int port = server.bind_to_any_port("127.0.0.1");
  std::thread t([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  uint16_t closed = 0;
  close(testing::BindLoopback(0, &closed));
  std::string base = "http://127.0.0.1:" + std::to_string(port);
  std::string closed_url = "http://127.0.0.1:" + std::to_string(closed) + "/";
  std::string config = ::testing::TempDir() + "/net_e2e_http.toml";
  std::ofstream(config) << "[network]\nhttp_count = 3\nhttp_interval_ms = 50\n"
                           "http_slow_ms = 300\n";
  std::vector<std::string> args = {"check",        "--config", config,         "--probes",
                                   "reachability", "--target", base + "/slow", "--target",
                                   base + "/fail", "--target", closed_url};
  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  auto r = RunGpudoctor(json_args);
  auto text = RunGpudoctor(args);
  server.stop();
  t.join();
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;  // 100% failed requests are critical
  auto j = nlohmann::json::parse(r.out);
  std::map<std::string, std::string> found;  // subject -> id (one finding each here)
  for (const auto& f : j["findings"]) {
    std::string id = f["id"];
    if (id.starts_with("net.http.")) found[f.value("subject", "")] += id + " ";
  }
  EXPECT_EQ(found[base + "/slow"], "net.http.slow ") << r.out;
  EXPECT_EQ(found[base + "/fail"], "net.http.failing ") << r.out;
  EXPECT_EQ(found[closed_url], "net.http.failing ") << r.out;
  const auto& hosts = j["network"]["reachability"];
  ASSERT_EQ(hosts.size(), 3u) << r.out;
  EXPECT_EQ(hosts[0]["method"], "http");
  EXPECT_EQ(hosts[0]["http_status"], 200);
  EXPECT_GE(hosts[0]["http_ttfb_ms"].get<double>(), 390);
  EXPECT_EQ(hosts[1]["http_status_counts"]["500"], 3);
  EXPECT_EQ(hosts[2]["http_error_kind"], "connect");
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_NE(text.out.find("target " + base + "/slow (127.0.0.1) http: 3/3 responses (200x3)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("the application or its backend, not the network"), std::string::npos)
      << text.out;
}

}  // namespace
}  // namespace gpudoctor
