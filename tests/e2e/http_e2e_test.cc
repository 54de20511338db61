// End-to-end: /metrics, alerting and the JSON API of the real `gpudoctor watch` (fake NVML, the
// scenario file rewritten mid-run to inject and clear a fault) against real Debian engines:
// promtool lints the exposition, Prometheus scrapes it (up == 1, a GPU series through its query
// API), Alertmanager receives a gpudoctor alert when GPU 3 overheats and sees it resolve when it
// cools, a local webhook receiver gets firing and resolved payloads. Engines that are not
// installed skip their test.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "atomic_file.h"
#include "child_process.h"
#include "core/time_spec.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using json = nlohmann::json;
using testing::FixturePath;
using testing::RunProgram;

std::string BuildPath(const std::string& rel) { return std::string(GPUDOCTOR_BUILD_DIR) + rel; }

using testing::FreePort;
using Child = testing::ChildProcess;

bool WaitFor(const std::function<bool()>& cond, double timeout_s) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(int(timeout_s * 1000));
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return cond();
}

// GPU 3 overheating opens gpu.thermal at once and clearing it resolves it after 1 s.
const char* kFastLifecycle =
    "[finding.\"gpu.thermal\"]\nfor_s = 0\nresolve_after_s = 1\n"
    "[finding.\"gpu.hw_slowdown\"]\nfor_s = 0\nresolve_after_s = 1\n";

// A webhook receiver on 127.0.0.1: keeps every POSTed body (parsed JSON) to /hook. Stops and
// joins its thread when destroyed.
class WebhookReceiver {
 public:
  WebhookReceiver() {
    server_.Post("/hook", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      bodies_.push_back(json::parse(req.body, nullptr, false));
      res.set_content("ok", "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~WebhookReceiver() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  std::vector<json> Bodies() {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<json> bodies_;
};

class HttpE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/http_e2e_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    watch_.reset();
    std::filesystem::remove_all(dir_);
  }
  // The live scenario the fake NVML re-reads when it changes (atomic rename).
  void SetScenario(const std::string& base) {
    testing::WriteScenario(dir_ + "/live.scenario", base);
  }
  // Starts `gpudoctor watch --interval 1` on 127.0.0.1:port_ with `config` added to the
  // [watch] listen line and the fast gpu.thermal lifecycle; waits for its first tick.
  void StartWatch(const std::string& scenario, const std::string& watch_keys,
                  const std::string& tables = "") {
    port_ = FreePort();
    SetScenario(scenario);
    std::ofstream(dir_ + "/gpudoctor.toml") << "[watch]\nlisten = \"127.0.0.1:" << port_ << "\"\n"
                                            << watch_keys << "\n"
                                            << kFastLifecycle << tables;
    watch_ = std::make_unique<Child>(
        std::vector<std::string>{GPUDOCTOR_BIN, "watch", "--interval", "1", "--config",
                                 dir_ + "/gpudoctor.toml", "--db", dir_ + "/h.db", "--probes",
                                 "nvml,pci_gpu", "--nvml-lib",
                                 BuildPath("/tests/fake_nvml/libnvidia-ml.so.1"), "--path.sysfs",
                                 FixturePath("sysfs/hgx_h100")},
        std::map<std::string, std::string>{{"FAKE_NVML_SCENARIO", dir_ + "/live.scenario"}},
        dir_ + "/watch.log");
    ASSERT_TRUE(WaitFor(
        [&] {
          int status = 0;
          Get("/healthz", &status);
          return status == 200;
        },
        30))
        << watch_->Log();
  }
  // The daemon's last completed tick (/healthz), -1 when it does not answer.
  int64_t LastTick() {
    int status = 0;
    json j = json::parse(Get("/healthz", &status), nullptr, false);
    return status == 200 && j.is_object() && j.contains("tick") ? j["tick"].get<int64_t>() : -1;
  }
  // Waits until `n` more ticks than now have completed (30 s: ticks stretch on a loaded machine).
  bool WaitForTicks(int n) {
    int64_t start = LastTick();
    return start >= 0 && WaitFor([&] { return LastTick() >= start + n; }, 30);
  }
  std::string Get(const std::string& path, int* status = nullptr) {
    httplib::Client c("127.0.0.1", port_);
    c.set_connection_timeout(1, 0);
    c.set_read_timeout(10, 0);
    auto r = c.Get(path.c_str());
    if (status) *status = r ? r->status : -1;
    return r ? r->body : "";
  }
  std::string dir_;
  int port_ = 0;
  std::unique_ptr<Child> watch_;
};

TEST_F(HttpE2eTest, MetricsArePromtoolCleanAndStatusIsCheckJson) {
  StartWatch("ecc_dbe.scenario", "dcgm_compat = true");
  int status = 0;
  std::string metrics;
  ASSERT_TRUE(WaitFor(
      [&] {
        metrics = Get("/metrics", &status);
        return metrics.find("gpudoctor_finding_active{id=\"gpu.ecc.dbe\",severity=\"crit\"") !=
               std::string::npos;
      },
      10))
      << metrics << watch_->Log();
  ASSERT_EQ(status, 200);
  EXPECT_NE(metrics.find("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID="), std::string::npos);
  if (std::filesystem::exists("/usr/bin/promtool")) {
    // gpudoctor's own families must lint clean; the DCGM twins keep dcgm-exporter's camelCase
    // labels (UUID, modelName, Hostname) and names on purpose, which promtool flags.
    std::string own;
    std::istringstream in(metrics);
    for (std::string line; std::getline(in, line);) {
      if (line.find("DCGM_") == std::string::npos) own += line + "\n";
    }
    auto r =
        RunProgram({"/usr/bin/promtool", "check", "metrics"}, std::chrono::seconds(30), {}, own);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    r = RunProgram({"/usr/bin/promtool", "check", "metrics"}, std::chrono::seconds(30), {},
                   metrics);
    std::istringstream problems(r.out + r.err);
    for (std::string line; std::getline(problems, line);) {
      if (line.empty()) continue;
      // dcgm-exporter types its counters (ECC, replays, remapped rows, energy) as counters
      // without "_total", as its own /metrics does.
      bool expected =
          line.rfind("DCGM_", 0) == 0 &&
          (line.find("camelCase") != std::string::npos ||
           line.find("should not include type 'counter'") != std::string::npos ||
           line.find("counter metrics should have \"_total\" suffix") != std::string::npos);
      EXPECT_TRUE(expected) << line;
    }
  }
  std::string st = Get("/api/v1/status", &status);
  ASSERT_EQ(status, 200);
  json j = json::parse(st);
  EXPECT_EQ(j["verdict"], "crit");
  EXPECT_TRUE(j.contains("probes"));
  json f = json::parse(Get("/api/v1/findings"));
  const json* dbe = nullptr;
  for (const auto& x : f["findings"]) {
    if (x["finding"]["id"] == "gpu.ecc.dbe") dbe = &x;
  }
  ASSERT_NE(dbe, nullptr) << f.dump(2);
  EXPECT_EQ((*dbe)["state"], "open");
  Get("/healthz", &status);
  EXPECT_EQ(status, 200);
  Get("/api/v1/history?metric=nope", &status);
  EXPECT_EQ(status, 400);
}

// `gpudoctor ack` from another process while the daemon runs: the daemon sees the marks file
// change and merges the acknowledgement within a poll (every 5 ticks), so /metrics says it.
TEST_F(HttpE2eTest, AnAckFromAnotherProcessShowsWithinAPoll) {
  StartWatch("ecc_dbe.scenario", "");
  std::string metrics;
  const std::string acked = "gpudoctor_finding_acknowledged{id=\"gpu.ecc.dbe\"";
  auto acked_is = [&](const char* value) {
    metrics = Get("/metrics");
    size_t at = metrics.find(acked);
    if (at == std::string::npos) return false;
    size_t end = metrics.find('\n', at);
    return metrics.substr(at, end - at).ends_with(std::string("} ") + value);
  };
  ASSERT_TRUE(WaitFor([&] { return acked_is("0"); }, 15)) << metrics << watch_->Log();
  // Past the daemon's first look (tick 5, which always asks), so only the marks bring it in early.
  ASSERT_TRUE(WaitFor([&] { return LastTick() >= 6; }, 30)) << watch_->Log();
  auto ack =
      RunProgram({GPUDOCTOR_BIN, "ack", "gpu.ecc.dbe", "--note", "RMA 9", "--db", dir_ + "/h.db"},
                 std::chrono::seconds(30));
  ASSERT_EQ(ack.exit_code, 0) << ack.out << ack.err;
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/h.db-acks"));
  // Picked up on the next look at the marks (every 5 ticks of 1 s), not the 60-tick fallback.
  const auto asked = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return acked_is("1"); }, 20)) << metrics << watch_->Log();
  EXPECT_LT(std::chrono::steady_clock::now() - asked, std::chrono::seconds(15));
}

TEST_F(HttpE2eTest, PrometheusScrapesGpuSeries) {
  if (!std::filesystem::exists("/usr/bin/prometheus")) GTEST_SKIP() << "prometheus not installed";
  StartWatch("ecc_dbe.scenario", "");
  int prom_port = FreePort();
  std::ofstream(dir_ + "/prometheus.yml")
      << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
      << "  - job_name: gpudoctor\n    static_configs:\n      - targets: ['127.0.0.1:" << port_
      << "']\n";
  Child prom({"/usr/bin/prometheus", "--config.file=" + dir_ + "/prometheus.yml",
              "--storage.tsdb.path=" + dir_ + "/tsdb",
              "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
             {}, dir_ + "/prometheus.log");
  httplib::Client c("127.0.0.1", prom_port);
  c.set_read_timeout(5, 0);
  auto query = [&](const std::string& q) -> json {
    auto r = c.Get(("/api/v1/query?query=" + httplib::detail::encode_query_param(q)).c_str());
    if (!r || r->status != 200) return json();
    return json::parse(r->body, nullptr, false);
  };
  bool up = WaitFor(
      [&] {
        json j = query("up{job=\"gpudoctor\"} == 1");
        return j.is_object() && j["data"]["result"].size() == 1 &&
               j["data"]["result"][0]["value"][1] == "1";
      },
      60);
  ASSERT_TRUE(up) << prom.Log();
  json t = query("gpudoctor_gpu_temperature_celsius");
  ASSERT_GE(t["data"]["result"].size(), 1u) << t.dump();
  EXPECT_FALSE(t["data"]["result"][0]["metric"]["uuid"].get<std::string>().empty());
  json f = query("gpudoctor_finding_active{id=\"gpu.ecc.dbe\"}");
  ASSERT_EQ(f["data"]["result"].size(), 1u) << f.dump();
  EXPECT_EQ(f["data"]["result"][0]["metric"]["severity"], "crit");
}

TEST_F(HttpE2eTest, AlertmanagerAlertFiresAndResolvesWithTheFault) {
  const std::string am_bin = "/usr/bin/prometheus-alertmanager";
  if (!std::filesystem::exists(am_bin)) GTEST_SKIP() << "alertmanager not installed";
  int am_port = FreePort();
  std::ofstream(dir_ + "/am.yml") << "route:\n  receiver: 'null'\nreceivers:\n  - name: 'null'\n";
  Child am(
      {am_bin, "--config.file=" + dir_ + "/am.yml", "--storage.path=" + dir_ + "/am",
       "--web.listen-address=127.0.0.1:" + std::to_string(am_port), "--cluster.listen-address="},
      {}, dir_ + "/am.log");
  httplib::Client c("127.0.0.1", am_port);
  c.set_read_timeout(5, 0);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = c.Get("/-/ready");
        return r && r->status == 200;
      },
      30))
      << am.Log();
  StartWatch(
      "h100_busy.scenario", "",
      "\n[[notify.alertmanager]]\nurl = \"http://127.0.0.1:" + std::to_string(am_port) + "\"\n");
  auto alerts = [&]() -> json {
    auto r = c.Get("/api/v2/alerts");
    if (!r || r->status != 200) return json::array();
    return json::parse(r->body, nullptr, false);
  };
  auto thermal_firing = [&] {
    for (const auto& a : alerts()) {
      if (a["labels"]["id"] == "gpu.thermal" && a["labels"]["gpu"] == "3" &&
          a["labels"]["alertname"] == "GpudoctorFinding" && a["status"]["state"] == "active") {
        return true;
      }
    }
    return false;
  };
  // Two more ticks on the healthy scenario (counted, not slept): no alert may fire before the
  // fault.
  ASSERT_TRUE(WaitForTicks(2)) << watch_->Log();
  EXPECT_FALSE(thermal_firing()) << alerts().dump();
  SetScenario("thermal.scenario");  // GPU 3 overheats while watch runs
  ASSERT_TRUE(WaitFor(thermal_firing, 20)) << alerts().dump() << watch_->Log();
  SetScenario("h100_busy.scenario");  // and cools down
  EXPECT_TRUE(WaitFor([&] { return !thermal_firing(); }, 30)) << alerts().dump() << watch_->Log();
  std::string log = watch_->Log();
  EXPECT_NE(log.find("notify_sent alertmanager"), std::string::npos) << log;
  EXPECT_NE(log.find("resolved gpu.thermal gpu 3"), std::string::npos) << log;
}

// Issue 20 item 4: the same fault alerted by the shipped Prometheus rules and by watch's own
// Alertmanager notifier carries the same vocabulary: alertname, severity (Prometheus's words),
// finding, action, gpu, pci_bus_id, serial, hostname, layer, and the same runbook_url.
TEST_F(HttpE2eTest, RuleAndNotifierAlertsCarryTheSameLabels) {
  const std::string am_bin = "/usr/bin/prometheus-alertmanager";
  if (!std::filesystem::exists("/usr/bin/prometheus") || !std::filesystem::exists(am_bin)) {
    FAIL() << "prometheus or prometheus-alertmanager missing: run scripts/install-deps.sh";
  }
  int am_port = FreePort();
  std::ofstream(dir_ + "/am.yml") << "route:\n  receiver: 'null'\nreceivers:\n  - name: 'null'\n";
  Child am(
      {am_bin, "--config.file=" + dir_ + "/am.yml", "--storage.path=" + dir_ + "/am",
       "--web.listen-address=127.0.0.1:" + std::to_string(am_port), "--cluster.listen-address="},
      {}, dir_ + "/am.log");
  httplib::Client amc("127.0.0.1", am_port);
  amc.set_read_timeout(5, 0);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = amc.Get("/-/ready");
        return r && r->status == 200;
      },
      30))
      << am.Log();
  StartWatch(
      "ecc_dbe.scenario", "",
      "\n[[notify.alertmanager]]\nurl = \"http://127.0.0.1:" + std::to_string(am_port) + "\"\n");
  int prom_port = FreePort();
  std::ofstream(dir_ + "/prometheus.yml")
      << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - "
      << GPUDOCTOR_SOURCE_DIR << "/deploy/prometheus/gpudoctor.rules.yml\n"
      << "scrape_configs:\n  - job_name: gpudoctor\n    static_configs:\n      - targets: "
      << "['127.0.0.1:" << port_ << "']\n";
  Child prom({"/usr/bin/prometheus", "--config.file=" + dir_ + "/prometheus.yml",
              "--storage.tsdb.path=" + dir_ + "/tsdb",
              "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
             {}, dir_ + "/prometheus.log");
  httplib::Client pc("127.0.0.1", prom_port);
  pc.set_read_timeout(5, 0);
  auto find = [](const json& list, const std::string& state_key) -> json {
    if (!list.is_array()) return json();
    for (const auto& a : list) {
      if (a["labels"]["alertname"] == "GpudoctorFinding" && a["labels"]["id"] == "gpu.ecc.dbe" &&
          a["labels"]["severity"] == "critical" && !state_key.empty()) {
        return a;
      }
    }
    return json();
  };
  json rule, notified;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = pc.Get("/api/v1/alerts");
        if (!r || r->status != 200) return false;
        json j = json::parse(r->body, nullptr, false);
        if (!j.is_object()) return false;
        json a = find(j["data"]["alerts"], "state");
        if (a.is_null() || a["state"] != "firing") return false;
        rule = a;
        return true;
      },
      60))
      << prom.Log() << watch_->Log();
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = amc.Get("/api/v2/alerts");
        if (!r || r->status != 200) return false;
        notified = find(json::parse(r->body, nullptr, false), "status");
        return !notified.is_null();
      },
      30))
      << watch_->Log();
  for (const char* k : {"alertname", "severity", "finding", "id", "action", "layer", "gpu",
                        "pci_bus_id", "serial", "hostname"}) {
    ASSERT_TRUE(notified["labels"].contains(k)) << k << " " << notified.dump(2);
    EXPECT_EQ(rule["labels"][k], notified["labels"][k])
        << k << "\nrule: " << rule.dump(2) << "\nnotifier: " << notified.dump(2);
  }
  EXPECT_EQ(rule["labels"]["action"], "drain_reset");
  EXPECT_EQ(rule["annotations"]["runbook_url"], notified["annotations"]["runbook_url"]);
}

TEST_F(HttpE2eTest, WebhookSeesFiringAndResolved) {
  WebhookReceiver rx;
  StartWatch("h100_busy.scenario", "", "\n[[notify.webhook]]\nurl = \"" + rx.url() + "\"\n");
  // Index of the first payload with `status` that carries gpu.thermal on GPU 3 (GPU 2 of the
  // scenario runs warm too and may ride in the same payload), and that alert.
  auto thermal = [&](const char* status, json* alert = nullptr) {
    std::vector<json> got = rx.Bodies();
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i]["status"] != status) continue;
      for (const auto& a : got[i]["alerts"]) {
        if (a["labels"]["id"] == "gpu.thermal" && a["labels"]["gpu"] == "3") {
          if (alert) *alert = a;
          return static_cast<int>(i);
        }
      }
    }
    return -1;
  };
  SetScenario("thermal.scenario");
  bool fired = WaitFor([&] { return thermal("firing") >= 0; }, 20);
  SetScenario("h100_busy.scenario");
  bool resolved = fired && WaitFor([&] { return thermal("resolved") >= 0; }, 20);
  ASSERT_TRUE(fired) << watch_->Log();
  ASSERT_TRUE(resolved) << watch_->Log();
  json firing, res;
  EXPECT_EQ(rx.Bodies()[thermal("firing", &firing)]["version"], "4");
  EXPECT_EQ(firing["status"], "firing");
  EXPECT_FALSE(firing["annotations"]["next_steps"].get<std::string>().empty());
  thermal("resolved", &res);
  EXPECT_EQ(res["status"], "resolved");
  EXPECT_NE(res["endsAt"], "0001-01-01T00:00:00Z");
  EXPECT_LT(thermal("firing"), thermal("resolved"));
}

TEST_F(HttpE2eTest, TokenFromFile) {
  std::string tf = dir_ + "/token";
  std::ofstream(tf) << "e2e-token\n";
  std::filesystem::permissions(
      tf, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  // /healthz needs no token: StartWatch's wait works unchanged.
  StartWatch("h100_busy.scenario", "token_file = \"" + tf + "\"");
  int status = 0;
  Get("/metrics", &status);
  EXPECT_EQ(status, 401);
  Get("/healthz", &status);
  EXPECT_EQ(status, 200);
  httplib::Client c("127.0.0.1", port_);
  c.set_bearer_token_auth("e2e-token");
  auto r = c.Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body.find("e2e-token"), std::string::npos);
}

// The real daemon: `gpudoctor watch` with [watch] listen, dcgm_compat and a [[notify.webhook]]
// from the config file serves /metrics and the history, and the webhook sees the finding open.
TEST_F(HttpE2eTest, RealWatchServesMetricsHistoryAndNotifies) {
  WebhookReceiver rx;
  port_ = FreePort();
  std::ofstream(dir_ + "/gpudoctor.toml")
      << "[watch]\nlisten = \"127.0.0.1:" << port_ << "\"\ndcgm_compat = true\n\n"
      << "[[notify.webhook]]\nurl = \"" << rx.url() << "\"\nmin_severity = \"crit\"\n";
  watch_ = std::make_unique<Child>(
      std::vector<std::string>{GPUDOCTOR_BIN, "watch", "--config", dir_ + "/gpudoctor.toml", "--db",
                               dir_ + "/h.db", "--probes", "nvml,pci_gpu", "--nvml-lib",
                               BuildPath("/tests/fake_nvml/libnvidia-ml.so.1"), "--path.sysfs",
                               FixturePath("sysfs/hgx_h100")},
      std::map<std::string, std::string>{
          {"FAKE_NVML_SCENARIO", FixturePath("nvml/ecc_dbe.scenario")}},
      dir_ + "/watch.log");
  ASSERT_TRUE(
      WaitFor([&] { return watch_->Log().find("http: listening") != std::string::npos; }, 30))
      << watch_->Log();
  bool notified = WaitFor([&] { return !rx.Bodies().empty(); }, 20);
  ASSERT_TRUE(notified) << watch_->Log();
  std::vector<json> got = rx.Bodies();
  EXPECT_EQ(got[0]["status"], "firing");
  EXPECT_EQ(got[0]["alerts"][0]["labels"]["id"], "gpu.ecc.dbe");
  int status = 0;
  std::string metrics = Get("/metrics", &status);
  EXPECT_EQ(status, 200);
  EXPECT_NE(metrics.find("gpudoctor_finding_active{id=\"gpu.ecc.dbe\""), std::string::npos);
  EXPECT_NE(metrics.find("DCGM_FI_DEV_GPU_TEMP{"), std::string::npos);
  Get("/healthz", &status);
  EXPECT_EQ(status, 200);
  // The history store writes behind the ticks: poll until a point is there.
  json h;
  ASSERT_TRUE(WaitFor(
      [&] {
        h = json::parse(
            Get("/api/v1/history?metric=gpudoctor_gpu_temperature_celsius&gpu=0&since=1h", &status),
            nullptr, false);
        return status == 200 && h.is_object() && h["points"].size() >= 1;
      },
      20))
      << h.dump();
  EXPECT_EQ(status, 200);
  EXPECT_GE(h["points"].size(), 1u) << h.dump();
  EXPECT_TRUE(
      WaitFor([&] { return watch_->Log().find("notify_sent webhook") != std::string::npos; }, 10))
      << watch_->Log();
}

// Quiet ticks reach the history file in batches (StoreOptions::commit_interval_ms, 5 s), but the
// API's history answers up to the tick /api/v1/status shows: the request has the store commit
// what it queued first. Without that, three requests 1.3 s apart would each miss the newest
// ticks of a 5-s batch.
TEST_F(HttpE2eTest, HistoryApiAnswersUpToTheLatestTickThoughQuietTicksAreCommittedInBatches) {
  StartWatch("h100_busy.scenario", "");
  ASSERT_TRUE(WaitForTicks(3)) << watch_->Log();
  for (int round = 0; round < 3; ++round) {
    int status = 0;
    json report = json::parse(Get("/api/v1/status", &status), nullptr, false);
    ASSERT_EQ(status, 200);
    ASSERT_TRUE(report.is_object() && report.contains("time")) << report.dump();
    std::optional<int64_t> tick_s = ParseRfc3339(report["time"].get<std::string>());
    ASSERT_TRUE(tick_s.has_value()) << report["time"];
    json h = json::parse(
        Get("/api/v1/history?metric=gpudoctor_gpu_temperature_celsius&gpu=0&since=1h", &status),
        nullptr, false);
    ASSERT_EQ(status, 200) << h.dump();
    ASSERT_TRUE(h.is_object() && !h["points"].empty()) << h.dump();
    EXPECT_GE(h["points"].back()[0].get<int64_t>(), *tick_s)
        << "round " << round << ": " << h.dump();
    std::this_thread::sleep_for(std::chrono::milliseconds(1300));
  }
}

}  // namespace
}  // namespace gpudoctor

namespace gpudoctor {
namespace {

// The history file deleted under a running watch (logrotate, an operator's rm): writes must not
// go on into the unlinked inode. The daemon reopens a new file, says so in /healthz and as a
// gpudoctor.* finding, and the new file holds the ticks that follow.
TEST_F(HttpE2eTest, DeletedDatabaseIsReopenedAndHealthzSaysDegraded) {
  StartWatch("h100_busy.scenario", "");
  std::string db = dir_ + "/h.db";
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(db); }, 10));
  std::filesystem::remove(db);
  std::filesystem::remove(db + "-wal");
  std::filesystem::remove(db + "-shm");
  std::string health;
  ASSERT_TRUE(WaitFor(
      [&] {
        health = Get("/healthz");
        return health.find("\"history\":\"degraded\"") != std::string::npos;
      },
      15))
      << health << watch_->Log();
  EXPECT_NE(health.find("reopened"), std::string::npos) << health;
  std::string status;
  ASSERT_TRUE(WaitFor(
      [&] {
        status = Get("/api/v1/status");
        return status.find("gpudoctor.history.replaced") != std::string::npos;
      },
      10))
      << status;
  ASSERT_TRUE(std::filesystem::exists(db)) << watch_->Log();
  auto h = testing::RunGpudoctor({"history", "--db", db, "--events", "--since", "1h", "--json"});
  EXPECT_EQ(h.exit_code, 0) << h.err;
  EXPECT_NE(h.out.find("history_reopened"), std::string::npos) << h.out;
}

}  // namespace
}  // namespace gpudoctor
