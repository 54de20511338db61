// SIGTERM and notifiers: a delivery in flight gets a bounded grace and is then aborted and handed
// back (to be spooled), the spool file is written safely and read back, and spooled deliveries go
// to their notifier at the next start. Exec notifiers: device values never become options, the
// child gets a minimal environment, control characters are refused.
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include "core/notify_target.h"
#include "notify/notifier.h"
#include "notify/notify_spool.h"
#include "store/history_store.h"
#include "test_util.h"
#include "watch_tick_util.h"

namespace gpudoctor {
namespace {

using testing::MakeTracked;

// A loopback receiver whose first `slow_first` requests take `delay_ms` (stop() cuts them short).
class SlowReceiver {
 public:
  SlowReceiver(int slow_first, int delay_ms) {
    server_.Post(
        ".*", [this, slow_first, delay_ms](const httplib::Request& req, httplib::Response& res) {
          int n = started_++;
          if (n < slow_first) {
            auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(delay_ms);
            while (!quit_ && std::chrono::steady_clock::now() < end) {
              std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
          }
          std::lock_guard<std::mutex> lock(mu_);
          bodies_.push_back(req.body);
          res.set_content("ok", "text/plain");
        });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~SlowReceiver() {
    quit_ = true;
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  int started() const { return started_; }
  std::vector<std::string> bodies() {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> started_{0};
  std::atomic<bool> quit_{false};
  std::mutex mu_;
  std::vector<std::string> bodies_;
};

bool WaitFor(const std::function<bool()>& pred, double timeout_s = 10) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(int(timeout_s * 1000));
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

TickResult Opened(TrackedFinding f) {
  TickResult t;
  t.transitions.push_back({TransitionKind::kOpened, f});
  t.findings.push_back(f);
  return t;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

TEST(NotifierShutdownTest, DeliveryInFlightIsAbortedAfterTheGraceAndHandedBack) {
  SlowReceiver rx(/*slow_first=*/100, /*delay_ms=*/60000);
  // timeout_s 600: before, Stop() waited for it (systemd kills after 20 s).
  NotifierConfig c{NotifierKind::kWebhook, rx.url(), {}, Severity::kWarn, 600};
  auto hub = NotifierHub::Create({c}, {.hostname = "node1"});
  ASSERT_TRUE(hub.ok()) << hub.status().message();
  (*hub)->OnTransitions(Opened(MakeTracked("gpu.ecc.dbe", Severity::kCrit, 1)));
  (*hub)->OnTransitions(Opened(MakeTracked("gpu.xid", Severity::kCrit, 2)));
  ASSERT_TRUE(WaitFor([&] { return rx.started() >= 1; }));
  auto start = std::chrono::steady_clock::now();
  std::vector<PendingDelivery> pending = (*hub)->Shutdown(0.3);
  double took = Seconds(start);
  EXPECT_GE(took, 0.25);
  EXPECT_LT(took, 3.0);
  ASSERT_EQ(pending.size(), 2u);  // the one in flight and the one queued behind it
  EXPECT_EQ(pending[0].notifier, NotifierFingerprint(c));
  EXPECT_NE(pending[0].body.find("gpu.ecc.dbe"), std::string::npos);
  EXPECT_NE(pending[1].body.find("gpu.xid"), std::string::npos);
  EXPECT_EQ(pending[0].body.find(rx.url()), std::string::npos);  // never the target
  EXPECT_TRUE((*hub)->Shutdown(1).empty());                      // once
}

TEST(NotifierShutdownTest, ExecInFlightIsKilledAfterTheGrace) {
  // A hook that says it started, then hangs: Shutdown must find it in flight.
  testing::TempDir dir;
  std::string script = dir.path() + "/hang.sh";
  dir.Write("hang.sh", "#!/bin/sh\n: > " + dir.path() + "/started\nexec /bin/sleep 300\n");
  ::chmod(script.c_str(), 0755);
  NotifierConfig c{NotifierKind::kExec, "", {script}, Severity::kWarn, 600};
  auto hub = NotifierHub::Create({c}, {});
  ASSERT_TRUE(hub.ok()) << hub.status().message();
  (*hub)->OnTransitions(Opened(MakeTracked("gpu.ecc.dbe", Severity::kCrit, 1)));
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(dir.path() + "/started"); }));
  auto start = std::chrono::steady_clock::now();
  auto pending = (*hub)->Shutdown(0.2);
  EXPECT_LT(Seconds(start), 2.0);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].kind, NotifierKind::kExec);
  bool has_serial = false;
  for (const auto& [n, v] : pending[0].values) has_serial |= n == "serial" && v == "SN1";
  EXPECT_TRUE(has_serial);
}

TEST(NotifierShutdownTest, SpooledDeliveriesGoToTheirNotifierAtTheNextStart) {
  testing::TempDir dir;
  std::string spool = NotifySpoolPath(dir.path() + "/history.db");
  SlowReceiver rx(/*slow_first=*/1, /*delay_ms=*/60000);
  NotifierConfig c{NotifierKind::kWebhook, rx.url(), {}, Severity::kWarn, 600};
  {
    auto hub = NotifierHub::Create({c}, {.hostname = "node1"});
    ASSERT_TRUE(hub.ok());
    (*hub)->OnTransitions(Opened(MakeTracked("gpu.ecc.dbe", Severity::kCrit, 1)));
    ASSERT_TRUE(WaitFor([&] { return rx.started() >= 1; }));
    auto pending = (*hub)->Shutdown(0.1);
    ASSERT_EQ(pending.size(), 1u);
    PendingDelivery orphan = pending[0];
    orphan.notifier = "0000000000000000";  // a notifier removed from the config since
    pending.push_back(orphan);
    ASSERT_TRUE(WriteNotifySpool(spool, pending).ok());
  }
  struct stat st;
  ASSERT_EQ(::lstat(spool.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(S_ISREG(st.st_mode));

  auto taken = TakeNotifySpool(spool);
  ASSERT_TRUE(taken.ok()) << taken.status().message();
  ASSERT_EQ(taken->size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(spool));  // taken once
  auto hub = NotifierHub::Create({c}, {.hostname = "node1"});
  ASSERT_TRUE(hub.ok());
  EXPECT_EQ((*hub)->Requeue(*taken), 1u);
  // The aborted first request is still held by the receiver; the requeued one arrives.
  ASSERT_TRUE(WaitFor([&] { return rx.bodies().size() >= 1; }));
  EXPECT_NE(rx.bodies()[0].find("gpu.ecc.dbe"), std::string::npos);
}

// A burst whose payloads together pass the spool's 4 MiB keeps its newest deliveries that fit,
// in order; it used to write nothing, losing every one of them.
TEST(NotifierShutdownTest, ASpoolTooLargeKeepsItsNewestDeliveries) {
  testing::TempDir dir;
  std::string spool = NotifySpoolPath(dir.path() + "/history.db");
  std::vector<PendingDelivery> pending(100);
  for (size_t i = 0; i < pending.size(); ++i) {
    pending[i].notifier = "abc";
    pending[i].what = "delivery " + std::to_string(i);
    pending[i].body = std::string(100 * 1024, 'x');  // 100 x 100 KiB: about 10 MiB
  }
  ASSERT_TRUE(WriteNotifySpool(spool, pending).ok());
  auto taken = TakeNotifySpool(spool);
  ASSERT_TRUE(taken.ok()) << taken.status().message();
  ASSERT_GE(taken->size(), 35u);
  ASSERT_LE(taken->size(), 41u);
  EXPECT_EQ(taken->back().what, "delivery 99");
  EXPECT_EQ(taken->front().what, "delivery " + std::to_string(100 - taken->size()));
}

TEST(NotifierShutdownTest, SpoolNeverFollowsSymlinks) {
  testing::TempDir dir;
  std::string spool = NotifySpoolPath(dir.path() + "/history.db");
  dir.Write("victim", "keep me\n");
  PendingDelivery p;
  p.notifier = "abc";
  p.body = "{}";
  // A link planted at the temporary name is removed, not written through.
  ASSERT_EQ(::symlink((dir.path() + "/victim").c_str(), (spool + ".tmp").c_str()), 0);
  ASSERT_TRUE(WriteNotifySpool(spool, {p}).ok());
  EXPECT_EQ(testing::ReadFileOrDie(dir.path() + "/victim"), "keep me\n");
  // A link at the spool itself is refused when reading, and left alone.
  ::unlink(spool.c_str());
  ASSERT_EQ(::symlink((dir.path() + "/victim").c_str(), spool.c_str()), 0);
  EXPECT_FALSE(TakeNotifySpool(spool).ok());
  EXPECT_EQ(testing::ReadFileOrDie(dir.path() + "/victim"), "keep me\n");
  // Garbage is reported and removed, so it cannot block every start.
  ::unlink(spool.c_str());
  dir.Write("history.db.notify-spool", "{not json");
  EXPECT_FALSE(TakeNotifySpool(spool).ok());
  EXPECT_FALSE(std::filesystem::exists(spool));
  auto none = TakeNotifySpool(spool);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// The grace and the history flush before it fit in what systemd allows the unit to stop.
TEST(NotifierShutdownTest, GraceFitsTheUnitsTimeoutStopSec) {
  std::ifstream unit(std::string(GPUDOCTOR_SOURCE_DIR) + "/deploy/systemd/gpudoctor.service");
  std::stringstream text;
  text << unit.rdbuf();
  std::smatch m;
  std::string s = text.str();
  ASSERT_TRUE(std::regex_search(s, m, std::regex(R"(\nTimeoutStopSec=(\d+)s?\n)"))) << s;
  double stop_s = std::stod(m[1]);
  // The bounded history flush and one write in flight (busy_timeout 2 s), the grace, up to 1.5 s
  // for aborted transfers to return, and the last write of delivery records on close.
  double history_s = std::chrono::duration<double>(HistoryStore::kShutdownFlush).count();
  EXPECT_GE(stop_s, history_s + 2 + kNotifyShutdownGraceS + 1.5 + 2);
}

std::string WriteScript(const testing::TempDir& dir) {
  std::string script = dir.path() + "/hook.sh";
  dir.Write("hook.sh", "#!/bin/sh\nenv > " + dir.path() +
                           "/env\nfor a in \"$@\"; do echo \"[$a]\"; done > " + dir.path() +
                           "/args\n");
  ::chmod(script.c_str(), 0755);
  return script;
}

TEST(NotifierExecTest, DeviceValuesAreArgumentsAfterDoubleDashAndInAMinimalEnvironment) {
  testing::TempDir dir;
  std::string script = WriteScript(dir);
  ::setenv("GPUDOCTOR_TEST_DAEMON_SECRET", "daemon-env-value", 1);
  auto hub = NotifierHub::Create(
      {{NotifierKind::kExec, "", {script, "--id={id}", "--", "{serial}"}, Severity::kWarn, 10}},
      {.hostname = "node1"});
  ::unsetenv("GPUDOCTOR_TEST_DAEMON_SECRET");
  ASSERT_TRUE(hub.ok()) << hub.status().message();
  TrackedFinding f = MakeTracked("gpu.ecc.dbe", Severity::kCrit, 1);
  f.last.gpu->serial = "--help";
  (*hub)->OnTransitions(Opened(f));
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(dir.path() + "/args"); }));
  ASSERT_TRUE(WaitFor([&] {
    return testing::ReadFileOrDie(dir.path() + "/args").find("[--help]") != std::string::npos;
  }));
  EXPECT_EQ(testing::ReadFileOrDie(dir.path() + "/args"), "[--id=gpu.ecc.dbe]\n[--]\n[--help]\n");
  std::string env = testing::ReadFileOrDie(dir.path() + "/env");
  EXPECT_NE(env.find("GPUDOCTOR_SERIAL=--help\n"), std::string::npos) << env;
  EXPECT_NE(env.find("GPUDOCTOR_ID=gpu.ecc.dbe\n"), std::string::npos) << env;
  EXPECT_NE(env.find("GPUDOCTOR_HOSTNAME=node1\n"), std::string::npos) << env;
  EXPECT_NE(env.find("PATH=/usr/local/sbin:"), std::string::npos) << env;
  EXPECT_EQ(env.find("daemon-env-value"), std::string::npos) << env;
  EXPECT_EQ(env.find("HOME="), std::string::npos) << env;
}

TEST(NotifierExecTest, DeviceValueAtTheStartOfAnOptionPositionIsRefused) {
  EXPECT_FALSE(ValidateNotifierConfig(
                   {NotifierKind::kExec, "", {"/bin/true", "{serial}"}, Severity::kWarn, 5})
                   .ok());
  EXPECT_TRUE(ValidateNotifierConfig(
                  {NotifierKind::kExec, "", {"/bin/true", "--", "{serial}"}, Severity::kWarn, 5})
                  .ok());
}

// A device value with a control character (a serial "SN1\n--reboot" from a broken or hostile
// device) is one argument after "--" with '?' in its place: the hook runs, nothing is injected,
// and the alert is not lost (it used to be refused).
TEST(NotifierExecTest, ControlCharacterInADeviceValueBecomesAQuestionMark) {
  testing::TempDir dir;
  std::string script = WriteScript(dir);
  auto hub = NotifierHub::Create(
      {{NotifierKind::kExec, "", {script, "--", "{serial}"}, Severity::kWarn, 10}},
      {.backoff_initial_s = 0.01});
  ASSERT_TRUE(hub.ok()) << hub.status().message();
  TrackedFinding f = MakeTracked("gpu.ecc.dbe", Severity::kCrit, 1);
  f.last.gpu->serial = "SN1\n--reboot";
  (*hub)->OnTransitions(Opened(f));
  std::vector<HistoryEvent> ev;
  ASSERT_TRUE(WaitFor([&] {
    for (auto& e : (*hub)->DrainDeliveryEvents()) ev.push_back(e);
    return !ev.empty();
  }));
  EXPECT_EQ(ev[0].kind, "notify_sent") << ev[0].detail;
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(dir.path() + "/args"); }));
  std::ifstream args(dir.path() + "/args");
  std::string text((std::istreambuf_iterator<char>(args)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "[--]\n[SN1?--reboot]\n");
}

TEST(NotifierExecTest, TimeoutBelowAMillisecondAndTooManyNotifiersAreRefused) {
  EXPECT_FALSE(ValidateNotifierConfig(
                   {NotifierKind::kWebhook, "http://127.0.0.1:9/x", {}, Severity::kWarn, 0.0004})
                   .ok());
  EXPECT_TRUE(ValidateNotifierConfig(
                  {NotifierKind::kWebhook, "http://127.0.0.1:9/x", {}, Severity::kWarn, 0.001})
                  .ok());
  std::vector<NotifierConfig> many(
      kMaxNotifiers + 1, {NotifierKind::kWebhook, "http://127.0.0.1:9/x", {}, Severity::kWarn, 1});
  EXPECT_FALSE(NotifierHub::Create(many, {}).ok());
  many.pop_back();
  EXPECT_TRUE(NotifierHub::Create(many, {}).ok());
}

}  // namespace
}  // namespace gpudoctor
