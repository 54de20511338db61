// Issue 25 through the binary: netcheck against servers on 127.0.0.1 (no traffic leaves the
// machine), the Chinese symptom words and text with --lang and LANG, check in Chinese on a
// fixture host with pending security updates.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>

#include "host_fixture.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using testing::RunGpudoctor;

// Accepts and closes connections until stopped: a server that answers every TCP ping (an
// unaccepted backlog would fill up and start dropping SYNs).
struct AcceptingServer {
  uint16_t port = 0;
  int fd = -1;
  std::atomic<bool> stop{false};
  std::thread loop;
  AcceptingServer() {
    fd = testing::BindLoopback(128, &port);
    loop = std::thread([this] {
      while (!stop) {
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 50) > 0) {
          int c = accept(fd, nullptr, nullptr);
          if (c >= 0) close(c);
        }
      }
    });
  }
  ~AcceptingServer() {
    stop = true;
    loop.join();
    close(fd);
  }
};

TEST(NetcheckE2eTest, ServerAnswersAndServiceDownAreTold) {
  AcceptingServer server;
  uint16_t open_port = server.port, ref_port = 0, closed_port = 0;
  // The reference refuses (bound, not listening: RST): an answer, so the network works.
  int ref_fd = testing::BindLoopback(0, &ref_port);
  int closed_fd = testing::BindLoopback(0, &closed_port);
  ASSERT_GE(server.fd, 0);
  std::vector<std::string> quick = {"--reference", "127.0.0.1:" + std::to_string(ref_port),
                                    "--deadline", "8", "--json"};
  auto args = [&](uint16_t port) {
    std::vector<std::string> a = {"netcheck", "127.0.0.1:" + std::to_string(port)};
    a.insert(a.end(), quick.begin(), quick.end());
    return a;
  };
  auto ok = RunGpudoctor(args(open_port));
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  auto j = nlohmann::json::parse(ok.out);
  EXPECT_EQ(j["verdict"], "none");
  ASSERT_EQ(j["hosts"].size(), 3u);  // the service, the bare host (ICMP), the reference
  EXPECT_EQ(j["hosts"][2]["group"], "reference");

  auto text = RunGpudoctor({"netcheck", "127.0.0.1:" + std::to_string(open_port), "--reference",
                            "127.0.0.1:" + std::to_string(ref_port)});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("to send to the operator:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("verdict: none"), std::string::npos);

  auto down = RunGpudoctor(args(closed_port));
  EXPECT_EQ(down.exit_code, 1) << down.out << down.err;
  auto d = nlohmann::json::parse(down.out);
  EXPECT_EQ(d["verdict"], "server") << down.out;
  EXPECT_EQ(d["hosts"][0]["problem"], "connection refused");

  auto usage = RunGpudoctor({"netcheck"});
  EXPECT_EQ(usage.exit_code, 3);
  EXPECT_NE(usage.err.find("usage: gpudoctor netcheck"), std::string::npos);
  close(ref_fd);
  close(closed_fd);
}

TEST(GuideLanguageE2eTest, ChineseSymptomsAndText) {
  auto zh = RunGpudoctor({"explain", "--symptom", "掉卡", "--lang", "zh"});
  ASSERT_EQ(zh.exit_code, 0) << zh.err;
  EXPECT_NE(zh.out.find("(gpu-lost)"), std::string::npos) << zh.out;
  EXPECT_NE(zh.out.find("据以判断的 finding："), std::string::npos) << zh.out;
  EXPECT_NE(zh.out.find("gpu.lost"), std::string::npos);

  auto env = RunGpudoctor(
      {"explain", "--symptom", "爆显存"}, std::chrono::seconds(30),
      {{"LANG", "zh_CN.UTF-8"}, {"LANGUAGE", ""}, {"LC_ALL", ""}, {"LC_MESSAGES", ""}});
  ASSERT_EQ(env.exit_code, 0) << env.err;
  EXPECT_NE(env.out.find("(vram-full)"), std::string::npos);
  EXPECT_NE(env.out.find("命令："), std::string::npos) << env.out;

  auto en = RunGpudoctor({"explain", "--symptom", "爆显存", "--lang", "en"});
  ASSERT_EQ(en.exit_code, 0);
  EXPECT_NE(en.out.find("findings that decide it:"), std::string::npos);

  auto bad = RunGpudoctor({"explain", "--list", "--lang", "fr"});
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.err.find("expected zh or en"), std::string::npos);

  auto runbook = RunGpudoctor({"explain", "--runbook", "--lang", "zh"});
  EXPECT_NE(runbook.out.find("应急预案"), std::string::npos);
  auto pot = RunGpudoctor({"explain", "--pot"});
  EXPECT_NE(pot.out.find("msgid \"GPU has fallen off the bus\""), std::string::npos);
}

TEST(GuideLanguageE2eTest, CheckRendersInChinese) {
  testing::HostFixture fx("apt-security-pending");
  std::vector<std::string> args = {"check", "--probes", "boot", "--lang", "zh"};
  for (const auto& f : fx.PathFlags()) args.push_back(f);
  auto r = RunGpudoctor(args);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // a warning: updates pending for weeks
  EXPECT_NE(r.out.find("host.updates.security  【有待安装的安全更新】"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("结论："), std::string::npos);
  args.push_back("--json");
  auto j = RunGpudoctor(args);
  EXPECT_EQ(j.out.find("【"), std::string::npos) << "JSON stays English";
}

}  // namespace
}  // namespace gpudoctor
