// `gpudoctor watch` end to end on the fake NVML (issue 9): a fault injected mid-run (the fake
// re-reads its scenario when the file changes) opens a finding, clearing it resolves it, and
// `history --findings` shows both; SIGTERM stops cleanly with the history intact; SIGHUP with a
// broken config keeps the old one; bad --db paths exit 3; device count changes are followed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <thread>

#include "atomic_file.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using std::chrono::milliseconds;
using testing::RunGpudoctor;
using testing::TempDir;
using testing::WriteScenario;  // atomic: the fake never sees half a file

// A running `gpudoctor watch` child with stderr in a file.
struct Daemon {
  pid_t pid = -1;
  int Wait(std::chrono::milliseconds limit) {
    auto until = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (std::chrono::steady_clock::now() < until) {
      pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      std::this_thread::sleep_for(milliseconds(20));
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -2;
  }
};

Daemon Start(std::vector<std::string> args, const std::string& scenario, const std::string& err) {
  Daemon d;
  d.pid = fork();
  if (d.pid == 0) {
    setenv("FAKE_NVML_SCENARIO", scenario.c_str(), 1);
    int fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    std::vector<char*> argv;
    std::string bin = GPUDOCTOR_BIN;
    argv.push_back(bin.data());
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  return d;
}

// `listen`: a kernel-chosen port by default, never the product's default 127.0.0.1:9835 (a
// daemon on this machine, or another test, may hold it).
std::vector<std::string> WatchArgs(const TempDir& dir, const std::string& interval,
                                   const std::string& listen = "127.0.0.1:0") {
  return {"watch",
          "--interval",
          interval,
          "--db",
          dir.path() + "/history.db",
          "--nvml-lib",
          testing::FakeNvmlLib(),
          "--probes",
          "nvml,cpu,memory",
          "--config",
          dir.path() + "/gpudoctor.toml",
          "--listen",
          listen};
}

// The daemon's stderr so far ("" before it opened it).
std::string ReadLog(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool LogHas(const std::string& path, const std::string& needle) {
  return ReadLog(path).find(needle) != std::string::npos;
}

// GPU `gpu`'s temperature points in the history so far (the daemon's store is readable while it
// runs); empty while there are none or the store cannot be read yet.
std::vector<double> Temperatures(const std::string& db, int gpu) {
  auto m = RunGpudoctor({"history", "--db", db, "--metric", "gpudoctor_gpu_temperature_celsius",
                         "--gpu", std::to_string(gpu), "--json"});
  std::vector<double> out;
  auto j = nlohmann::json::parse(m.out, nullptr, false);
  if (m.exit_code != 0 || j.is_discarded() || (j.is_array() && j.empty())) return out;
  const auto& series = j.is_array() ? j[0] : j;
  if (!series.is_object() || !series.contains("points")) return out;
  for (const auto& p : series["points"]) {
    if (p.is_array() && p.size() > 1 && p[1].is_number()) out.push_back(p[1].get<double>());
  }
  return out;
}

// Waits for what a running daemon does (30 s: a loaded machine stretches the 0.3 s ticks),
// polling every 200 ms (some conditions run `gpudoctor history`).
bool Eventually(const std::function<bool()>& cond) {
  return testing::WaitUntil(cond, std::chrono::seconds(30), milliseconds(200));
}

const char* kFastLifecycle =
    "[finding.\"gpu.thermal\"]\nfor_s = 0\nresolve_after_s = 1\n"
    "[finding.\"gpu.hw_slowdown\"]\nfor_s = 0\nresolve_after_s = 1\n";

TEST(WatchE2eTest, FaultInjectedMidRunOpensAndResolvesInHistory) {
  TempDir dir;
  dir.Write("gpudoctor.toml", kFastLifecycle);
  std::string scenario = dir.path() + "/live.scenario";
  WriteScenario(scenario, "h100_busy.scenario");
  std::string err = dir.path() + "/err.log", db = dir.path() + "/history.db";
  Daemon d = Start(WatchArgs(dir, "0.3"), scenario, err);
  // Each step waits for what it needs (EXPECT, so that the daemon is stopped in any case): a few
  // healthy ticks recorded, ...
  EXPECT_TRUE(Eventually([&] { return Temperatures(db, 3).size() >= 2; })) << ReadLog(err);
  WriteScenario(scenario, "thermal.scenario");  // GPU 3 overheats while watch runs
  // ... the finding opened and a hot point recorded, ...
  EXPECT_TRUE(Eventually([&] {
    std::vector<double> t = Temperatures(db, 3);
    return LogHas(err, "opened gpu.thermal") && !t.empty() &&
           *std::max_element(t.begin(), t.end()) >= 88;
  })) << ReadLog(err);
  WriteScenario(scenario, "h100_busy.scenario");  // and cools down again
  // ... resolved, with the points checked below.
  EXPECT_TRUE(Eventually([&] {
    return LogHas(err, "resolved gpu.thermal") && Temperatures(db, 3).size() >= 5;
  })) << ReadLog(err);
  kill(d.pid, SIGTERM);
  EXPECT_EQ(d.Wait(std::chrono::seconds(10)), 0);
  std::string log = testing::ReadFileOrDie(dir.path() + "/err.log");
  EXPECT_NE(log.find("opened gpu.thermal"), std::string::npos) << log;
  EXPECT_NE(log.find("resolved gpu.thermal"), std::string::npos) << log;
  EXPECT_NE(log.find("<6>gpudoctor[watch]: stopping on SIGTERM"), std::string::npos) << log;

  auto h = RunGpudoctor({"history", "--db", dir.path() + "/history.db", "--findings", "--json"});
  ASSERT_EQ(h.exit_code, 0) << h.err;
  auto j = nlohmann::json::parse(h.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << h.out;
  const nlohmann::json* thermal = nullptr;
  for (const auto& f : j.is_array() ? j : j["findings"]) {
    const auto& finding = f["finding"];
    if (finding["id"] == "gpu.thermal" && finding["gpu"]["index"] == 3) thermal = &f;
  }
  ASSERT_NE(thermal, nullptr) << j.dump(2);
  EXPECT_EQ((*thermal)["state"], "resolved") << thermal->dump(2);
  EXPECT_EQ((*thermal)["resolution"], "cleared");
  EXPECT_FALSE((*thermal)["finding"]["gpu"]["serial"].get<std::string>().empty());

  // The GPU series were recorded every tick.
  auto m = RunGpudoctor({"history", "--db", dir.path() + "/history.db", "--metric",
                         "gpudoctor_gpu_temperature_celsius", "--gpu", "3", "--json"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  auto mj = nlohmann::json::parse(m.out, nullptr, false);
  ASSERT_FALSE(mj.is_discarded()) << m.out;
  const auto& series = mj.is_array() ? mj[0] : mj;
  EXPECT_GE(series["points"].size(), 5u) << m.out;  // one point a second at most
  bool hot = false;
  for (const auto& p : series["points"]) hot = hot || p[1].get<double>() >= 88;
  EXPECT_TRUE(hot) << m.out;
}

// Issue 17 §4 on the running daemon: an Xid whose action takes the node out stays open while the
// log is quiet; the NVIDIA module loaded again after it (the GPU reset path) resolves it with
// "cleared_by_driver_reload", and the next check names the reload. The ring is a regular file
// at the rootfs's /dev/kmsg, tailed as /dev/kmsg is, with stamps on this boot's monotonic clock.
TEST(WatchE2eTest, DriverReloadResolvesTheLatchedXid) {
  TempDir dir;
  timespec mono{};
  clock_gettime(CLOCK_MONOTONIC, &mono);
  auto usec = [&](double offset_s) {
    return std::to_string(static_cast<int64_t>((mono.tv_sec + offset_s) * 1000000));
  };
  dir.Write("root/dev/kmsg",
            "6,1,0,-;Linux version 6.8.0-51-generic (buildd@lcy02-amd64-025)\n"
            "6,2," +
                usec(-600) +
                ",-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.148.06  Mon May  5 "
                "11:36:21 UTC 2025\n"
                "4,3," +
                usec(-120) +
                ",-;NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has "
                "fallen off the bus.\n");
  std::vector<std::string> args = {"watch",
                                   "--interval",
                                   "0.3",
                                   "--db",
                                   dir.path() + "/history.db",
                                   "--probes",
                                   "kmsg",
                                   "--path.rootfs",
                                   dir.path() + "/root",
                                   "--listen",
                                   "127.0.0.1:0"};
  std::string scenario = dir.path() + "/none.scenario";
  std::string err = dir.path() + "/err.log";
  Daemon d = Start(args, scenario, err);
  EXPECT_TRUE(Eventually([&] { return LogHas(err, "opened gpu.xid"); })) << ReadLog(err);
  {
    std::ofstream ring(dir.path() + "/root/dev/kmsg", std::ios::app);
    ring << "6,4," << usec(30)
         << ",-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.158.01  Release Build  "
            "(dvs-builder@U22-I3-B10-02-5)  Mon Jun  2 13:13:04 UTC 2025\n";
  }
  EXPECT_TRUE(Eventually([&] { return LogHas(err, "resolved gpu.xid"); })) << ReadLog(err);
  kill(d.pid, SIGTERM);
  EXPECT_EQ(d.Wait(std::chrono::seconds(10)), 0);
  std::string log = testing::ReadFileOrDie(dir.path() + "/err.log");
  EXPECT_NE(log.find("opened gpu.xid"), std::string::npos) << log;
  EXPECT_NE(log.find("resolved gpu.xid"), std::string::npos) << log;

  auto h = RunGpudoctor({"history", "--db", dir.path() + "/history.db", "--findings", "--json"});
  ASSERT_EQ(h.exit_code, 0) << h.err;
  auto j = nlohmann::json::parse(h.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << h.out;
  const nlohmann::json* xid = nullptr;
  for (const auto& f : j.is_array() ? j : j["findings"]) {
    if (f["finding"]["id"] == "gpu.xid") xid = &f;
  }
  ASSERT_NE(xid, nullptr) << j.dump(2);
  EXPECT_EQ((*xid)["state"], "resolved") << xid->dump(2);
  EXPECT_EQ((*xid)["resolution"], "cleared_by_driver_reload") << xid->dump(2);

  auto c =
      RunGpudoctor({"check", "--json", "--probes", "kmsg", "--path.rootfs", dir.path() + "/root"});
  EXPECT_EQ(c.exit_code, 0) << c.out;
  EXPECT_NE(c.out.find("\"driver.reloaded\""), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find("\"gpu.xid\""), std::string::npos) << c.out;
}

// NvmlSession re-enumeration in the running daemon: the device count drops (GPUs 4-7 gone) and
// rises again; the ticks follow within the 5-tick recount and the history records the changes.
TEST(WatchE2eTest, DeviceCountChangesAreFollowed) {
  TempDir dir;
  dir.Write("gpudoctor.toml", kFastLifecycle);
  std::string scenario = dir.path() + "/live.scenario";
  auto write = [&](const std::string& extra) {
    WriteScenario(scenario, "h100_busy.scenario", extra);
  };
  write("");
  Daemon d = Start(WatchArgs(dir, "0.3", "off"), scenario, dir.path() + "/err.log");
  struct Seen {
    int gone = 0, appeared = 0;
    bool ninth = false;
    std::string text;
  };
  // The history's GPU events so far (the daemon's store is readable while it runs).
  auto seen = [&] {
    Seen s;
    auto h = RunGpudoctor({"history", "--db", dir.path() + "/history.db", "--events", "--json"});
    s.text = h.out + h.err;
    auto j = nlohmann::json::parse(h.out, nullptr, false);
    if (h.exit_code != 0 || j.is_discarded()) return s;
    for (const auto& e : j.is_array() ? j : j["events"]) {
      std::string kind = e["kind"];
      std::string detail = e["detail"];
      if (kind == "gpu_disappeared") ++s.gone;
      if (kind == "gpu_appeared") ++s.appeared;
      if (kind == "gpu_appeared" && detail.find("1654922000099") != std::string::npos) {
        s.ninth = true;
      }
    }
    return s;
  };
  // Polls until `done` or 20 s (a loaded machine stretches the 0.3 s ticks).
  auto wait_for = [&](const std::function<bool(const Seen&)>& done) {
    Seen s;
    for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
         std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(milliseconds(300))) {
      s = seen();
      if (done(s)) break;
    }
    return s;
  };
  // The eight GPUs sampled (GPU 7 recorded) before the count drops.
  EXPECT_TRUE(Eventually([&] { return !Temperatures(dir.path() + "/history.db", 7).empty(); }));
  write("device_count=4\n");
  Seen after_drop = wait_for([](const Seen& s) { return s.gone >= 4; });
  EXPECT_EQ(after_drop.gone, 4) << after_drop.text;  // GPUs 4-7, by serial
  write("device_count=9\ngpu.8.uuid=GPU-e2e-8\ngpu.8.serial=1654922000099\n");
  Seen after_rise = wait_for([](const Seen& s) { return s.appeared >= 5 && s.ninth; });
  EXPECT_EQ(after_rise.appeared, 5) << after_rise.text;  // GPUs 4-7 back, and the ninth
  EXPECT_TRUE(after_rise.ninth) << after_rise.text;
  // Ticks of nine GPUs: the ninth's temperature recorded (checked again below).
  EXPECT_TRUE(Eventually([&] { return !Temperatures(dir.path() + "/history.db", 8).empty(); }));
  kill(d.pid, SIGTERM);
  EXPECT_EQ(d.Wait(std::chrono::seconds(10)), 0);
  Seen final_events = seen();
  EXPECT_EQ(final_events.gone, 4) << final_events.text;
  EXPECT_EQ(final_events.appeared, 5) << final_events.text;

  // The last ticks sampled nine GPUs (GPU 8's temperature is in the history).
  auto m = RunGpudoctor({"history", "--db", dir.path() + "/history.db", "--metric",
                         "gpudoctor_gpu_temperature_celsius", "--gpu", "8", "--json"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("62"), std::string::npos) << m.out;
}

TEST(WatchE2eTest, SighupWithBrokenConfigKeepsTheOldOne) {
  TempDir dir;
  dir.Write("gpudoctor.toml", kFastLifecycle);
  std::string scenario = dir.path() + "/live.scenario";
  WriteScenario(scenario, "h100_busy.scenario");
  std::string err = dir.path() + "/err.log";
  Daemon d = Start(WatchArgs(dir, "0.3"), scenario, err);
  // Started: the config is read and SIGHUP is blocked for the loop (not the default action).
  EXPECT_TRUE(Eventually([&] { return LogHas(err, "]: started: interval"); })) << ReadLog(err);
  dir.Write("gpudoctor.toml", "[watch]\ninterval_s = \"fast\"\n");
  kill(d.pid, SIGHUP);
  EXPECT_TRUE(Eventually([&] { return LogHas(err, "config reload rejected"); })) << ReadLog(err);
  EXPECT_EQ(waitpid(d.pid, nullptr, WNOHANG), 0) << "a bad config must not stop the daemon";
  kill(d.pid, SIGINT);
  EXPECT_EQ(d.Wait(std::chrono::seconds(10)), 0);
  std::string log = testing::ReadFileOrDie(dir.path() + "/err.log");
  EXPECT_NE(log.find("<3>gpudoctor[watch]: config reload rejected, keeping the old one"),
            std::string::npos)
      << log;
}

TEST(WatchE2eTest, BadDbPathsAndFlagsExit3NamingThem) {
  TempDir dir;
  dir.Write("file", "x");
  auto r = RunGpudoctor({"watch", "--ticks", "1", "--db", dir.path() + "/file/sub/history.db",
                         "--probes", "cpu", "--listen", "off"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find(dir.path() + "/file"), std::string::npos) << r.err;
  auto bad = RunGpudoctor({"watch", "--interval", "0", "--probes", "cpu", "--listen", "off"});
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.err.find("--interval"), std::string::npos) << bad.err;
}

// An address that was asked for (--listen or [watch] listen) and cannot be bound is fatal: exit
// 3 at once, naming the address and why, before any tick (Prometheus would scrape nothing).
TEST(WatchE2eTest, ListenOnBusyPortExits3) {
  uint16_t port = 0;
  int fd = testing::BindLoopback(4, &port);
  ASSERT_GE(fd, 0);
  std::string addr = "127.0.0.1:" + std::to_string(port);
  auto r = RunGpudoctor({"watch", "--no-db", "--ticks", "50", "--interval", "0.2", "--probes",
                         "cpu", "--listen", addr},
                        std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("gpudoctor: cannot listen on " + addr + ": in use"), std::string::npos)
      << r.err;
  EXPECT_LT(r.seconds, 5);
  TempDir dir;
  dir.Write("gpudoctor.toml", "[watch]\nlisten = \"" + addr + "\"\n");
  auto c = RunGpudoctor({"watch", "--no-db", "--ticks", "50", "--interval", "0.2", "--probes",
                         "cpu", "--config", dir.path() + "/gpudoctor.toml"},
                        std::chrono::seconds(20));
  EXPECT_EQ(c.exit_code, 3) << c.err;
  EXPECT_NE(c.err.find("cannot listen on " + addr + ": in use"), std::string::npos) << c.err;
  ::close(fd);
}

TEST(WatchE2eTest, TicksRunWithoutHistoryAndStopAfterN) {
  auto r = RunGpudoctor({"watch", "--no-db", "--ticks", "3", "--interval", "0.2", "--probes",
                         "cpu,memory", "--listen", "127.0.0.1:0"},
                        std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("history off"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 5);
}

}  // namespace
}  // namespace gpudoctor
