#include "notify/notifier.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "test_util.h"
#include "watch_tick_util.h"

namespace gpudoctor {
namespace {

using testing::MakeTracked;

// A loopback receiver that fails the first `fail_first` requests with 500.
class Receiver {
 public:
  explicit Receiver(int fail_first = 0, int delay_ms = 0) : fail_first_(fail_first) {
    server_.Post(".*", [this, delay_ms](const httplib::Request& req, httplib::Response& res) {
      if (delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      std::lock_guard<std::mutex> lock(mu_);
      if (calls_++ < fail_first_) {
        res.status = 500;
        return;
      }
      bodies_.push_back(req.path + " " + req.body);
      res.set_content("ok", "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~Receiver() {
    server_.stop();
    thread_.join();
  }
  std::string url(const std::string& path = "/hook") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  std::vector<std::string> Bodies() {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }
  std::vector<std::string> WaitBodies(size_t n, double timeout_s = 10) {
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(int(timeout_s * 1000));
    while (std::chrono::steady_clock::now() < end) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (bodies_.size() >= n) return bodies_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  int fail_first_;
  int calls_ = 0;
  std::mutex mu_;
  std::vector<std::string> bodies_;
};

TickResult Transition(TransitionKind kind, TrackedFinding f) {
  TickResult t;
  if (kind == TransitionKind::kResolved) {
    f.state = FindingState::kResolved;
    f.resolved_ms = 1764000300000;
  }
  t.transitions.push_back({kind, f});
  if (f.state == FindingState::kOpen) t.findings.push_back(f);
  return t;
}

std::vector<HistoryEvent> WaitEvents(NotifierHub& hub, size_t n, double timeout_s = 10) {
  std::vector<HistoryEvent> all;
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(int(timeout_s * 1000));
  while (all.size() < n && std::chrono::steady_clock::now() < end) {
    for (auto& e : hub.DrainDeliveryEvents()) all.push_back(e);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return all;
}

TEST(NotifierTest, WebhookFiringAndResolvedInAlertmanagerFormat) {
  Receiver rx;
  auto hub = NotifierHub::Create({{NotifierKind::kWebhook, rx.url(), {}, Severity::kWarn, 5}},
                                 {.hostname = "node1"});
  ASSERT_TRUE(hub.ok());
  TrackedFinding f = MakeTracked("gpu.ecc.dbe", Severity::kCrit, 1);
  (*hub)->OnTransitions(Transition(TransitionKind::kOpened, f));
  (*hub)->OnTransitions(Transition(TransitionKind::kResolved, f));
  auto bodies = rx.WaitBodies(2);
  ASSERT_EQ(bodies.size(), 2u);
  auto j = nlohmann::json::parse(bodies[0].substr(bodies[0].find(' ') + 1));
  EXPECT_EQ(j["version"], "4");
  EXPECT_EQ(j["status"], "firing");
  ASSERT_EQ(j["alerts"].size(), 1u);
  EXPECT_EQ(j["alerts"][0]["labels"]["alertname"], "GpudoctorFinding");
  EXPECT_EQ(j["alerts"][0]["labels"]["id"], "gpu.ecc.dbe");
  // The Prometheus vocabulary, as deploy/prometheus's rules send it.
  EXPECT_EQ(j["alerts"][0]["labels"]["severity"], "critical");
  EXPECT_EQ(j["alerts"][0]["labels"]["finding"], j["alerts"][0]["labels"]["id"]);
  EXPECT_EQ(j["alerts"][0]["annotations"]["runbook_url"],
            "docs/findings.md#" + j["alerts"][0]["labels"]["id"].get<std::string>());
  EXPECT_EQ(j["alerts"][0]["labels"]["gpu"], "1");
  EXPECT_EQ(j["alerts"][0]["labels"]["hostname"], "node1");
  EXPECT_EQ(j["alerts"][0]["annotations"]["summary"], "summary of gpu.ecc.dbe");
  EXPECT_NE(j["alerts"][0]["annotations"]["next_steps"].get<std::string>().find("step one"),
            std::string::npos);
  auto r = nlohmann::json::parse(bodies[1].substr(bodies[1].find(' ') + 1));
  EXPECT_EQ(r["status"], "resolved");
  EXPECT_EQ(r["alerts"][0]["endsAt"], "2025-11-24T16:05:00Z");
  auto ev = WaitEvents(**hub, 2);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, "notify_sent");
  EXPECT_EQ(*ev[0].gpu_index, 1);
}

TEST(NotifierTest, RecordedEventsShowOnlyTheOriginOfTheUrl) {
  Receiver rx;
  std::string url = rx.url("/services/T0001/B0002/XyZsecret?token=tok3n&x=1");
  url.replace(url.find("://") + 3, 0, "bob:hunter2@");
  auto hub = NotifierHub::Create({{NotifierKind::kWebhook, url, {}, Severity::kWarn, 5}},
                                 {.hostname = "node1"});
  ASSERT_TRUE(hub.ok());
  (*hub)->OnTransitions(
      Transition(TransitionKind::kOpened, MakeTracked("gpu.ecc.dbe", Severity::kCrit, 1)));
  auto ev = WaitEvents(**hub, 1);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, "notify_sent");
  EXPECT_NE(ev[0].detail.find(rx.url("")), std::string::npos) << ev[0].detail;
  for (const char* secret : {"bob", "hunter2", "XyZsecret", "tok3n", "services"}) {
    EXPECT_EQ(ev[0].detail.find(secret), std::string::npos) << secret << ": " << ev[0].detail;
  }
}

TEST(NotifierTest, MinSeveritySilenceAndAck) {
  Receiver rx;
  auto hub = NotifierHub::Create({{NotifierKind::kWebhook, rx.url(), {}, Severity::kCrit, 5}}, {});
  ASSERT_TRUE(hub.ok());
  (*hub)->OnTransitions(Transition(TransitionKind::kOpened, MakeTracked("w", Severity::kWarn, 0)));
  TrackedFinding silenced = MakeTracked("s", Severity::kCrit, 0);
  silenced.silenced_until_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count() +
                               3600000;
  (*hub)->OnTransitions(Transition(TransitionKind::kOpened, silenced));
  TrackedFinding acked = MakeTracked("a", Severity::kCrit, 0);
  acked.acked = true;
  (*hub)->OnTransitions(Transition(TransitionKind::kEscalated, acked));
  (*hub)->OnTransitions(Transition(TransitionKind::kOpened, MakeTracked("c", Severity::kCrit, 0)));
  // A last one as a marker: one notifier delivers in order, so anything wrongly sent for w, s or
  // a arrives before it (no fixed wait for deliveries that must not come).
  (*hub)->OnTransitions(Transition(TransitionKind::kOpened, MakeTracked("z", Severity::kCrit, 0)));
  std::vector<std::string> bodies;
  ASSERT_TRUE(testing::WaitUntil([&] {
    bodies = rx.Bodies();
    return !bodies.empty() && bodies.back().find("\"id\":\"z\"") != std::string::npos;
  }));
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_NE(bodies[0].find("\"id\":\"c\""), std::string::npos);
}

TEST(NotifierTest, RetriesWithBackoffThenSucceeds) {
  Receiver rx(/*fail_first=*/2);
  auto hub = NotifierHub::Create({{NotifierKind::kWebhook, rx.url(), {}, Severity::kWarn, 5}},
                                 {.backoff_initial_s = 0.05});
  ASSERT_TRUE(hub.ok());
  (*hub)->OnTransitions(Transition(TransitionKind::kOpened, MakeTracked("x", Severity::kCrit, 0)));
  ASSERT_EQ(rx.WaitBodies(1).size(), 1u);
  auto ev = WaitEvents(**hub, 1);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, "notify_sent");
  EXPECT_NE(ev[0].detail.find("attempt 3"), std::string::npos) << ev[0].detail;
}

TEST(NotifierTest, FailingReceiverNeverBlocksAndIsRecorded) {
  uint16_t port = 0;
  int fd = -1;
  {
    // A port with nobody listening: take one and close it.
    httplib::Server s;
    port = s.bind_to_any_port("127.0.0.1");
  }
  (void)fd;
  Receiver slow(0, /*delay_ms=*/3000);
  auto hub = NotifierHub::Create({{NotifierKind::kWebhook,
                                   "http://127.0.0.1:" + std::to_string(port) + "/x",
                                   {},
                                   Severity::kWarn,
                                   1},
                                  {NotifierKind::kWebhook, slow.url(), {}, Severity::kWarn, 0.5}},
                                 {.max_queue = 4, .max_attempts = 2, .backoff_initial_s = 0.05});
  ASSERT_TRUE(hub.ok());
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 50; ++i) {
    (*hub)->OnTransitions(Transition(TransitionKind::kOpened,
                                     MakeTracked("f" + std::to_string(i), Severity::kCrit, 0)));
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0.5);
  bool failed = false, dropped = false;
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!(failed && dropped) && std::chrono::steady_clock::now() < end) {
    for (const auto& e : (*hub)->DrainDeliveryEvents()) {
      failed |= e.kind == "notify_failed" && e.detail.find("gave up") != std::string::npos;
      dropped |= e.detail.find("queue full") != std::string::npos;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(failed);
  EXPECT_TRUE(dropped);
  start = std::chrono::steady_clock::now();
  (*hub)->Stop();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 3.0);
}

TEST(NotifierTest, ExecWithPlaceholdersNoShell) {
  std::string dir = ::testing::TempDir() + "/exec_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  auto hub = NotifierHub::Create({{NotifierKind::kExec,
                                   "",
                                   {"/usr/bin/touch", dir + "/{id}-{status}-{gpu};$(reboot)"},
                                   Severity::kCrit,
                                   5}},
                                 {});
  ASSERT_TRUE(hub.ok());
  (*hub)->OnTransitions(
      Transition(TransitionKind::kOpened, MakeTracked("gpu.ecc.dbe", Severity::kCrit, 3)));
  auto ev = WaitEvents(**hub, 1);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, "notify_sent") << ev[0].detail;
  EXPECT_TRUE(std::filesystem::exists(dir + "/gpu.ecc.dbe-firing-3;$(reboot)"));
  std::filesystem::remove_all(dir);
}

// A summary with control characters (a mount named with an escape or a newline, which any user
// can make with FUSE) still runs the hook, with '?' in their place; it used to be refused.
TEST(NotifierTest, ExecRunsWithControlCharactersMadeSafe) {
  std::string dir = ::testing::TempDir() + "/exec_ctl_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  auto hub = NotifierHub::Create(
      {{NotifierKind::kExec, "", {"/usr/bin/touch", dir + "/{summary}"}, Severity::kWarn, 5}}, {});
  ASSERT_TRUE(hub.ok());
  TrackedFinding f = MakeTracked("host.disk.full", Severity::kCrit, -1);
  f.last.summary = "u\x1b[31mv\nfull \xff";
  (*hub)->OnTransitions(Transition(TransitionKind::kOpened, f));
  auto ev = WaitEvents(**hub, 1);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, "notify_sent") << ev[0].detail;
  EXPECT_TRUE(std::filesystem::exists(dir + "/u?[31mv?full ?"));
  std::filesystem::remove_all(dir);
}

TEST(NotifierTest, ExecTimeoutKills) {
  auto hub = NotifierHub::Create(
      {{NotifierKind::kExec, "", {"/bin/sleep", "30"}, Severity::kWarn, 0.3}}, {.max_attempts = 1});
  ASSERT_TRUE(hub.ok());
  auto start = std::chrono::steady_clock::now();
  (*hub)->OnTransitions(Transition(TransitionKind::kOpened, MakeTracked("x", Severity::kCrit, 0)));
  auto ev = WaitEvents(**hub, 1);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, "notify_failed");
  EXPECT_NE(ev[0].detail.find("killed"), std::string::npos) << ev[0].detail;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 3.0);
}

TEST(NotifierTest, ConfigValidation) {
  EXPECT_FALSE(
      ValidateNotifierConfig({NotifierKind::kExec, "", {"drain"}, Severity::kWarn, 5}).ok());
  EXPECT_FALSE(ValidateNotifierConfig({NotifierKind::kExec, "", {}, Severity::kWarn, 5}).ok());
  EXPECT_FALSE(
      ValidateNotifierConfig({NotifierKind::kWebhook, "file:///etc/passwd", {}, Severity::kWarn, 5})
          .ok());
  EXPECT_TRUE(ValidateNotifierConfig(
                  {NotifierKind::kAlertmanager, "http://127.0.0.1:9093", {}, Severity::kWarn, 5})
                  .ok());
}

TEST(NotifierTest, AlertmanagerPayloadEndsAt) {
  TrackedFinding open = MakeTracked("a", Severity::kCrit, 0);
  TrackedFinding done = MakeTracked("b", Severity::kWarn, -1, FindingState::kResolved);
  auto j = nlohmann::json::parse(AlertmanagerPayload({open, done}, "h", 1764000000000, 60));
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["labels"]["alertname"], "GpudoctorFinding");
  EXPECT_EQ(j[0]["endsAt"], "2025-11-24T16:04:00Z");
  EXPECT_EQ(j[1]["endsAt"], "2025-11-24T16:03:00Z");
  EXPECT_FALSE(j[1]["labels"].contains("gpu"));
}

// A mount any user can name (a FUSE mount point with a 0xFF byte) reaches a finding's subject and
// summary as it is: the payloads must still be JSON (nlohmann's strict dump() threw here, on the
// watch thread: the daemon died at the first such finding).
TEST(NotifierTest, PayloadsOfFindingsWithBytesThatAreNotUtf8AreStillJson) {
  TrackedFinding f = MakeTracked("host.disk.full", Severity::kCrit, -1);
  f.last.subject = "/mnt/u\xff\xfe";
  f.last.summary = "/mnt/u\xff\xfe is 99% full";
  f.last.Add("mount_point", f.last.subject);
  std::string webhook, am;
  ASSERT_NO_THROW(webhook = WebhookPayload(f, TransitionKind::kOpened, "h\xc3", 1764000000000));
  ASSERT_NO_THROW(am = AlertmanagerPayload({f}, "h", 1764000000000, 60));
  for (const std::string& text : {webhook, am}) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << text;
    EXPECT_NE(text.find("/mnt/u\xef\xbf\xbd\xef\xbf\xbd"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace gpudoctor
